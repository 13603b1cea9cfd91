/*
 * attention.c — the window with the most interest (see ic_op_attention.h): a bounded grid of
 * sampled cells, scored for edges, chroma and skin in integers, blurred, and its peak.
 */
#include <math.h>
#include <stdlib.h>

#include "ic_op_attention.h"

#include "ic_color_ops_internal.h"

/* Samples per cell along each axis, at most. */
#define SAMPLES 4u
/* The skin tone's direction, a unit vector in Q10: (0.78, 0.57, 0.44) / 1.0616. */
#define SKIN_R 752
#define SKIN_G 550
#define SKIN_B 424
/* Cosine at which a colour starts to count as skin, squared, in Q10 (0.95^2 = 0.9025). */
#define SKIN_COS2_Q10 924
/* Weight of the edges (the Laplacian of luminance 0...100) against colour (0...100 each). */
#define EDGE_WEIGHT 5
/* Luminance (0...100, Q8) at or below which a cell's colour counts for nothing (5 %). */
#define DARK_Q8 (5 * 256)
/* Fraction bits of the blur kernel's weights. */
#define KERNEL_BITS 14

/* The grid: cells along each axis, and where cell i starts (cell i spans [at(i), at(i+1))). */
typedef struct grid {
    uint32_t w, h, src_w, src_h;
} grid;

static uint32_t cell_x(const grid *g, uint32_t i) { return (uint32_t)((uint64_t)i * g->src_w / g->w); }
static uint32_t cell_y(const grid *g, uint32_t j) { return (uint32_t)((uint64_t)j * g->src_h / g->h); }

/* An sRGB level decoded to linear light, 0...100 in Q8 (the caller weights the channels). */
static int32_t linear_q8(uint32_t level) {
    double v = level / 255.0;
    v = v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
    return (int32_t)lround(v * 100 * 256);
}

/* Averages the samples of one cell of premultiplied pixels into rgba[4] (rounded). */
static void sample_cell(const ic_image *src, const uint8_t *frame, uint32_t x0, uint32_t x1, uint32_t y0,
                        uint32_t y1, uint32_t rgba[4]) {
    uint32_t cw = x1 - x0, ch = y1 - y0;
    uint32_t nx = cw < SAMPLES ? cw : SAMPLES, ny = ch < SAMPLES ? ch : SAMPLES;
    uint32_t sum[4] = {0, 0, 0, 0};
    for (uint32_t b = 0; b < ny; b++) {
        uint32_t y = y0 + (uint32_t)(((2 * (uint64_t)b + 1) * ch) / (2 * ny));
        const uint8_t *restrict row = frame + (size_t)y * src->stride;
        for (uint32_t a = 0; a < nx; a++) {
            uint32_t x = x0 + (uint32_t)(((2 * (uint64_t)a + 1) * cw) / (2 * nx));
            for (int c = 0; c < 4; c++) sum[c] += row[4 * (size_t)x + c];
        }
    }
    uint32_t n = nx * ny;
    for (int c = 0; c < 4; c++) rgba[c] = (2 * sum[c] + n) / (2 * n);
}

/* Skin (0...100 in Q8) of a straight colour: 100 at the skin tone's direction, falling
 * linearly to 0 where the cosine to it falls to SKIN_COS (a distance between unit vectors). */
static int32_t skin_q8(int32_t r, int32_t g, int32_t b) {
    int64_t norm2 = (int64_t)r * r + (int64_t)g * g + (int64_t)b * b;
    if (norm2 == 0) return 0;
    int64_t dot = (int64_t)SKIN_R * r + (int64_t)SKIN_G * g + (int64_t)SKIN_B * b;
    /* cos^2 in Q10 = dot^2 / (2^20 norm2); the score falls linearly in cos^2. */
    int64_t cos2 = (dot * dot) / (norm2 << 10);
    if (cos2 <= SKIN_COS2_Q10) return 0;
    return (int32_t)(100 * 256 * (cos2 - SKIN_COS2_Q10) / (1024 - SKIN_COS2_Q10));
}

