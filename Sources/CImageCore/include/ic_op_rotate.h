/*
 * ic_op_rotate.h — rotation of premultiplied RGBA8 images by any angle.
 */
#ifndef IC_OP_ROTATE_H
#define IC_OP_ROTATE_H

#include <stdint.h>

#include "ic_decode.h"
#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Rotates every frame of `src` by `degrees` clockwise on screen (as vips_rotate and
 * imgproxy; SDWebImage's `angle` is in radians counter-clockwise: degrees = -angle·180/π)
 * about the centre of the image.
 *
 * With `fit_size` non-zero the canvas grows to hold the whole rotated image:
 * ceil(W·|cos θ| + H·|sin θ|) x ceil(W·|sin θ| + H·|cos θ|) (less 1e-6 before rounding up);
 * with 0 it keeps the source size and the corners are cut. Output pixel centres are mapped
 * back into the source, which is extended past its edges with `background` (premultiplied
 * RGBA, 4 bytes), and sampled there with the Catmull-Rom bicubic (a = -0.5) on premultiplied
 * pixels, the fraction rounded to 1/1024 pixel; colours are clamped to 0…alpha. So the edge
 * of the image is anti-aliased against the background over about two pixels and never
 * darkens. A multiple of 90° that keeps every pixel (fit_size, or a half turn, or a
 * square image) moves the pixels exactly (ic_image_orient) instead.
 *
 * `limits` (NULL: ic_limits_init's defaults) bounds the result before it is allocated: more
 * than `max_pixels` pixels a frame, or more than `max_memory_bytes` of pixels in all, fails
 * with IC_ERR_LIMIT_EXCEEDED (a field of 0 is no limit). A non-finite angle fails with
 * IC_ERR_INVALID_ARGUMENT. `cancel_flag` may be NULL; when it reads non-zero the call stops
 * within a few rows with IC_ERR_CANCELLED.
 */
ic_status ic_rotate(const ic_image *src, double degrees, int fit_size, const uint8_t background[4],
                    const ic_limits *limits, const int *cancel_flag, ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_ROTATE_H */
