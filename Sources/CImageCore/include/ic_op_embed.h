/*
 * ic_op_embed.h — padding: every frame placed on a larger canvas of one background colour.
 */
#ifndef IC_OP_EMBED_H
#define IC_OP_EMBED_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Places every frame of `src` on a `width` x `height` canvas with its top-left corner at
 * (`x`, `y`); the rest of the canvas is `background`, a premultiplied RGBA pixel (no colour
 * above its alpha; {0, 0, 0, 0} is transparent). The image must lie inside the canvas. A canvas
 * of more than IC_DEFAULT_MAX_PIXELS pixels fails with IC_ERR_LIMIT_EXCEEDED before anything
 * is allocated. The result keeps the frame delays, loop count and other metadata; it is opaque
 * when the source is and the background is (or there is no border). `cancel_flag` may be NULL.
 */
ic_status ic_embed(const ic_image *src, uint32_t width, uint32_t height, uint32_t x, uint32_t y,
                   const uint8_t background[4], const int *cancel_flag, ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_EMBED_H */