/* Scores every cell of `g` from frame 0 of `src` into `score` (w * h, Q8), with the
 * cells' luminance in `lum`. */
static ic_status score_cells(const ic_image *src, const grid *g, const int32_t *linear, const int *cancel_flag,
                             int32_t *restrict score, int32_t *restrict lum, ic_error *err) {
    const uint8_t *frame = ic_image_frame(src, 0);
    for (uint32_t j = 0; j < g->h; j++) {
        if (cancel_flag && ic_cancel_flag_get(cancel_flag)) {
            return ic__set_error(err, IC_ERR_CANCELLED, "smart crop: cancelled");
        }
        uint32_t y0 = cell_y(g, j), y1 = cell_y(g, j + 1);
        for (uint32_t i = 0; i < g->w; i++) {
            uint32_t p[4];
            sample_cell(src, frame, cell_x(g, i), cell_x(g, i + 1), y0, y1, p);
            size_t k = (size_t)j * g->w + i;
            /* Rec. 709 weights in Q12 (871 + 2929 + 296 = 4096), on premultiplied levels. */
            lum[k] = (871 * linear[p[0]] + 2929 * linear[p[1]] + 296 * linear[p[2]] + 2048) >> 12;
            score[k] = 0;
            if (p[3] == 0) continue;
            int32_t r = (int32_t)((p[0] * 255 + p[3] / 2) / p[3]), gr = (int32_t)((p[1] * 255 + p[3] / 2) / p[3]),
                    b = (int32_t)((p[2] * 255 + p[3] / 2) / p[3]);
            r = r > 255 ? 255 : r;
            gr = gr > 255 ? 255 : gr;
            b = b > 255 ? 255 : b;
            int32_t straight = (871 * linear[r] + 2929 * linear[gr] + 296 * linear[b] + 2048) >> 12;
            if (straight <= DARK_Q8) continue;
            int32_t hi = r > gr ? (r > b ? r : b) : (gr > b ? gr : b);
            int32_t lo = r < gr ? (r < b ? r : b) : (gr < b ? gr : b);
            int32_t colour = (hi - lo) * 100 * 256 / 255 + skin_q8(r, gr, b);
            score[k] = (int32_t)((int64_t)colour * p[3] / 255);
        }
    }
    /* Edges: EDGE_WEIGHT x the Laplacian of the luminance, borders replicated. */
    for (uint32_t j = 0; j < g->h; j++) {
        const int32_t *up = lum + (size_t)(j ? j - 1 : j) * g->w, *mid = lum + (size_t)j * g->w,
                      *down = lum + (size_t)(j + 1 < g->h ? j + 1 : j) * g->w;
        int32_t *restrict out = score + (size_t)j * g->w;
        for (uint32_t i = 0; i < g->w; i++) {
            int32_t lap = 4 * mid[i] - mid[i ? i - 1 : i] - mid[i + 1 < g->w ? i + 1 : i] - up[i] - down[i];
            out[i] += EDGE_WEIGHT * (lap < 0 ? -lap : lap);
        }
    }
    return IC_OK;
}

/* Blurs `n` values `step` apart from `in` into `out` with the kernel (weights[0..radius]). */
static void blur_line(const int64_t *in, int64_t *out, uint32_t n, size_t step, const int64_t *weights,
                      uint32_t radius) {
    for (uint32_t i = 0; i < n; i++) {
        int64_t acc = 0;
        for (int64_t d = -(int64_t)radius; d <= (int64_t)radius; d++) {
            int64_t at = (int64_t)i + d;
            at = at < 0 ? 0 : (at >= (int64_t)n ? (int64_t)n - 1 : at);
            acc += in[(size_t)at * step] * weights[d < 0 ? -d : d];
        }
        out[(size_t)i * step] = acc >> KERNEL_BITS;
    }
}

/* The cell (*ci, *cj) with the highest score after a Gaussian blur of `sigma` cells; false
 * when nothing scores. `a` and `b` hold w * h values each. */
