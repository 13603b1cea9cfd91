/*
 * dc_idct.c — the DC decoder's output (see jpeg_dc.c): libjpeg's block smoothing
 * (jdcoefct.c), the 1x1 reduced IDCT (jidctred.c) and libjpeg-turbo's SSE2 2x2 IDCT,
 * box upsampling and jdcolor.c's YCbCr->RGB, one iMCU row at a time into the sink.
 */
#include <string.h>

#include "dc_internal.h"

/* libjpeg's post-IDCT range limit: x & 1023 through its table. */
static inline uint8_t range_limit(int x) {
    int i = x & 1023;
    if (i < 128) return (uint8_t)(i + 128);
    if (i < 512) return 255;
    if (i < 896) return 0;
    return (uint8_t)(i - 896);
}

/* jpeg_idct_1x1. */
static inline uint8_t idct_1x1(int16_t coef, int16_t q) {
    int v = (int)coef * (int)q;
    return range_limit((int)(((int64_t)v + 4) >> 3));
}

static inline int16_t sat16(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : (int16_t)v; }

static inline uint8_t sat_sample(int32_t v) { return (uint8_t)((v < -128 ? -128 : v > 127 ? 127 : v) + 128); }

/* jsimd_idct_2x2_sse2 (libjpeg-turbo 2.1, x86-64): dequantised in 16 bits (pmullw), pass
 * sums in wrapping 32 bits, pass-1 results other than column 0 saturated to 16 bits, output
 * saturated. w: the 5x5 inputs (rows and columns 0,1,3,5,7), q: their multipliers. */
static void idct_2x2(const int16_t w[25], const int16_t q[25], uint8_t out[4]) {
    int32_t A[5], B[5];
    for (int c = 0; c < 5; c++) {
        if ((w[c] | w[5 + c] | w[10 + c] | w[15 + c] | w[20 + c]) == 0) {
            A[c] = B[c] = 0; /* (0 + 4096) >> 13 */
            continue;
        }
        int16_t d0 = (int16_t)(uint16_t)(w[c] * q[c]);
        int16_t d1 = (int16_t)(uint16_t)(w[5 + c] * q[5 + c]);
        int16_t d3 = (int16_t)(uint16_t)(w[10 + c] * q[10 + c]);
        int16_t d5 = (int16_t)(uint16_t)(w[15 + c] * q[15 + c]);
        int16_t d7 = (int16_t)(uint16_t)(w[20 + c] * q[20 + c]);
        int32_t t0 = (d1 * 29692 + d3 * -10426) + (d5 * 6967 + d7 * -5906);
        uint32_t t10 = (uint32_t)((int32_t)d0 * 32768);
        A[c] = (int32_t)(t10 + (uint32_t)t0 + 4096u) >> 13;
        B[c] = (int32_t)(t10 - (uint32_t)t0 + 4096u) >> 13;
    }
    const int32_t *rows[2] = {A, B};
    for (int r = 0; r < 2; r++) {
        const int32_t *X = rows[r];
        int32_t t0 = (sat16(X[1]) * 29692 + sat16(X[2]) * -10426) + (sat16(X[3]) * 6967 + sat16(X[4]) * -5906);
        uint32_t t10 = (uint32_t)X[0] << 15;
        out[2 * r] = sat_sample((int32_t)(t10 + (uint32_t)t0 + (1u << 19)) >> 20);
        out[2 * r + 1] = sat_sample((int32_t)(t10 - (uint32_t)t0 + (1u << 19)) >> 20);
    }
}

/* decompress_smooth_data's estimate of a coefficient with quantiser q from num. */
static inline int16_t estimate(int64_t num, int64_t q, int Al) {
    int pred;
    if (num >= 0) {
        pred = (int)(((q << 7) + num) / (q << 8));
        if (Al > 0 && pred >= (1 << Al)) pred = (1 << Al) - 1;
    } else {
        pred = (int)(((q << 7) - num) / (q << 8));
        if (Al > 0 && pred >= (1 << Al)) pred = (1 << Al) - 1;
        pred = (int)(0u - (unsigned)pred);
    }
    return (int16_t)(uint16_t)pred;
}

/* The 5x5 DC window of the smoothing, DC01..DC25 as libjpeg names them (row-major). */
typedef struct dc_window {
    int v[25];
} dc_window;

#define W(n) win->v[(n) - 1]

