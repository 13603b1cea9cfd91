/*
 * ic_op_tint.h — tinting an image with a colour (SDWebImage's SDImageTintTransformer).
 */
#ifndef IC_OP_TINT_H
#define IC_OP_TINT_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Draws the colour (red, green, blue, alpha; straight, not premultiplied) over every frame
 * of `src` in Core Graphics' source-atop mode: the image's alpha is kept, and each colour
 * becomes a mix of the tint and the image, the tint weighing its alpha:
 * out = tint * alpha_tint * alpha_image + image * (1 - alpha_tint), on premultiplied pixels
 * (the mode is linear there, so nothing is un-premultiplied). An opaque tint gives a
 * silhouette in the tint colour. `cancel_flag` may be NULL; when it reads non-zero the call
 * stops with IC_ERR_CANCELLED.
 */
ic_status ic_tint(const ic_image *src, const uint8_t rgba[4], const int *cancel_flag, ic_image **out,
                  ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_TINT_H */
