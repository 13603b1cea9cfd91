/*
 * ic_op_blur.h — Gaussian blur of premultiplied RGBA8 images.
 *
 * The blur is separable: a 1-D Gaussian of standard deviation `sigma` runs down the
 * columns, then along the rows. The kernel is exp(-x²/2σ²) for the integer offsets x
 * where it is at least IC_BLUR_MIN_AMPLITUDE of its peak (radius ≈ 3.03σ), normalised
 * to sum 1; pixels past an edge repeat the edge pixel (libvips's extend-copy). All four
 * premultiplied channels are blurred alike, so transparent pixels never darken their
 * neighbours. Every frame of an animation is blurred alike.
 */
#ifndef IC_OP_BLUR_H
#define IC_OP_BLUR_H

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fraction of its peak below which the Gaussian kernel is cut off (1 %). */
#define IC_BLUR_MIN_AMPLITUDE 0.01

/** Largest sigma ic_blur and ic_sharpen accept, in pixels (a kernel of 607 taps). */
#define IC_BLUR_MAX_SIGMA 100.0

/**
 * Blurs every frame of `src` with a Gaussian of standard deviation `sigma` pixels
 * (0 < sigma <= IC_BLUR_MAX_SIGMA; a sigma under ~0.33 leaves the image unchanged).
 * `cancel_flag` may be NULL; when it reads non-zero (ic_cancel_flag_get) the call
 * stops within a few rows with IC_ERR_CANCELLED. A bad sigma fails with
 * IC_ERR_INVALID_ARGUMENT.
 */
ic_status ic_blur(const ic_image *src, double sigma, const int *cancel_flag, ic_image **out,
                  ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_BLUR_H */