/* Writes the samples of block row b (in iMCU row R) of component c. */
static void output_block_row(ic__jpeg_dc *dc, dc_comp *c, uint32_t R, int br, int block_rows) {
    uint32_t last = dc->imcu_rows - 1;
    uint32_t b = R * (uint32_t)c->v + (uint32_t)br;
    uint32_t prev = (br > 0 || R > 0) ? b - 1 : b;
    uint32_t pprev = (br > 1 || R > 1) ? b - 2 : prev;
    uint32_t next = (br < block_rows - 1 || R < last) ? b + 1 : b;
    uint32_t nnext = (br < block_rows - 2 || R + 1 < last) ? b + 2 : next;
    const int16_t *rows[5] = {dc_at(c, pprev), dc_at(c, prev), dc_at(c, b), dc_at(c, next), dc_at(c, nnext)};
    const int16_t *cur = rows[2];
    const int16_t *ac = ac_at(c, b);
    int s = c->ssize;
    uint8_t *out = c->rows + (size_t)br * s * c->pw;
    int16_t q0 = (int16_t)c->q[0];
    bool smooth = dc->smoothing;
    if (s == 1 && !c->change_dc) {
        /* The 1x1 IDCT reads the DC alone, which smoothing changes only with change_dc. */
        for (uint32_t x = 0; x < c->wib; x++) out[x] = idct_1x1(cur[x], q0);
        return;
    }
    dc_window window, *win = &window;
    if (smooth) {
        for (int r = 0; r < 5; r++) {
            for (int k = 0; k < 5; k++) win->v[r * 5 + k] = rows[r][0];
        }
    }
    uint32_t last_col = c->wib - 1;
    int64_t Q00 = c->q[0];
    for (uint32_t x = 0; x < c->wib; x++) {
        int16_t dcval = cur[x];
        if (smooth) {
            if (x == 0 && x < last_col) {
                for (int r = 0; r < 5; r++) win->v[r * 5 + 3] = rows[r][1];
            }
            if (x + 1 < last_col) {
                for (int r = 0; r < 5; r++) win->v[r * 5 + 4] = rows[r][x + 2];
            }
            if (c->change_dc) {
                int64_t num = Q00 * (-2 * W(1) - 6 * W(2) - 8 * W(3) - 6 * W(4) - 2 * W(5) - 6 * W(6) +
                                     6 * W(7) + 42 * W(8) + 6 * W(9) - 6 * W(10) - 8 * W(11) +
                                     42 * W(12) + 152 * W(13) + 42 * W(14) - 8 * W(15) - 6 * W(16) +
                                     6 * W(17) + 42 * W(18) + 6 * W(19) - 6 * W(20) - 2 * W(21) -
                                     6 * W(22) - 8 * W(23) - 6 * W(24) - 2 * W(25));
                dcval = estimate(num, Q00, 0);
            }
        }
        if (s == 1) {
            out[x] = idct_1x1(dcval, q0);
        } else {
            int16_t w[25];
            w[0] = cur[x];
            memcpy(w + 1, ac + (size_t)x * 24, 24 * sizeof(int16_t));
            if (smooth) {
                const int *latch = c->latch;
                bool cd = c->change_dc;
                /* AC01 (w[1]), AC10 (w[5]), AC11 (w[6]); with change_dc AC03 (w[2]) and AC30
                 * (w[10]) too. AC20, AC02, AC12 and AC21 are not read by the 2x2 IDCT. */
                if (latch[1] != 0 && w[1] == 0) {
                    int sum = cd ? -W(1) - W(2) + W(4) + W(5) - 3 * W(6) + 13 * W(7) - 13 * W(9) +
                                       3 * W(10) - 3 * W(11) + 38 * W(12) - 38 * W(14) + 3 * W(15) -
                                       3 * W(16) + 13 * W(17) - 13 * W(19) + 3 * W(20) - W(21) - W(22) +
                                       W(24) + W(25)
                                 : -7 * W(11) + 50 * W(12) - 50 * W(14) + 7 * W(15);
                    w[1] = estimate(Q00 * sum, c->q[1], latch[1]);
                }
                if (latch[2] != 0 && w[5] == 0) {
                    int sum = cd ? -W(1) - 3 * W(2) - 3 * W(3) - 3 * W(4) - W(5) - W(6) + 13 * W(7) +
                                       38 * W(8) + 13 * W(9) - W(10) + W(16) - 13 * W(17) - 38 * W(18) -
                                       13 * W(19) + W(20) + W(21) + 3 * W(22) + 3 * W(23) + 3 * W(24) + W(25)
                                 : -7 * W(3) + 50 * W(8) - 50 * W(18) + 7 * W(23);
                    w[5] = estimate(Q00 * sum, c->q[8], latch[2]);
                }
                if (latch[4] != 0 && w[6] == 0) {
                    int sum = cd ? -W(1) + W(5) + 9 * W(7) - 9 * W(9) - 9 * W(17) + 9 * W(19) + W(21) - W(25)
                                 : W(10) + W(16) - 10 * W(17) + 10 * W(19) - W(2) - W(20) + W(22) - W(24) +
                                       W(4) - W(6) + 10 * W(7) - 10 * W(9);
                    w[6] = estimate(Q00 * sum, c->q[9], latch[4]);
                }
                if (cd) {
                    if (latch[6] != 0 && w[2] == 0) {
                        int sum = W(7) - W(9) + 2 * W(12) - 2 * W(14) + W(17) - W(19);
                        w[2] = estimate(Q00 * sum, c->q[3], latch[6]);
                    }
                    if (latch[9] != 0 && w[10] == 0) {
                        int sum = W(7) + 2 * W(8) + W(9) - W(17) - 2 * W(18) - W(19);
                        w[10] = estimate(Q00 * sum, c->q[24], latch[9]);
                    }
                    w[0] = dcval;
                }
            }
            uint8_t px[4];
            idct_2x2(w, c->q25, px);
            out[2 * x] = px[0];
            out[2 * x + 1] = px[1];
            out[c->pw + 2 * x] = px[2];
            out[c->pw + 2 * x + 1] = px[3];
        }
        if (smooth) {
            for (int r = 0; r < 5; r++) {
                int *v = &win->v[r * 5];
                v[0] = v[1];
                v[1] = v[2];
                v[2] = v[3];
                v[3] = v[4];
            }
        }
    }
}

