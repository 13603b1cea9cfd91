/* embed.c — padding: rows of the source copied whole onto a canvas whose border is filled
 * with the background pixel. */
#include <string.h>

#include "ic_op_embed.h"

#include "ic_color_ops_internal.h"

/* Writes `count` copies of the pixel `value` (its four bytes as in memory). */
static void fill_pixels(uint8_t *restrict dst, uint32_t value, size_t count) {
    uint32_t *restrict px = (uint32_t *)(void *)dst;
    for (size_t i = 0; i < count; i++) px[i] = value;
}

/* Checks the arguments before anything is allocated: the image inside the canvas, the canvas
 * within the pixel limit, the background a premultiplied pixel. */
static ic_status check(const ic_image *src, uint32_t width, uint32_t height, uint32_t x, uint32_t y,
                       const uint8_t *background, ic_error *err) {
    if (!src || !background) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "pad: NULL argument");
    uint64_t pixels = (uint64_t)width * height;
    if (pixels > IC_DEFAULT_MAX_PIXELS) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED,
                            "pad: the canvas %ux%u (%llu pixels) is over the limit of %llu pixels", width,
                            height, (unsigned long long)pixels, (unsigned long long)IC_DEFAULT_MAX_PIXELS);
    }
    if ((uint64_t)x + src->width > width || (uint64_t)y + src->height > height) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "pad: the %ux%u image at (%u, %u) does not fit in the %ux%u canvas", src->width,
                            src->height, x, y, width, height);
    }
    if (background[0] > background[3] || background[1] > background[3] || background[2] > background[3]) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "pad: the background (%u, %u, %u, %u) is not premultiplied (a colour above its alpha)",
                            background[0], background[1], background[2], background[3]);
    }
    return IC_OK;
}

ic_status ic_embed(const ic_image *src, uint32_t width, uint32_t height, uint32_t x, uint32_t y,
                   const uint8_t background[4], const int *cancel_flag, ic_image **out, ic_error *err) {
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "pad: NULL argument");
    *out = NULL;
    ic_status st = check(src, width, height, x, y, background, err);
    if (st != IC_OK) return st;
    ic_image *dst;
    st = ic__image_create_in(src->ic_pool, width, height, src->frame_count, &dst, err);
    if (st != IC_OK) return st;
    ic__image_copy_metadata(dst, src);
    int bordered = width != src->width || height != src->height;
    dst->is_opaque = src->is_opaque && (!bordered || background[3] == 255);
    uint32_t value;
    memcpy(&value, background, 4);
    size_t right = (size_t)width - x - src->width, row_bytes = 4 * (size_t)src->width;
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t r = 0; r < height; r++) {
            if (ic__op_cancelled(cancel_flag, r, "pad", dst, err)) return IC_ERR_CANCELLED;
            uint8_t *row = to + (size_t)r * dst->stride;
            if (r < y || r >= y + src->height) {
                fill_pixels(row, value, width);
                continue;
            }
            fill_pixels(row, value, x);
            memcpy(row + 4 * (size_t)x, from + (size_t)(r - y) * src->stride, row_bytes);
            fill_pixels(row + 4 * ((size_t)x + src->width), value, right);
        }
    }
    *out = dst;
    return IC_OK;
}
