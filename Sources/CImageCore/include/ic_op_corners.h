/*
 * ic_op_corners.h — rounded corners with an optional border (SDWebImage's
 * SDImageRoundCornerTransformer).
 */
#ifndef IC_OP_CORNERS_H
#define IC_OP_CORNERS_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which corners ic_round_corners rounds (bits; SDWebImage's SDRectCorner). */
enum {
    IC_CORNER_TOP_LEFT = 1,
    IC_CORNER_TOP_RIGHT = 2,
    IC_CORNER_BOTTOM_LEFT = 4,
    IC_CORNER_BOTTOM_RIGHT = 8,
    IC_CORNER_ALL = 15
};

/**
 * Keeps the part of every frame of `src` inside a rounded rectangle: the image's rectangle
 * with the corners in `corners` (IC_CORNER_* bits) rounded to quarter circles of `radius`
 * pixels (at most half the shorter side; a larger radius is reduced to it). Outside it the
 * pixels become transparent.
 *
 * With `border_width` > 0 a border of that width in `border_rgba` (straight RGBA) lies along
 * the inside of the edge: between the shape and the same shape inset by the width (corner
 * radius reduced by the width, at least 0). The image shows only inside the inset shape, so a
 * translucent border shows transparency behind it, not the image. (SDWebImage clips the image
 * to the rectangle inset by the width and strokes a line of that width centred about a width
 * in, over the image, which leaves about half a width transparent outside its border; here the
 * border reaches the edge.)
 *
 * Edges are anti-aliased analytically: a pixel's coverage is 0.5 minus the signed distance
 * from its centre to the edge, clamped to 0…1 (exact for straight edges, within a few per cent
 * of the area for curves of a radius of a pixel or more). Coverage scales premultiplied
 * pixels, so edges have no dark fringe. `radius` and `border_width` must be finite and not
 * negative; `border_rgba` may be NULL when `border_width` is 0. `cancel_flag` may be NULL.
 */
ic_status ic_round_corners(const ic_image *src, double radius, uint32_t corners, double border_width,
                           const uint8_t border_rgba[4], const int *cancel_flag, ic_image **out,
                           ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_CORNERS_H */
