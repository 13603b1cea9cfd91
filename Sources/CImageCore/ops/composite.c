/* composite.c — a mark drawn "over" every frame of an image (once or tiled), on premultiplied
 * pixels, in fixed point: each base row is copied, then the mark's row is blended into it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ic_op_composite.h"

#include "ic_color_ops_internal.h"

/* The mark's row prepared for blending, per sample: q = m * o in Q8 (at most 65280) and
 * w = 1 - alpha_m * o / 255 in Q15 (at most 32768), the pixel's alpha weight on all four. */
typedef struct prepared_row {
    uint16_t *q, *w;
} prepared_row;

/* The opacity's two tables: q of every sample value and w of every alpha. */
typedef struct blend_tables {
    uint16_t q[256], w[256];
} blend_tables;

static void make_tables(blend_tables *t, double opacity) {
    for (int v = 0; v < 256; v++) {
        t->q[v] = (uint16_t)floor(v * opacity * 256.0 + 0.5);
        t->w[v] = (uint16_t)floor((1.0 - v * opacity / 255.0) * 32768.0 + 0.5);
    }
}

/* Prepares samples [4 * from, 4 * to) of one mark row. */
static void prepare_row(prepared_row *p, const uint8_t *mark_row, uint32_t from, uint32_t to,
                        const blend_tables *t) {
    for (uint32_t x = from; x < to; x++) {
        uint16_t w = t->w[mark_row[4 * (size_t)x + 3]];
        for (int c = 0; c < 4; c++) {
            p->q[4 * (size_t)x + c] = t->q[mark_row[4 * (size_t)x + c]];
            p->w[4 * (size_t)x + c] = w;
        }
    }
}

/* out = (q * 2^7 + base * w + 2^14) >> 15 over `n` samples, in place. The exact sum is at most
 * 255 * 2^15 and the rounding of q and w moves it by under 2^8, so the result fits a byte;
 * colour stays at most alpha (q and base * w are monotone in their sample). */
static void blend(uint8_t *restrict dst, const uint16_t *restrict q, const uint16_t *restrict w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        dst[i] = (uint8_t)(((uint32_t)q[i] * 128u + (uint32_t)dst[i] * w[i] + 16384u) >> 15);
    }
}

/* The top-left corner of the (first) mark: the gravity's place, rounded, moved by the offsets. */
static void place(const ic_composite_options *o, const ic_image *base, const ic_image *mark, int64_t *x,
                  int64_t *y) {
    double px, py;
    ic_gravity_place(&o->gravity, base->width, base->height, mark->width, mark->height, &px, &py);
    ic_gravity_kind k = o->gravity.kind;
    int east = k == IC_GRAVITY_NORTH_EAST || k == IC_GRAVITY_EAST || k == IC_GRAVITY_SOUTH_EAST;
    int south = k == IC_GRAVITY_SOUTH_EAST || k == IC_GRAVITY_SOUTH || k == IC_GRAVITY_SOUTH_WEST;
    *x = (int64_t)floor(px + 0.5) + (east ? -(int64_t)o->offset_x : o->offset_x);
    *y = (int64_t)floor(py + 0.5) + (south ? -(int64_t)o->offset_y : o->offset_y);
}

/* a mod m in 0..m-1 for m > 0. */
static uint64_t wrap(int64_t a, uint64_t m) {
    int64_t r = a % (int64_t)m;
    return (uint64_t)(r < 0 ? r + (int64_t)m : r);
}

/* Blends the prepared mark row into one base row: once at x0 (clipped), or tiled every `period`
 * columns with the grid through x0. */
static void blend_row(uint8_t *dst, const prepared_row *p, uint32_t width, uint32_t mark_w, int64_t x0, int tile,
                      uint64_t period) {
    if (!tile) {
        int64_t from = x0 < 0 ? 0 : x0, to = x0 + (int64_t)mark_w < (int64_t)width ? x0 + mark_w : width;
        if (from < to) {
            size_t c = (size_t)(from - x0);
            blend(dst + 4 * (size_t)from, p->q + 4 * c, p->w + 4 * c, 4 * (size_t)(to - from));
        }
        return;
    }
    uint64_t c = wrap(-x0, period);
    for (uint64_t x = 0; x < width;) {
        uint64_t left = width - x;
        if (c < mark_w) {
            uint64_t n = mark_w - c < left ? mark_w - c : left;
            blend(dst + 4 * x, p->q + 4 * c, p->w + 4 * c, 4 * (size_t)n);
            x += n;
            c += n;
        } else {
            uint64_t n = period - c < left ? period - c : left;
            x += n;
            c += n;
        }
        if (c == period) c = 0;
    }
}

