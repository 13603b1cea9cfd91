/*
 * ic_op_sharpen.h — unsharp mask of premultiplied RGBA8 images.
 *
 * The classic unsharp mask of Photoshop, GIMP, ImageMagick (-unsharp) and Pillow
 * (UnsharpMask): with B the Gaussian blur of the image (ic_blur's kernel, `sigma`)
 * and d = pixel - B per colour channel,
 *
 *     out = pixel + amount * d   where |d| > threshold,   out = pixel elsewhere,
 *
 * rounded and clamped. Colours are compared in straight (unpremultiplied) terms: B
 * is the blurred colour of the neighbours weighted by their alpha, so transparent
 * pixels neither darken nor lighten an edge, and alpha itself is kept as it is.
 * Every frame of an animation is sharpened alike.
 */
#ifndef IC_OP_SHARPEN_H
#define IC_OP_SHARPEN_H

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest amount ic_sharpen accepts (10: a difference is added ten times over). */
#define IC_SHARPEN_MAX_AMOUNT 10.0

/**
 * Sharpens every frame of `src`: `sigma` as ic_blur's (0 < sigma <= IC_BLUR_MAX_SIGMA),
 * `amount` the gain on the difference (0 <= amount <= IC_SHARPEN_MAX_AMOUNT; 1 = 100 %),
 * `threshold` the smallest difference, in levels 0...255, that is sharpened (0: all).
 * `cancel_flag` as ic_blur's. Bad parameters fail with IC_ERR_INVALID_ARGUMENT.
 */
ic_status ic_sharpen(const ic_image *src, double sigma, double amount, int threshold,
                     const int *cancel_flag, ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_SHARPEN_H */
