/* tint.c — source-atop of a colour over an image, on premultiplied pixels, in 16-bit fixed point. */
#include "ic_op_tint.h"

#include "ic_color_ops_internal.h"

/* One row: out = (k * a + m * p + 2^15) >> 16 per colour, alpha kept. k[c] is the
 * tint's premultiplied colour over 255 and m one minus the tint's alpha, both in Q16. */
static void tint_row(uint8_t *restrict dst, const uint8_t *restrict src, uint32_t width,
                     const uint32_t k[3], uint32_t m) {
    uint32_t k0 = k[0], k1 = k[1], k2 = k[2];
    for (uint32_t x = 0; x < width; x++) {
        uint32_t a = src[4 * x + 3];
        uint32_t r = (k0 * a + m * src[4 * x] + 32768u) >> 16;
        uint32_t g = (k1 * a + m * src[4 * x + 1] + 32768u) >> 16;
        uint32_t b = (k2 * a + m * src[4 * x + 2] + 32768u) >> 16;
        dst[4 * x] = (uint8_t)(r < a ? r : a);
        dst[4 * x + 1] = (uint8_t)(g < a ? g : a);
        dst[4 * x + 2] = (uint8_t)(b < a ? b : a);
        dst[4 * x + 3] = (uint8_t)a;
    }
}

ic_status ic_tint(const ic_image *src, const uint8_t rgba[4], const int *cancel_flag, ic_image **out,
                  ic_error *err) {
    if (!rgba) {
        if (out) *out = NULL;
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "tint: NULL colour");
    }
    ic_image *dst;
    ic_status st = ic__op_create_like(src, "tint", &dst, err);
    if (st != IC_OK) return st;
    /* k = T * ta / 255 / 255 and m = (255 - ta) / 255, rounded to Q16 (at most 65536). */
    uint32_t k[3];
    for (int c = 0; c < 3; c++) {
        k[c] = (uint32_t)(((uint64_t)rgba[c] * rgba[3] * 65536u + 32512u) / 65025u);
    }
    uint32_t m = (uint32_t)(((uint64_t)(255u - rgba[3]) * 65536u + 127u) / 255u);
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t y = 0; y < src->height; y++) {
            if (ic__op_cancelled(cancel_flag, y, "tint", dst, err)) return IC_ERR_CANCELLED;
            tint_row(to + (size_t)y * dst->stride, from + (size_t)y * src->stride, src->width, k, m);
        }
    }
    *out = dst;
    return IC_OK;
}