static ic_status check(const ic_image *base, const ic_image *mark, const ic_composite_options *o, ic_error *err) {
    if (!base || !mark || !o) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "overlay: NULL argument");
    if (!isfinite(o->opacity) || o->opacity < 0 || o->opacity > 1) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "overlay: the opacity %g is not within 0...1", o->opacity);
    }
    if (o->offset_x < -IC_COMPOSITE_MAX_OFFSET || o->offset_x > IC_COMPOSITE_MAX_OFFSET ||
        o->offset_y < -IC_COMPOSITE_MAX_OFFSET || o->offset_y > IC_COMPOSITE_MAX_OFFSET) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "overlay: the offset (%d, %d) is beyond %d pixels",
                            o->offset_x, o->offset_y, IC_COMPOSITE_MAX_OFFSET);
    }
    if (o->tile && o->spacing > IC_COMPOSITE_MAX_SPACING) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "overlay: the tile spacing %u is beyond %u pixels",
                            o->spacing, IC_COMPOSITE_MAX_SPACING);
    }
    if (mark->width == 0 || mark->height == 0 || mark->frame_count == 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "overlay: the mark is empty");
    }
    return IC_OK;
}

ic_status ic_composite(const ic_image *base, const ic_image *mark, const ic_composite_options *options,
                       const int *cancel_flag, ic_image **out, ic_error *err) {
    if (out) *out = NULL;
    ic_status st = check(base, mark, options, err);
    if (st != IC_OK) return st;
    ic_image *dst;
    st = ic__op_create_like(base, "overlay", &dst, err);
    if (st != IC_OK) return st;
    int64_t x0, y0;
    place(options, base, mark, &x0, &y0);
    int tile = options->tile != 0;
    uint64_t period_x = (uint64_t)mark->width + (tile ? options->spacing : 0);
    uint64_t period_y = (uint64_t)mark->height + (tile ? options->spacing : 0);
    int covers = tile ? options->spacing == 0
                      : x0 <= 0 && y0 <= 0 && x0 + mark->width >= base->width && y0 + mark->height >= base->height;
    dst->is_opaque = base->is_opaque || (mark->is_opaque && options->opacity == 1 && covers);

    blend_tables *tables = malloc(sizeof *tables);
    prepared_row p = {malloc(sizeof(uint16_t) * 4 * (size_t)mark->width),
                      malloc(sizeof(uint16_t) * 4 * (size_t)mark->width)};
    if (!tables || !p.q || !p.w) {
        free(tables);
        free(p.q);
        free(p.w);
        ic_image_free(dst);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "overlay: out of memory for a mark %u pixels wide",
                            mark->width);
    }
    make_tables(tables, options->opacity);
    /* The mark's columns that can show: all when tiling, else those over the image. */
    uint32_t col_from = 0, col_to = mark->width;
    if (!tile) {
        col_from = x0 < 0 ? (uint32_t)(-x0 < (int64_t)mark->width ? -x0 : mark->width) : 0;
        int64_t right = (int64_t)base->width - x0;
        col_to = right < (int64_t)col_from ? col_from : (right < (int64_t)mark->width ? (uint32_t)right : mark->width);
    }
    size_t row_bytes = 4 * (size_t)base->width;
    for (uint32_t f = 0; f < base->frame_count; f++) {
        const uint8_t *from = ic_image_frame(base, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t y = 0; y < base->height; y++) {
            if (ic__op_cancelled(cancel_flag, y, "overlay", dst, err)) {
                free(tables);
                free(p.q);
                free(p.w);
                return IC_ERR_CANCELLED;
            }
            uint8_t *row = to + (size_t)y * dst->stride;
            memcpy(row, from + (size_t)y * base->stride, row_bytes);
            if (options->opacity == 0) continue;
            uint64_t my;
            if (tile) {
                my = wrap((int64_t)y - y0, period_y);
                if (my >= mark->height) continue;
            } else {
                if ((int64_t)y < y0 || (int64_t)y >= y0 + (int64_t)mark->height) continue;
                my = (uint64_t)((int64_t)y - y0);
            }
            prepare_row(&p, mark->pixels + (size_t)my * mark->stride, col_from, col_to, tables);
            blend_row(row, &p, base->width, mark->width, x0, tile, period_x);
        }
    }
    free(tables);
    free(p.q);
    free(p.w);
    *out = dst;
    return IC_OK;
}
