/* corners.c — rounded-rectangle masks with an anti-aliased edge and an optional border. */
#include <math.h>
#include <string.h>

#include "ic_op_corners.h"

#include "ic_color_ops_internal.h"

/* A rounded rectangle: centre, half sizes and the radius of each corner (top-left,
 * top-right, bottom-left, bottom-right); empty when a half size is not positive. */
typedef struct shape {
    float cx, cy, hx, hy;
    float r[4];
    int empty;
} shape;

static shape make_shape(double x0, double y0, double x1, double y1, double radius, uint32_t corners) {
    shape s;
    s.cx = (float)((x0 + x1) / 2);
    s.cy = (float)((y0 + y1) / 2);
    s.hx = (float)((x1 - x0) / 2);
    s.hy = (float)((y1 - y0) / 2);
    s.empty = !(x1 > x0 && y1 > y0);
    double most = fmin(x1 - x0, y1 - y0) / 2;
    double r = s.empty ? 0 : fmin(fmax(radius, 0), most);
    for (int k = 0; k < 4; k++) s.r[k] = (corners >> k) & 1 ? (float)r : 0.f;
    return s;
}

/* Coverage of the pixel whose centre is (px, py): 0.5 minus the signed distance to the edge. */
static inline float coverage(const shape *s, float px, float py) {
    float dx = px - s->cx, dy = py - s->cy;
    float r = s->r[(dy < 0 ? 0 : 2) + (dx < 0 ? 0 : 1)];
    float qx = fabsf(dx) - (s->hx - r), qy = fabsf(dy) - (s->hy - r);
    float ox = qx > 0 ? qx : 0, oy = qy > 0 ? qy : 0;
    float in = qx > qy ? qx : qy;
    float d = sqrtf(ox * ox + oy * oy) + (in < 0 ? in : 0) - r;
    float c = 0.5f - d;
    return c < 0 ? 0 : (c > 1 ? 1 : c);
}

/* Pixel x of row y: image * inner coverage + border * (outer - inner coverage). Returns 1
 * when the pixel lies wholly inside both shapes (copied as it is). */
static inline int mask_pixel(uint8_t *restrict dst, const uint8_t *restrict src, uint32_t x, float py,
                             const shape *outer, const shape *inner, int border, const float bp[4]) {
    float px = (float)x + 0.5f;
    float co = outer->empty ? 0.f : coverage(outer, px, py);
    float ci = !border ? co : (inner->empty ? 0.f : coverage(inner, px, py));
    if (co >= 1.f && ci >= 1.f) {
        memcpy(dst + 4 * (size_t)x, src + 4 * (size_t)x, 4);
        return 1;
    }
    float cb = co - ci;
    float a = src[4 * x + 3] * ci + bp[3] * cb + 0.5f;
    for (int c = 0; c < 3; c++) {
        float v = src[4 * x + c] * ci + bp[c] * cb + 0.5f;
        dst[4 * x + c] = (uint8_t)(v < a ? v : a);
    }
    dst[4 * x + 3] = (uint8_t)a;
    return 0;
}

/* One row. Along a row, the pixels inside both (convex) shapes form one run: each end is
 * found by working inwards from that edge, and the run between is copied. */
static void mask_row(uint8_t *restrict dst, const uint8_t *restrict src, uint32_t width, uint32_t y,
                     const shape *outer, const shape *inner, int border, const float bp[4]) {
    float py = (float)y + 0.5f;
    uint32_t left = 0, right = width;
    while (left < width && !mask_pixel(dst, src, left, py, outer, inner, border, bp)) left++;
    if (left == width) return;
    while (right - 1 > left && !mask_pixel(dst, src, right - 1, py, outer, inner, border, bp)) right--;
    memcpy(dst + 4 * (size_t)left, src + 4 * (size_t)left, 4 * (size_t)(right - left));
}

ic_status ic_round_corners(const ic_image *src, double radius, uint32_t corners, double border_width,
                           const uint8_t border_rgba[4], const int *cancel_flag, ic_image **out,
                           ic_error *err) {
    if (out) *out = NULL;
    if (!isfinite(radius) || radius < 0 || !isfinite(border_width) || border_width < 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "round corners: the radius %g and the border width %g must be finite and "
                            "not negative", radius, border_width);
    }
    if (corners & ~(uint32_t)IC_CORNER_ALL) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "round corners: unknown corner bits 0x%x", corners);
    }
    int border = border_width > 0;
    if (border && !border_rgba) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "round corners: a border needs a colour");
    }
    ic_image *dst;
    ic_status st = ic__op_create_like(src, "round corners", &dst, err);
    if (st != IC_OK) return st;
    uint32_t w = src->width, h = src->height;
    double most = fmin(w, h) / 2;
    double r = fmin(radius, most), bw = fmin(border_width, most);
    shape outer = make_shape(0, 0, w, h, r, corners);
    shape inner = make_shape(bw, bw, w - bw, h - bw, fmax(r - bw, 0), corners);
    float bp[4] = {0, 0, 0, 0};
    if (border) {
        for (int c = 0; c < 3; c++) bp[c] = (float)(border_rgba[c] * (double)border_rgba[3] / 255.0);
        bp[3] = border_rgba[3];
    }
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t y = 0; y < h; y++) {
            if (ic__op_cancelled(cancel_flag, y, "round corners", dst, err)) return IC_ERR_CANCELLED;
            mask_row(to + (size_t)y * dst->stride, from + (size_t)y * src->stride, w, y, &outer, &inner, border, bp);
        }
    }
    ic__image_update_opacity(dst);
    *out = dst;
    return IC_OK;
}
