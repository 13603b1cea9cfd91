/*
 * ic_op_composite.h — an overlay (watermark): a mark drawn "over" every frame of an image,
 * once or tiled, with an opacity.
 */
#ifndef IC_OP_COMPOSITE_H
#define IC_OP_COMPOSITE_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"
#include "ic_op_gravity.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest offset ic_composite accepts on either axis, in pixels (either sign). */
#define IC_COMPOSITE_MAX_OFFSET 1048576
/** Largest gap between tiles ic_composite accepts, in pixels. */
#define IC_COMPOSITE_MAX_SPACING 65536u

/** Where and how the mark is drawn. */
typedef struct ic_composite_options {
    /** Where the mark sits on the image (ic_gravity_place), before the offsets. */
    ic_gravity gravity;
    /** Pixels away from the edge the gravity names (imgproxy's x/y offsets): east moves the
     *  mark left, south moves it up; along an axis the gravity centres (or a focal point),
     *  positive moves right or down. Within ±IC_COMPOSITE_MAX_OFFSET. */
    int32_t offset_x, offset_y;
    /** How much of the mark shows, 0…1 (0 leaves the image as it is). */
    double opacity;
    /** 0: one mark; 1: the mark repeated over the whole image, one tile where the single mark
     *  would be and the others every mark width + spacing across and mark height + spacing down. */
    int tile;
    /** Pixels between two tiles, on both axes, 0…IC_COMPOSITE_MAX_SPACING (used only when tiling). */
    uint32_t spacing;
} ic_composite_options;

/**
 * Draws `mark` (its first frame) over every frame of `base` with Porter-Duff "over" on
 * premultiplied pixels, weighted by the opacity o:
 * out = mark * o + base * (1 - alpha_mark * o / 255), in 16-bit fixed point (within one
 * level of the exact value). The parts of the mark outside the image are clipped. The
 * result has the base's size, frames and metadata; it is opaque when the base is, or when an
 * opaque mark at full opacity covers it all. Scale the mark beforehand (ic_resize).
 * Fails with IC_ERR_INVALID_ARGUMENT for an opacity outside 0…1 or not finite, an offset or
 * spacing beyond its bound, or a NULL image. `cancel_flag` may be NULL; when it reads
 * non-zero the call stops with IC_ERR_CANCELLED.
 */
ic_status ic_composite(const ic_image *base, const ic_image *mark, const ic_composite_options *options,
                       const int *cancel_flag, ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_COMPOSITE_H */
