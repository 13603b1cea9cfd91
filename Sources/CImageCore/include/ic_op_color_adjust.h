/*
 * ic_op_color_adjust.h — grayscale, and brightness / contrast / saturation as CSS defines them.
 */
#ifndef IC_OP_COLOR_ADJUST_H
#define IC_OP_COLOR_ADJUST_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest brightness, contrast or saturation ic_color_adjust accepts. */
#define IC_COLOR_ADJUST_MAX 100.0

/**
 * Replaces each colour of every frame of `src` by its Rec. 709 luma,
 * Y = 0.2126 R + 0.7152 G + 0.0722 B, on the sRGB-encoded values (as CSS grayscale(1) and
 * SDWebImage's filters do, not libvips's linear-light luminance); alpha is kept. Luma is
 * linear, so it is taken on premultiplied pixels directly. `cancel_flag` may be NULL.
 */
ic_status ic_grayscale(const ic_image *src, const int *cancel_flag, ic_image **out, ic_error *err);

/**
 * Applies CSS's brightness(b), then contrast(c), then saturate(s) to every frame of `src`,
 * each clamped to 0…1 as the CSS filter chain does:
 * brightness v' = b v; contrast v' = c (v - 0.5) + 0.5; saturate the feColorMatrix of
 * Filter Effects 1 (Rec. 709 weights 0.213, 0.715, 0.072). 1, 1, 1 changes nothing; each
 * must be within 0…IC_COLOR_ADJUST_MAX. Each step is affine in colour and alpha, so it runs
 * on premultiplied pixels (0.5 becomes half the alpha, and 1 the alpha); alpha is kept.
 * `cancel_flag` may be NULL.
 */
ic_status ic_color_adjust(const ic_image *src, double brightness, double contrast, double saturation,
                          const int *cancel_flag, ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_COLOR_ADJUST_H */
