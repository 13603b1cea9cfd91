/*
 * sharpen.c — ic_sharpen: an unsharp mask over the Gaussian engine's rows.
 *
 * Per pixel of alpha a (kept as it is) and premultiplied colour c, with the blurred
 * row's colour bc and alpha ba: the neighbours' straight colour, premultiplied at this
 * pixel's alpha, is b = bc * a / ba; d = c - b; where |d| * 255 > threshold * a (the
 * difference in straight levels is above the threshold) the result is
 * c + amount * d rounded and clamped to 0...a, so it stays premultiplied.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "../image/ic_image_internal.h"
#include "ic_blur_internal.h"
#include "ic_op_blur.h"
#include "ic_op_sharpen.h"

static const char *const WHAT = "sharpen";

typedef struct sharpen_target {
    const uint8_t *src;
    size_t src_stride;
    uint8_t *dst;
    size_t dst_stride;
    uint32_t width;
    float amount;
    float threshold;
} sharpen_target;

/* A row whose pixels and blurred neighbours are all opaque: every value, alpha included
 * (its difference is 0), in one loop the compiler vectorises. */
static void sharpen_opaque_row(const uint8_t *restrict in, const uint32_t *restrict blurred,
                               uint8_t *restrict out, size_t n, float amount, float threshold) {
    const float unit = 1.0f / (float)(1u << IC_GAUSS_OUT_BITS);
    for (size_t i = 0; i < n; i++) {
        float v = in[i];
        float d = v - (float)blurred[i] * unit;
        /* Clamped first, so truncation rounds (no floorf: SSE2 has no vector floor). */
        float s = v + amount * d + 0.5f;
        s = s < 0 ? 0 : s > 255 ? 255 : s;
        out[i] = (uint8_t)(int32_t)(fabsf(d) > threshold ? s : v);
    }
}

/* True when every pixel of the row and of its blur is opaque. */
static bool row_opaque(const uint8_t *restrict in, const uint32_t *restrict blurred, uint32_t width) {
    uint32_t all = 255u << IC_GAUSS_OUT_BITS;
    bool opaque = true;
    for (uint32_t x = 0; x < width; x++) opaque &= in[4 * (size_t)x + 3] == 255 && blurred[4 * (size_t)x + 3] == all;
    return opaque;
}

/* Row y of the result from the source row and its blur. */
static void sharpen_row(void *ctx, uint32_t y, const uint32_t *restrict blurred) {
    const sharpen_target *t = ctx;
    const uint8_t *restrict in = t->src + (size_t)y * t->src_stride;
    uint8_t *restrict out = t->dst + (size_t)y * t->dst_stride;
    if (row_opaque(in, blurred, t->width)) {
        sharpen_opaque_row(in, blurred, out, 4 * (size_t)t->width, t->amount, t->threshold);
        return;
    }
    for (uint32_t x = 0; x < t->width; x++) {
        const uint8_t *p = in + 4 * (size_t)x;
        const uint32_t *b = blurred + 4 * (size_t)x;
        uint8_t *o = out + 4 * (size_t)x;
        float a = p[3];
        o[3] = p[3];
        float scale = b[3] ? a / (float)b[3] : 0;
        for (int c = 0; c < 3; c++) {
            float v = p[c];
            float d = b[3] ? v - (float)b[c] * scale : 0;
            if (fabsf(d) * 255 > t->threshold * a) {
                v = v + t->amount * d + 0.5f;
                v = v < 0 ? 0 : v > a ? a : (float)(int32_t)v;
            }
            o[c] = (uint8_t)v;
        }
    }
}

ic_status ic_sharpen(const ic_image *src, double sigma, double amount, int threshold,
                     const int *cancel_flag, ic_image **out, ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "sharpen: NULL argument");
    *out = NULL;
    if (!(amount >= 0) || !(amount <= IC_SHARPEN_MAX_AMOUNT)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "sharpen: amount %g is not between 0 and %g", amount, IC_SHARPEN_MAX_AMOUNT);
    }
    if (threshold < 0 || threshold > 255) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "sharpen: threshold %d is not a level between 0 and 255", threshold);
    }
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
        if (k.radius == 0 || amount == 0) {
            memcpy(ic_image_frame(dst, f), ic_image_frame(src, f), src->frame_size);
            continue;
        }
        sharpen_target t = {ic_image_frame(src, f), src->stride, ic_image_frame(dst, f), dst->stride,
                            src->width, (float)amount, (float)threshold};
        st = ic__gauss_frame(t.src, src->stride, src->width, src->height, &k, cancel_flag, WHAT,
                            sharpen_row, &t, err);
    }
    ic__gauss_kernel_free(&k);
    if (st != IC_OK) {
        ic_image_free(dst);
        return st;
    }
    ic__image_copy_metadata(dst, src);
    dst->is_opaque = src->is_opaque; /* alpha is copied unchanged */
    *out = dst;
    return IC_OK;
}
