/*
 * ic_color_ops_internal.h — what the pixel-for-pixel operations (corners, tint, colour
 * adjust, pixelate) share: a result shaped like the source, and the cancellation check.
 * Not installed.
 */
#ifndef IC_COLOR_OPS_INTERNAL_H
#define IC_COLOR_OPS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../image/ic_image_internal.h"
#include "ic_decode.h"

/** Rows between two reads of the cancel flag. */
#define IC_OP_CANCEL_ROWS 16u

/**
 * Creates *out with the size and frame count of `src` (from its pool) and its metadata
 * (as ic_crop keeps it) and opacity. `op` names the operation in error messages.
 */
static inline ic_status ic__op_create_like(const ic_image *src, const char *op, ic_image **out,
                                          ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "%s: NULL argument", op);
    *out = NULL;
    ic_image *dst;
    ic_status st = ic__image_create_in(src->ic_pool, src->width, src->height, src->frame_count, &dst, err);
    if (st != IC_OK) return st;
    ic__image_copy_metadata(dst, src);
    dst->is_opaque = src->is_opaque;
    *out = dst;
    return IC_OK;
}

/**
 * True, with `dst` freed and the error set, when row `y` is a checkpoint and the caller has
 * cancelled.
 */
static inline bool ic__op_cancelled(const int *cancel_flag, uint32_t y, const char *op,
                                   ic_image *dst, ic_error *err) {
    if (!cancel_flag || y % IC_OP_CANCEL_ROWS != 0 || !ic_cancel_flag_get(cancel_flag)) return false;
    ic_image_free(dst);
    ic__set_error(err, IC_ERR_CANCELLED, "%s: cancelled", op);
    return true;
}

#endif /* IC_COLOR_OPS_INTERNAL_H */
