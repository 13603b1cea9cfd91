/*
 * gaussian.c — the separable Gaussian in fixed point (ic_blur_internal.h).
 *
 * For each output row, the vertical pass sums the source rows the kernel reaches
 * (edge rows repeated) into 32-bit accumulators, one multiply per pair of rows
 * the same distance away; the result, kept with 8 fractional bits, is padded with
 * copies of its edge pixels and the horizontal pass sums shifted copies of it the
 * same way. Every inner loop is a plain a[i] += c * (b[i] + d[i]) over restrict
 * arrays, which the compiler vectorises. Taps sum to 2^16 in both passes, so the
 * result carries 24 fractional bits and never overflows 32 bits (65280 * 2^16 < 2^32).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ic_blur_internal.h"
#include "ic_decode.h"
#include "ic_op_blur.h"

/* Rows between two reads of the cancellation flag. */
#define CANCEL_EVERY_ROWS 16


ic_status ic__gauss_kernel_make(double sigma, const char *what, ic__gauss_kernel *k, ic_error *err) {
    k->radius = 0;
    k->taps = NULL;
    if (!(sigma > 0) || !(sigma <= IC_BLUR_MAX_SIGMA)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "%s: sigma %g is not a number of pixels above 0 and at most %g", what,
                            sigma, IC_BLUR_MAX_SIGMA);
    }
    /* The largest offset whose weight is at least IC_BLUR_MIN_AMPLITUDE of the peak. */
    uint32_t radius = (uint32_t)floor(sigma * sqrt(-2.0 * log(IC_BLUR_MIN_AMPLITUDE)));
    double *w = malloc(sizeof(double) * (radius + 1));
    uint32_t *taps = malloc(sizeof(uint32_t) * (radius + 1));
    if (!w || !taps) {
        free(w);
        free(taps);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "%s: out of memory for the kernel", what);
    }
    double sum = 0;
    for (uint32_t x = 0; x <= radius; x++) {
        w[x] = exp(-(double)x * x / (2 * sigma * sigma));
        sum += x ? 2 * w[x] : w[x];
    }
    /* Largest remainders: the centre rounded, the side taps rounded down, then the pairs that
     * lost most each get one more until the sum is exact (the centre takes a last odd unit). */
    taps[0] = (uint32_t)floor(w[0] / sum * IC_GAUSS_ONE + 0.5);
    uint32_t total = taps[0];
    for (uint32_t x = 1; x <= radius; x++) {
        double exact = w[x] / sum * IC_GAUSS_ONE;
        taps[x] = (uint32_t)floor(exact);
        w[x] = exact - taps[x]; /* from here on: the remainder */
        total += 2 * taps[x];
    }
    while (total + 2 <= IC_GAUSS_ONE) {
        uint32_t best = 1;
        for (uint32_t x = 2; x <= radius; x++) {
            if (w[x] > w[best]) best = x;
        }
        taps[best]++;
        w[best] = -1;
        total += 2;
    }
    taps[0] += IC_GAUSS_ONE - total;
    free(w);
    k->radius = radius;
    k->taps = taps;
    return IC_OK;
}

void ic__gauss_kernel_free(ic__gauss_kernel *k) {
    free(k->taps);
    k->taps = NULL;
}

/*
 * The two passes, written once and compiled twice: for the baseline and, on x86-64, for AVX2
 * (chosen per call with __builtin_cpu_supports; no ifunc, so TSan builds work). Each works
 * through its row BLOCK values at a time: the block's sums stay in vector registers while
 * every tap is added, and are stored once.
 *
 * vertical: mid[i] = (sum over taps of taps[k] * rows[r ± k][i] + 2^7) >> 8, `rows` holding
 * the 2r + 1 source rows the kernel reaches, the centre at rows[r].
 * horizontal: out[i] = sum over taps of taps[k] * m[i ± 4k] (m padded by 4r values each side).
 */
#define BLOCK 32

