/*
 * blur.c — ic_blur: the Gaussian engine's rows rounded back to 8 bits.
 */
#include <string.h>

#include "../image/ic_image_internal.h"
#include "ic_blur_internal.h"
#include "ic_op_blur.h"

static const char *const WHAT = "blur";

typedef struct blur_target {
    uint8_t *frame;
    size_t stride;
    size_t n;
} blur_target;

/* Row y of the result: each value rounded from its 24 fractional bits. */
static void store_row(void *ctx, uint32_t y, const uint32_t *restrict blurred) {
    const blur_target *t = ctx;
    uint8_t *restrict row = t->frame + (size_t)y * t->stride;
    for (size_t i = 0; i < t->n; i++) {
        row[i] = (uint8_t)((blurred[i] + (1u << (IC_GAUSS_OUT_BITS - 1))) >> IC_GAUSS_OUT_BITS);
    }
}

ic_status ic_blur(const ic_image *src, double sigma, const int *cancel_flag, ic_image **out,
                  ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "blur: NULL argument");
    *out = NULL;
    ic__gauss_kernel k;
    ic_status st = ic__gauss_kernel_make(sigma, WHAT, &k, err);
    if (st != IC_OK) return st;
    ic_image *dst;
    st = ic__image_create_in(src->ic_pool, src->width, src->height, src->frame_count, &dst, err);
    if (st != IC_OK) {
        ic__gauss_kernel_free(&k);
        return st;
    }
    for (uint32_t f = 0; f < src->frame_count && st == IC_OK; f++) {
        if (k.radius == 0) {
            memcpy(ic_image_frame(dst, f), ic_image_frame(src, f), src->frame_size);
            continue;
        }
        blur_target t = {ic_image_frame(dst, f), dst->stride, 4 * (size_t)src->width};
        st = ic__gauss_frame(ic_image_frame(src, f), src->stride, src->width, src->height, &k,
                            cancel_flag, WHAT, store_row, &t, err);
    }
    ic__gauss_kernel_free(&k);
    if (st != IC_OK) {
        ic_image_free(dst);
        return st;
    }
    ic__image_copy_metadata(dst, src);
    /* Taps sum to one exactly, so an opaque source stays opaque; otherwise count. */
    if (src->is_opaque) {
        dst->is_opaque = 1;
    } else {
        ic__image_update_opacity(dst);
    }
    *out = dst;
    return IC_OK;
}