#undef W

static inline uint8_t clamp255(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* Box upsampling (jdsample.c's int_upsample at 1/8) and jdcolor.c's conversion. */
void ic__jpeg_dc_output_row(ic__jpeg_dc *dc, uint32_t R) {
    for (int i = 0; i < dc->ncomp; i++) {
        dc_comp *c = &dc->comp[i];
        int block_rows = c->v;
        if (R == dc->imcu_rows - 1) {
            block_rows = (int)(c->hib % (uint32_t)c->v);
            if (block_rows == 0) block_rows = c->v;
        }
        for (int br = 0; br < block_rows; br++) output_block_row(dc, c, R, br, block_rows);
    }
    ic__decoder *d = dc->d;
    uint32_t y0 = R * (uint32_t)dc->max_v, y1 = y0 + (uint32_t)dc->max_v;
    if (y1 > dc->out_h) y1 = dc->out_h;
    for (uint32_t y = y0; y < y1; y++) {
        uint8_t *row = ic__dec_row(d, 0, y);
        const uint8_t *src[3];
        for (int i = 0; i < dc->ncomp; i++) {
            const dc_comp *c = &dc->comp[i];
            uint32_t first = R * (uint32_t)(c->v * c->ssize);
            src[i] = c->rows + (size_t)(y / (uint32_t)c->vexp - first) * c->pw;
        }
        if (dc->ncomp == 1) {
            uint32_t e = (uint32_t)dc->comp[0].hexp;
            for (uint32_t x = 0; x < dc->out_w; x++) {
                uint8_t g = src[0][x / e];
                row[4 * x] = row[4 * x + 1] = row[4 * x + 2] = g;
                row[4 * x + 3] = 255;
            }
        } else {
            uint32_t e0 = (uint32_t)dc->comp[0].hexp, e1 = (uint32_t)dc->comp[1].hexp,
                     e2 = (uint32_t)dc->comp[2].hexp;
            for (uint32_t x = 0; x < dc->out_w; x++) {
                int Y = src[0][x / e0], cb = src[1][x / e1], cr = src[2][x / e2];
                row[4 * x] = clamp255(Y + dc->crr[cr]);
                row[4 * x + 1] = clamp255(Y + (int)((dc->cbg[cb] + dc->crg[cr]) >> 16));
                row[4 * x + 2] = clamp255(Y + dc->cbb[cb]);
                row[4 * x + 3] = 255;
            }
        }
    }
    ic__dec_rows_done(d, 0, y0, y1 - y0, false);
}