static bool peak(const int32_t *score, const grid *g, double sigma, int64_t *restrict a, int64_t *restrict b,
                 uint32_t *ci, uint32_t *cj) {
    uint32_t radius = (uint32_t)ceil(3 * sigma);
    uint32_t longer = g->w > g->h ? g->w : g->h;
    if (radius > longer) radius = longer;
    int64_t weights[IC_ATTENTION_GRID + 1], total = 0;
    double sum = 0;
    for (uint32_t d = 0; d <= radius; d++) sum += (d ? 2 : 1) * exp(-(double)d * d / (2 * sigma * sigma));
    for (uint32_t d = 0; d <= radius; d++) {
        weights[d] = llround(exp(-(double)d * d / (2 * sigma * sigma)) / sum * (1 << KERNEL_BITS));
        total += (d ? 2 : 1) * weights[d];
    }
    weights[0] += (1 << KERNEL_BITS) - total;
    size_t cells = (size_t)g->w * g->h;
    for (size_t k = 0; k < cells; k++) a[k] = score[k];
    for (uint32_t j = 0; j < g->h; j++) blur_line(a + (size_t)j * g->w, b + (size_t)j * g->w, g->w, 1, weights, radius);
    for (uint32_t i = 0; i < g->w; i++) blur_line(b + i, a + i, g->h, g->w, weights, radius);
    int64_t best = 0;
    for (uint32_t j = 0; j < g->h; j++) {
        for (uint32_t i = 0; i < g->w; i++) {
            if (a[(size_t)j * g->w + i] > best) {
                best = a[(size_t)j * g->w + i];
                *ci = i;
                *cj = j;
            }
        }
    }
    return best > 0;
}

/* The offset centring `size` on `centre` within [0, extent - size], rounded. */
static uint32_t centred(double centre, uint32_t size, uint32_t extent) {
    double v = floor(centre - size / 2.0 + 0.5);
    if (v < 0) v = 0;
    if (v > extent - size) v = extent - size;
    return (uint32_t)v;
}

ic_status ic_attention_window(const ic_image *src, uint32_t crop_w, uint32_t crop_h,
                              const int *cancel_flag, uint32_t *x, uint32_t *y, ic_error *err) {
    if (!src || !x || !y) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "smart crop: NULL argument");
    if (crop_w == 0 || crop_h == 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "smart crop: the window %ux%u is empty", crop_w, crop_h);
    }
    if (crop_w > src->width) crop_w = src->width;
    if (crop_h > src->height) crop_h = src->height;
    /* IC_ATTENTION_GRID cells along each axis, none smaller than a pixel. */
    grid g = {.src_w = src->width, .src_h = src->height};
    g.w = IC_ATTENTION_GRID;
    g.h = IC_ATTENTION_GRID;
    if (g.w > src->width) g.w = src->width;
    if (g.h > src->height) g.h = src->height;
    size_t cells = (size_t)g.w * g.h;
    int64_t *a = malloc(cells * (2 * sizeof(int64_t) + 2 * sizeof(int32_t)) + 256 * sizeof(int32_t));
    if (!a) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "smart crop: out of memory for %zu cells", cells);
    int64_t *b = a + cells;
    int32_t *score = (int32_t *)(b + cells), *lum = score + cells, *linear = lum + cells;
    for (uint32_t v = 0; v < 256; v++) linear[v] = linear_q8(v);
    ic_status st = score_cells(src, &g, linear, cancel_flag, score, lum, err);
    if (st != IC_OK) {
        free(a);
        return st;
    }
    double cw = (double)crop_w * g.w / src->width, ch = (double)crop_h * g.h / src->height;
    double sigma = fmax(1.0, sqrt(cw * cw + ch * ch) / 10);
    uint32_t ci, cj;
    bool found = peak(score, &g, sigma, a, b, &ci, &cj);
    free(a);
    if (!found) {
        *x = (src->width - crop_w) / 2;
        *y = (src->height - crop_h) / 2;
        return IC_OK;
    }
    *x = centred((cell_x(&g, ci) + (double)cell_x(&g, ci + 1)) / 2, crop_w, src->width);
    *y = centred((cell_y(&g, cj) + (double)cell_y(&g, cj + 1)) / 2, crop_h, src->height);
    return IC_OK;
}
