/*
 * ic_op_gravity.h — where a window sits in a larger (or smaller) area: the compass points,
 * the centre, or a focal point. Cropping, filling a box, padding and overlays all place by it.
 */
#ifndef IC_OP_GRAVITY_H
#define IC_OP_GRAVITY_H

#ifdef __cplusplus
extern "C" {
#endif

/** Which edge, corner or point a window is placed against. */
typedef enum ic_gravity_kind {
    IC_GRAVITY_CENTRE = 0,
    IC_GRAVITY_NORTH = 1,
    IC_GRAVITY_NORTH_EAST = 2,
    IC_GRAVITY_EAST = 3,
    IC_GRAVITY_SOUTH_EAST = 4,
    IC_GRAVITY_SOUTH = 5,
    IC_GRAVITY_SOUTH_WEST = 6,
    IC_GRAVITY_WEST = 7,
    IC_GRAVITY_NORTH_WEST = 8,
    /** The window is centred on (x, y), fractions of the area's width and height, as far as
     *  it can be while staying inside the area. */
    IC_GRAVITY_FOCUS = 9
} ic_gravity_kind;

/** A placement: a kind, and for IC_GRAVITY_FOCUS the focal point (fractions 0...1). */
typedef struct ic_gravity {
    ic_gravity_kind kind;
    double x, y;
} ic_gravity;

/**
 * The top-left corner (*x, *y) of an inner_w x inner_h window placed by `g` in an
 * outer_w x outer_h area. North puts the window's top edge on the area's, east its right
 * edge on the area's, and so on; the centre and the remaining axis are centred. When the
 * window is larger than the area the offset is negative or zero on that axis (the area is
 * then inside the window, placed alike). A focal point outside 0...1, or an unknown kind,
 * is read as the centre.
 */
void ic_gravity_place(const ic_gravity *g, double outer_w, double outer_h, double inner_w, double inner_h,
                      double *x, double *y);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_GRAVITY_H */
