/*
 * ic_op_pixelate.h — pixelation: the image as blocks of one colour.
 */
#ifndef IC_OP_PIXELATE_H
#define IC_OP_PIXELATE_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest block side ic_pixelate accepts, in pixels. */
#define IC_PIXELATE_MAX_BLOCK 65536u

/**
 * Splits every frame of `src` into squares of `block` x `block` pixels from the top-left
 * corner (the last row and column of squares may be cut by the edge) and fills each with the
 * average of its premultiplied pixels, rounded to nearest (so transparent pixels add no
 * colour). `block` must be within 1…IC_PIXELATE_MAX_BLOCK; one larger than the image makes the whole frame one
 * block. `cancel_flag` may be NULL.
 */
ic_status ic_pixelate(const ic_image *src, uint32_t block, const int *cancel_flag, ic_image **out,
                      ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_PIXELATE_H */
