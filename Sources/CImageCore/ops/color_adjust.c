/* color_adjust.c — grayscale (integer luma) and CSS brightness / contrast / saturate (float). */
#include "ic_op_color_adjust.h"

#include "ic_color_ops_internal.h"

/* Rec. 709 luma weights in Q16, summing to 65536 so that white stays white. */
enum { LUMA_R = 13933, LUMA_G = 46871, LUMA_B = 4732 };

static void gray_row(uint8_t *restrict dst, const uint8_t *restrict src, uint32_t width) {
    for (uint32_t x = 0; x < width; x++) {
        uint32_t y = (LUMA_R * (uint32_t)src[4 * x] + LUMA_G * (uint32_t)src[4 * x + 1] +
                      LUMA_B * (uint32_t)src[4 * x + 2] + 32768u) >> 16;
        uint8_t a = src[4 * x + 3];
        uint8_t v = (uint8_t)(y < a ? y : a);
        dst[4 * x] = v;
        dst[4 * x + 1] = v;
        dst[4 * x + 2] = v;
        dst[4 * x + 3] = a;
    }
}

ic_status ic_grayscale(const ic_image *src, const int *cancel_flag, ic_image **out, ic_error *err) {
    ic_image *dst;
    ic_status st = ic__op_create_like(src, "grayscale", &dst, err);
    if (st != IC_OK) return st;
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t y = 0; y < src->height; y++) {
            if (ic__op_cancelled(cancel_flag, y, "grayscale", dst, err)) return IC_ERR_CANCELLED;
            gray_row(to + (size_t)y * dst->stride, from + (size_t)y * src->stride, src->width);
        }
    }
    *out = dst;
    return IC_OK;
}

/* The three steps' constants: brightness factor, contrast factor and offset (times alpha),
 * and the saturation matrix (row-major). */
typedef struct adjust {
    float b, c, c_off;
    float m[9];
} adjust;

static inline float clamp_to(float v, float hi) { return v < 0.f ? 0.f : (v > hi ? hi : v); }

static void adjust_row(uint8_t *restrict dst, const uint8_t *restrict src, uint32_t width,
                       const adjust *restrict k) {
    const float b = k->b, c = k->c, off = k->c_off;
    const float m0 = k->m[0], m1 = k->m[1], m2 = k->m[2], m3 = k->m[3], m4 = k->m[4], m5 = k->m[5],
                m6 = k->m[6], m7 = k->m[7], m8 = k->m[8];
    for (uint32_t x = 0; x < width; x++) {
        float a = src[4 * x + 3];
        float r = clamp_to(b * src[4 * x], a), g = clamp_to(b * src[4 * x + 1], a),
              bl = clamp_to(b * src[4 * x + 2], a);
        r = clamp_to(c * r + off * a, a);
        g = clamp_to(c * g + off * a, a);
        bl = clamp_to(c * bl + off * a, a);
        float r2 = clamp_to(m0 * r + m1 * g + m2 * bl, a);
        float g2 = clamp_to(m3 * r + m4 * g + m5 * bl, a);
        float b2 = clamp_to(m6 * r + m7 * g + m8 * bl, a);
        dst[4 * x] = (uint8_t)(r2 + 0.5f);
        dst[4 * x + 1] = (uint8_t)(g2 + 0.5f);
        dst[4 * x + 2] = (uint8_t)(b2 + 0.5f);
        dst[4 * x + 3] = src[4 * x + 3];
    }
}

static bool in_range(double v) { return v >= 0 && v <= IC_COLOR_ADJUST_MAX; }

ic_status ic_color_adjust(const ic_image *src, double brightness, double contrast, double saturation,
                          const int *cancel_flag, ic_image **out, ic_error *err) {
    if (!in_range(brightness) || !in_range(contrast) || !in_range(saturation)) {
        if (out) *out = NULL;
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "color adjust: brightness %g, contrast %g and saturation %g must each be "
                            "within 0...%g (1 changes nothing)",
                            brightness, contrast, saturation, IC_COLOR_ADJUST_MAX);
    }
    ic_image *dst;
    ic_status st = ic__op_create_like(src, "color adjust", &dst, err);
    if (st != IC_OK) return st;
    const double s = saturation;
    adjust k = {
        (float)brightness, (float)contrast, (float)(0.5 * (1.0 - contrast)),
        {(float)(0.213 + 0.787 * s), (float)(0.715 - 0.715 * s), (float)(0.072 - 0.072 * s),
         (float)(0.213 - 0.213 * s), (float)(0.715 + 0.285 * s), (float)(0.072 - 0.072 * s),
         (float)(0.213 - 0.213 * s), (float)(0.715 - 0.715 * s), (float)(0.072 + 0.928 * s)},
    };
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t y = 0; y < src->height; y++) {
            if (ic__op_cancelled(cancel_flag, y, "color adjust", dst, err)) return IC_ERR_CANCELLED;
            adjust_row(to + (size_t)y * dst->stride, from + (size_t)y * src->stride, src->width, &k);
        }
    }
    *out = dst;
    return IC_OK;
}
