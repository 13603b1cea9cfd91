/* pixelate.c — block averages of premultiplied pixels: column sums per band of rows, then fill. */
#include <stdlib.h>
#include <string.h>

#include "ic_op_pixelate.h"

#include "ic_color_ops_internal.h"

/* Adds `rows` rows of `width` pixels into per-column 32-bit sums (4 a pixel). */
static void add_rows(uint32_t *restrict sums, const uint8_t *src, size_t stride, uint32_t width,
                     uint32_t rows) {
    for (uint32_t r = 0; r < rows; r++) {
        const uint8_t *restrict row = src + (size_t)r * stride;
        for (size_t i = 0; i < 4 * (size_t)width; i++) sums[i] += row[i];
    }
}

/* Averages one band of rows block by block into `avg` (4 bytes a block). */
static void average_blocks(uint8_t *restrict avg, const uint32_t *restrict sums, uint32_t width,
                           uint32_t block, uint32_t rows) {
    for (uint32_t x0 = 0, i = 0; x0 < width; x0 += block, i++) {
        uint32_t cols = width - x0 < block ? width - x0 : block;
        uint64_t n = (uint64_t)cols * rows, total[4] = {0, 0, 0, 0};
        for (uint32_t x = x0; x < x0 + cols; x++) {
            for (int c = 0; c < 4; c++) total[c] += sums[4 * (size_t)x + c];
        }
        for (int c = 0; c < 4; c++) avg[4 * (size_t)i + c] = (uint8_t)((2 * total[c] + n) / (2 * n));
    }
}

/* Writes one row of blocks from their averages. */
static void fill_row(uint8_t *restrict dst, const uint8_t *restrict avg, uint32_t width, uint32_t block) {
    for (uint32_t x = 0; x < width; x++) memcpy(dst + 4 * (size_t)x, avg + 4 * (size_t)(x / block), 4);
}

ic_status ic_pixelate(const ic_image *src, uint32_t block, const int *cancel_flag, ic_image **out,
                      ic_error *err) {
    if (block == 0 || block > IC_PIXELATE_MAX_BLOCK) {
        if (out) *out = NULL;
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "pixelate: the block size %u is not within 1...%u pixels", block,
                            IC_PIXELATE_MAX_BLOCK);
    }
    ic_image *dst;
    ic_status st = ic__op_create_like(src, "pixelate", &dst, err);
    if (st != IC_OK) return st;
    uint32_t longer = src->width > src->height ? src->width : src->height;
    if (block > longer) block = longer;
    /* A column's sum over a band (at most 2^16 rows of 255) fits 32 bits. */
    uint32_t blocks = (src->width + block - 1) / block;
    uint32_t *sums = malloc(sizeof(uint32_t) * 4 * (size_t)src->width);
    uint8_t *avg = malloc(4 * (size_t)blocks);
    if (!sums || !avg) {
        free(sums);
        free(avg);
        ic_image_free(dst);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "pixelate: out of memory for %u columns", src->width);
    }
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t y0 = 0; y0 < src->height; y0 += block) {
            if (cancel_flag && ic_cancel_flag_get(cancel_flag)) {
                free(sums);
                free(avg);
                ic_image_free(dst);
                return ic__set_error(err, IC_ERR_CANCELLED, "pixelate: cancelled");
            }
            uint32_t rows = src->height - y0 < block ? src->height - y0 : block;
            memset(sums, 0, sizeof(uint32_t) * 4 * (size_t)src->width);
            add_rows(sums, from + (size_t)y0 * src->stride, src->stride, src->width, rows);
            average_blocks(avg, sums, src->width, block, rows);
            fill_row(to + (size_t)y0 * dst->stride, avg, src->width, block);
            for (uint32_t r = 1; r < rows; r++) {
                memcpy(to + (size_t)(y0 + r) * dst->stride, to + (size_t)y0 * dst->stride, 4 * (size_t)src->width);
            }
        }
    }
    free(sums);
    free(avg);
    *out = dst;
    return IC_OK;
}
