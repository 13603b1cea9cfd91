/*
 * ic_op_attention.h — where the interest is in an image (smart crop), and cutting a window
 * placed by gravity or by that interest.
 */
#ifndef IC_OP_ATTENTION_H
#define IC_OP_ATTENTION_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"
#include "ic_op_gravity.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Cells along each axis of the grid ic_attention_window scores (fewer on a smaller image). */
#define IC_ATTENTION_GRID 32u

/**
 * The top-left corner (*x, *y) of the crop_w x crop_h window (each side clamped to the image)
 * with the most interest in the first frame of `src`. The definition (libvips's attention
 * idea, our own arithmetic):
 *  1. The frame is cut into a grid of IC_ATTENTION_GRID x IC_ATTENTION_GRID cells (fewer
 *     where a side has fewer pixels); each cell is the mean of at most 4 x 4 evenly spread
 *     premultiplied pixels, so the cost does not grow with the image.
 *  2. Each cell scores 5 |Laplacian| of its luminance (linear-light Y, 0...100; the four
 *     neighbouring cells, borders replicated), plus — unless its straight colour's Y is 5 or
 *     less, and weighted by its alpha — its chroma (max - min of the straight sRGB levels,
 *     scaled to 0...100) and its skin tone (0...100, rising as the colour's direction nears
 *     (0.78, 0.57, 0.44) from a cosine of 0.95).
 *  3. The scores are blurred by a Gaussian of sigma max(1, the window's diagonal in cells / 10)
 *     (edges extended) and the window is centred on the highest blurred cell (the first in
 *     raster order), kept inside the image. A frame scoring nothing gets the centred window.
 * Integer arithmetic throughout but for the kernel's weights. Fails with
 * IC_ERR_INVALID_ARGUMENT for a zero side and IC_ERR_CANCELLED once `cancel_flag` (may be
 * NULL) is set.
 */
ic_status ic_attention_window(const ic_image *src, uint32_t crop_w, uint32_t crop_h,
                              const int *cancel_flag, uint32_t *x, uint32_t *y, ic_error *err);

/**
 * Cuts a width x height window (each side clamped to the image) of every frame of `src`:
 * placed by `gravity` (ic_gravity_place, offsets rounded to whole pixels), or with
 * `gravity` NULL by ic_attention_window. Frame delays, loop count and the other metadata are
 * kept. A zero side fails with IC_ERR_INVALID_ARGUMENT.
 */
ic_status ic_crop_placed(const ic_image *src, uint32_t width, uint32_t height, const ic_gravity *gravity,
                         const int *cancel_flag, ic_image **out, ic_error *err);

/**
 * Fills the width x height box (both sides non-zero) as ic_resize with IC_RESIZE_FILL does,
 * the window chosen by attention: resizes to cover the box without cutting, then cuts the
 * window ic_attention_window picks in the resized image. `use_helper_thread` as in
 * ic_resize_with_helper.
 */
ic_status ic_fill_smart(const ic_image *src, uint32_t width, uint32_t height, int allow_upscale,
                        int use_helper_thread, const int *cancel_flag, ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_ATTENTION_H */