#define IC_GAUSS_PASSES(SUFFIX, ATTR)                                                              \
    ATTR static void vertical##SUFFIX(uint16_t *restrict mid, const uint8_t *const *rows,          \
                                      const uint32_t *taps, uint32_t r, size_t n) {                \
        for (size_t i = 0; i < n; i += BLOCK) {                                                    \
            size_t len = n - i < BLOCK ? n - i : BLOCK;                                            \
            uint32_t a[BLOCK];                                                                     \
            const uint8_t *restrict centre = rows[r] + i;                                          \
            if (len == BLOCK) {                                                                    \
                for (size_t j = 0; j < BLOCK; j++) a[j] = taps[0] * centre[j];                     \
                for (uint32_t k = 1; k <= r; k++) {                                                \
                    const uint8_t *restrict up = rows[r - k] + i, *restrict down = rows[r + k] + i; \
                    const uint32_t c = taps[k];                                                    \
                    for (size_t j = 0; j < BLOCK; j++) a[j] += c * ((uint32_t)up[j] + down[j]);    \
                }                                                                                  \
                for (size_t j = 0; j < BLOCK; j++) mid[i + j] = (uint16_t)((a[j] + 128) >> 8);     \
            } else {                                                                               \
                for (size_t j = 0; j < len; j++) a[j] = taps[0] * centre[j];                       \
                for (uint32_t k = 1; k <= r; k++) {                                                \
                    const uint8_t *restrict up = rows[r - k] + i, *restrict down = rows[r + k] + i; \
                    for (size_t j = 0; j < len; j++) a[j] += taps[k] * ((uint32_t)up[j] + down[j]); \
                }                                                                                  \
                for (size_t j = 0; j < len; j++) mid[i + j] = (uint16_t)((a[j] + 128) >> 8);       \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    ATTR static void horizontal##SUFFIX(uint32_t *restrict out, const uint16_t *restrict m,        \
                                        const uint32_t *taps, uint32_t r, size_t n) {              \
        for (size_t i = 0; i < n; i += BLOCK) {                                                    \
            size_t len = n - i < BLOCK ? n - i : BLOCK;                                            \
            uint32_t a[BLOCK];                                                                     \
            const uint16_t *restrict centre = m + i;                                               \
            if (len == BLOCK) {                                                                    \
                for (size_t j = 0; j < BLOCK; j++) a[j] = taps[0] * centre[j];                     \
                for (uint32_t k = 1; k <= r; k++) {                                                \
                    const uint16_t *restrict left = centre - 4 * (size_t)k;                        \
                    const uint16_t *restrict right = centre + 4 * (size_t)k;                       \
                    const uint32_t c = taps[k];                                                    \
                    for (size_t j = 0; j < BLOCK; j++) a[j] += c * ((uint32_t)left[j] + right[j]); \
                }                                                                                  \
                for (size_t j = 0; j < BLOCK; j++) out[i + j] = a[j];                              \
            } else {                                                                               \
                for (size_t j = 0; j < len; j++) a[j] = taps[0] * centre[j];                       \
                for (uint32_t k = 1; k <= r; k++) {                                                \
                    const uint16_t *restrict left = centre - 4 * (size_t)k;                        \
                    const uint16_t *restrict right = centre + 4 * (size_t)k;                       \
                    for (size_t j = 0; j < len; j++) a[j] += taps[k] * ((uint32_t)left[j] + right[j]); \
                }                                                                                  \
                for (size_t j = 0; j < len; j++) out[i + j] = a[j];                                \
            }                                                                                      \
        }                                                                                          \
    }

IC_GAUSS_PASSES(_base, )

typedef struct gauss_passes {
    void (*vertical)(uint16_t *restrict, const uint8_t *const *, const uint32_t *, uint32_t, size_t);
    void (*horizontal)(uint32_t *restrict, const uint16_t *restrict, const uint32_t *, uint32_t, size_t);
} gauss_passes;

#if defined(__x86_64__) && defined(__clang__) && !defined(IC_NO_CPU_DISPATCH)
IC_GAUSS_PASSES(_avx2, __attribute__((target("avx2"))))
#define IC_HAVE_AVX2_GAUSS 1
#endif

static gauss_passes choose_passes(void) {
#ifdef IC_HAVE_AVX2_GAUSS
    if (__builtin_cpu_supports("avx2")) return (gauss_passes){vertical_avx2, horizontal_avx2};
#endif
    return (gauss_passes){vertical_base, horizontal_base};
}

ic_status ic__gauss_frame(const uint8_t *frame, size_t stride, uint32_t width, uint32_t height,
                         const ic__gauss_kernel *k, const int *cancel_flag, const char *what,
                         ic_gauss_row_sink sink, void *ctx, ic_error *err) {
    const uint32_t r = k->radius;
    const size_t n = 4 * (size_t)width, pad = 4 * (size_t)r;
    uint32_t *out = malloc(sizeof(uint32_t) * n);
    uint16_t *mid = malloc(sizeof(uint16_t) * (n + 2 * pad));
    const uint8_t **rows = malloc(sizeof(*rows) * (2 * (size_t)r + 1));
    if (!out || !mid || !rows) {
        free(out);
        free(mid);
        free(rows);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "%s: out of memory for a %u-pixel row", what,
                            width);
    }
    const gauss_passes P = choose_passes();
    uint16_t *row = mid + pad;
    ic_status st = IC_OK;
    for (uint32_t y = 0; y < height; y++) {
        if (cancel_flag && y % CANCEL_EVERY_ROWS == 0 && ic_cancel_flag_get(cancel_flag)) {
            st = ic__set_error(err, IC_ERR_CANCELLED, "%s: cancelled", what);
            break;
        }
        /* The rows the kernel reaches, the edge rows repeated past the top and bottom. */
        for (int64_t d = -(int64_t)r; d <= (int64_t)r; d++) {
            int64_t yy = (int64_t)y + d;
            yy = yy < 0 ? 0 : yy >= (int64_t)height ? (int64_t)height - 1 : yy;
            rows[d + r] = frame + (size_t)yy * stride;
        }
        P.vertical(row, rows, k->taps, r, n);
        for (size_t p = 0; p < pad; p += 4) {
            memcpy(mid + p, row, 4 * sizeof(uint16_t));
            memcpy(row + n + p, row + n - 4, 4 * sizeof(uint16_t));
        }
        P.horizontal(out, row, k->taps, r, n);
        sink(ctx, y, out);
    }
    free(out);
    free(mid);
    free(rows);
    return st;
}
