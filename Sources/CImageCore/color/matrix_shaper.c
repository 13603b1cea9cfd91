/*
 * matrix_shaper.c — ImageKit's own conversion of RGB matrix/shaper sources
 * (P3, Adobe RGB, most camera profiles) to sRGB: per-channel tone curve, a 3x3
 * matrix in linear light, the sRGB encoding. icc.c builds one from a profile and
 * keeps it only when it agrees with lcms (see there).
 *
 * Three kernels, chosen once per process from the CPU:
 *
 * - AVX-512 with VNNI, 64 pixels a step, planar: the pixels are split into planes of
 *   R, G and B bytes; each curve is a 256-entry table of 15-bit linear values held in
 *   registers (vpermi2b, as below); the matrix runs on 16-bit pairs into 32-bit sums
 *   (vpdpwssd, coefficients in 1/4096) and is packed back to 16-bit linear values with
 *   unsigned saturation (the clamp); the encoding is 128 straight segments over the
 *   linear value, 64 of 64 steps below 4096 (sRGB's steep start) and 60 of 1024 above,
 *   evaluated in 16-bit fixed point (a word table lookup and a multiply-high), within half a
 *   level of the exact value before rounding. The last 0 to 63 pixels of a row go through
 *   the kernel below.
 * - AVX-512 (F, BW, VBMI), 16 pixels a step, no memory lookups per pixel: the
 *   curves are 256-entry tables of 16-bit linear values held in registers as
 *   low and high bytes (vpermi2b looks up 128 entries at a time); the matrix runs
 *   on floats; the encoding is evaluated as a function of s = sqrt(linear)
 *   (rsqrt14 times the value), where sRGB's curve is smooth enough for 32
 *   straight segments held in registers (vpermi2ps) to stay within 0.1 level
 *   of the exact value, plus sRGB's linear toe computed exactly.
 * - Elsewhere: float tables and a 16384-entry encoding table, vectorised by the
 *   compiler for AVX2 + FMA where the CPU has it (gathers).
 *
 * Alpha is left as it is in both. Builds for other CPUs, and builds with
 * IC_NO_CPU_DISPATCH (as premul.c and resample.c), have the portable loop only.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ic_color_internal.h"
#include "ic_color_testing.h"

#if defined(__x86_64__) && defined(__clang__) && !defined(IC_NO_CPU_DISPATCH)
#define IC_MS_SIMD 1
#include <immintrin.h>
#endif

/* sRGB's encoding: linear light in 0...1 to 0...1. */
static double srgb_oetf(double v) {
    return v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055;
}

/* The straight line through g at lo and hi, moved by half its largest error over [lo, hi] (257
 * samples) either way: its value at lo and its slope. Both AVX-512 kernels' encodings are made
 * of such segments. */
static void fit_chord(double (*g)(double), double lo, double hi, double *start, double *slope) {
    double y0 = g(lo);
    *slope = (g(hi) - y0) / (hi - lo);
    double most = 0, least = 0;
    for (int k = 0; k <= 256; k++) {
        double x = lo + (hi - lo) * k / 256, e = g(x) - (y0 + *slope * (x - lo));
        if (e > most) most = e;
        if (e < least) least = e;
    }
    *start = y0 + (most + least) / 2;
}

/* ---- The portable kernel. ---- */

#define ENCODE_SIZE 16384
#define ENCODE_ONE ((float)(ENCODE_SIZE - 1))

static uint8_t srgb_encode[ENCODE_SIZE];
#ifdef IC_MS_SIMD
static bool have_avx2, have_avx512, have_vnni;

/* The planar kernel's encoding: 255 * sRGB(x / 65535) ~ (enc_a[i] + enc_b[i] * offset / 65536) /
 * 256 on segment i (see the top of the file); enc_a holds the +128 that rounds. */
#define ENC_SEGMENTS 128
static uint16_t enc_a[ENC_SEGMENTS], enc_b[ENC_SEGMENTS];

/* The planar kernel's byte orders: sixteen pixels' bytes grouped by channel (R0-15, G0-15,
 * B0-15, A0-15), and back from the planes: byte 4i + c of the k-th sixteen pixels is byte
 * 16k + i of plane c (R and G from one permute of two planes, B from a second). */
static uint8_t planar_group[64], planar_rg[4][64], planar_b[4][64];

static void fill_planar_orders(void) {
    for (int i = 0; i < 16; i++) {
        for (int c = 0; c < 4; c++) planar_group[16 * c + i] = (uint8_t)(4 * i + c);
        for (int k = 0; k < 4; k++) {
            planar_rg[k][4 * i] = (uint8_t)(16 * k + i);
            planar_rg[k][4 * i + 1] = (uint8_t)(64 + 16 * k + i);
            planar_b[k][4 * i + 2] = (uint8_t)(16 * k + i);
        }
    }
}

/* Linear value (0...65535) where segment i starts and how wide it is. */
static void enc_segment(int i, double *start, double *width) {
    if (i < 64) {
        *start = 64.0 * i;
        *width = 64;
    } else {
        *start = i < 124 ? (double)((i - 60) << 10) : 65535;
        *width = 1024;
    }
}

/* 255 * sRGB of a 16-bit linear value (1.0 at 65535; clamped). */
static double enc_exact(double x) { return 255.0 * srgb_oetf(x >= 65535 ? 1 : x / 65535); }

/* Each segment's chord (fit_chord), in the kernel's fixed point. */
static void fit_encoding(void) {
    for (int i = 0; i < ENC_SEGMENTS; i++) {
        double x0, w, start, slope;
        enc_segment(i, &x0, &w);
        fit_chord(enc_exact, x0, x0 + w, &start, &slope);
        enc_a[i] = (uint16_t)lround(start * 256 + 128);
        enc_b[i] = (uint16_t)lround(slope * w * 256);
    }
}
#endif /* IC_MS_SIMD */

void ic__ms_init(void) {
    /* Entry i serves linear values in [i, i + 1): it encodes the midpoint. */
    for (int i = 0; i < ENCODE_SIZE; i++) {
        double mid = ((double)i + 0.5) / (ENCODE_SIZE - 1);
        srgb_encode[i] = (uint8_t)lround(srgb_oetf(mid > 1 ? 1 : mid) * 255.0);
    }
#ifdef IC_MS_SIMD
    fit_encoding();
    fill_planar_orders();
    __builtin_cpu_init();
    have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    have_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vbmi");
    have_vnni = have_avx512 && __builtin_cpu_supports("avx512vnni");
#endif
}

/* One loop, compiled twice (baseline and AVX2 + FMA, where clang vectorises it). Its shape is
 * what clang 17 vectorises: clamps written out, the index truncated (the encoding table holds
 * each interval's midpoint); an inline clamp function, or rounding here, left it scalar. */
#define TABLE_LOOP(f, p, width)                                                                  \
    do {                                                                                         \
        const float *m = (f)->matrix;                                                            \
        for (uint32_t x = 0; x < (width); x++) {                                                 \
            float r = (f)->linear[0][(p)[4 * x]], g = (f)->linear[1][(p)[4 * x + 1]],            \
                  b = (f)->linear[2][(p)[4 * x + 2]];                                            \
            float o0 = m[0] * r + m[1] * g + m[2] * b;                                           \
            float o1 = m[3] * r + m[4] * g + m[5] * b;                                           \
            float o2 = m[6] * r + m[7] * g + m[8] * b;                                           \
            o0 = o0 < 0 ? 0 : o0 > ENCODE_ONE ? ENCODE_ONE : o0;                                 \
            o1 = o1 < 0 ? 0 : o1 > ENCODE_ONE ? ENCODE_ONE : o1;                                 \
            o2 = o2 < 0 ? 0 : o2 > ENCODE_ONE ? ENCODE_ONE : o2;                                 \
            (p)[4 * x] = srgb_encode[(int)o0];                                                   \
            (p)[4 * x + 1] = srgb_encode[(int)o1];                                               \
            (p)[4 * x + 2] = srgb_encode[(int)o2];                                               \
        }                                                                                        \
    } while (0)

static void table_plain(const ic__matrix_shaper *restrict f, uint8_t *restrict p, uint32_t width) {
    TABLE_LOOP(f, p, width);
}

#ifdef IC_MS_SIMD
__attribute__((target("avx2,fma"))) static void table_avx2(const ic__matrix_shaper *restrict f,
                                                           uint8_t *restrict p, uint32_t width) {
    TABLE_LOOP(f, p, width);
}
#endif

/* ---- The AVX-512 kernel. ---- */

/* Below this linear value sRGB's encoding is the straight line 12.92 x. */
#define SRGB_TOE 0.0031308
/* Encoding segments over s = sqrt(linear) in [0, 1]. */
#define SEGMENTS 32

/* 255 * sRGB's encoding of s * s: the curve the 16-pixel kernel's segments follow over s. */
static double encoded_of_root(double s) { return 255 * srgb_oetf(s * s); }

/* Fills seg_a/seg_b so that 255 * srgb_oetf(s * s) ~ seg_a[i] + seg_b[i] * s on segment i
 * (the part of it above the toe), by fit_chord. */
static void fit_segments(ic__matrix_shaper *f) {
    double toe_s = sqrt(SRGB_TOE);
    for (int i = 0; i < SEGMENTS; i++) {
        double lo = (double)i / SEGMENTS, hi = (double)(i + 1) / SEGMENTS;
        if (hi <= toe_s) { /* entirely in the toe, which is computed exactly */
            f->seg_a[i] = 0;
            f->seg_b[i] = 0;
            continue;
        }
        if (lo < toe_s) lo = toe_s;
        double start, slope;
        fit_chord(encoded_of_root, lo, hi, &start, &slope);
        f->seg_a[i] = (float)(start - slope * lo);
        f->seg_b[i] = (float)slope;
    }
}

#ifdef IC_MS_SIMD
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/* 16-bit linear values of 64 bytes through one curve held as lo/hi byte tables. */
AVX512 static inline void lookup(const __m512i t[8], __m512i px, __mmask64 top, __m512i *lo,
                                 __m512i *hi) {
    *lo = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(t[0], px, t[1]),
                                 _mm512_permutex2var_epi8(t[2], px, t[3]));
    *hi = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(t[4], px, t[5]),
                                 _mm512_permutex2var_epi8(t[6], px, t[7]));
}

/* Linear floats (4 pixels, RGBA lanes; alpha lane 0) to encoded sRGB levels as int32. */
AVX512 static inline __m512i encode4(__m512 v, __m512 c0, __m512 c1, __m512 c2, __m512 a0,
                                     __m512 a1, __m512 b0, __m512 b1) {
    __m512 r = _mm512_permute_ps(v, 0x00), g = _mm512_permute_ps(v, 0x55),
           b = _mm512_permute_ps(v, 0xAA);
    __m512 x = _mm512_fmadd_ps(b, c2, _mm512_fmadd_ps(g, c1, _mm512_mul_ps(r, c0)));
    /* Clamped to (0, 1]: the lower bound keeps rsqrt finite and encodes as 0. */
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(1e-20f)), _mm512_set1_ps(1.0f));
    __m512 s = _mm512_mul_ps(x, _mm512_rsqrt14_ps(x));
    __m512i i = _mm512_min_epi32(_mm512_cvttps_epi32(_mm512_mul_ps(s, _mm512_set1_ps(SEGMENTS))),
                                 _mm512_set1_epi32(SEGMENTS - 1));
    __m512 y = _mm512_fmadd_ps(_mm512_permutex2var_ps(b0, i, b1), s,
                               _mm512_permutex2var_ps(a0, i, a1));
    __mmask16 toe = _mm512_cmp_ps_mask(x, _mm512_set1_ps((float)SRGB_TOE), _CMP_LT_OQ);
    y = _mm512_mask_mul_ps(y, toe, x, _mm512_set1_ps((float)(12.92 * 255)));
    return _mm512_cvtps_epi32(y);
}

AVX512 static void convert_avx512(const ic__matrix_shaper *f, uint8_t *p, uint32_t width) {
    __m512i t[3][8];
    int curves = f->same_curves ? 1 : 3;
    for (int c = 0; c < curves; c++) {
        for (int k = 0; k < 4; k++) {
            t[c][k] = _mm512_loadu_si512(f->lin_lo[c] + 64 * k);
            t[c][4 + k] = _mm512_loadu_si512(f->lin_hi[c] + 64 * k);
        }
    }
    __m512 c0 = _mm512_loadu_ps(f->columns[0]), c1 = _mm512_loadu_ps(f->columns[1]),
           c2 = _mm512_loadu_ps(f->columns[2]);
    __m512 a0 = _mm512_loadu_ps(f->seg_a), a1 = _mm512_loadu_ps(f->seg_a + 16);
    __m512 b0 = _mm512_loadu_ps(f->seg_b), b1 = _mm512_loadu_ps(f->seg_b + 16);
    /* Puts the pixels back in order after the packs (see below). */
    const __m512i order = _mm512_setr_epi32(0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15);
    const __mmask64 alpha = 0x8888888888888888ull;
    const __mmask64 green = 0x2222222222222222ull, blue = 0x4444444444444444ull;
    for (uint32_t x = 0; x < width; x += 16) {
        uint32_t n = width - x < 16 ? width - x : 16;
        __mmask64 live = n == 16 ? ~0ull : (1ull << (4 * n)) - 1;
        /* Masked byte loads and stores are slow on some CPUs: only the tail uses them. */
        __m512i px = n == 16 ? _mm512_loadu_si512(p + 4 * (size_t)x)
                             : _mm512_maskz_loadu_epi8(live, p + 4 * (size_t)x);
        __mmask64 top = _mm512_movepi8_mask(px);
        __m512i lo, hi;
        lookup(t[0], px, top, &lo, &hi);
        if (curves == 3) {
            __m512i lo1, hi1, lo2, hi2;
            lookup(t[1], px, top, &lo1, &hi1);
            lookup(t[2], px, top, &lo2, &hi2);
            lo = _mm512_mask_blend_epi8(blue, _mm512_mask_blend_epi8(green, lo, lo1), lo2);
            hi = _mm512_mask_blend_epi8(blue, _mm512_mask_blend_epi8(green, hi, hi1), hi2);
        }
        /* Words: w0 holds pixels 0,1 of each 128-bit lane, w1 pixels 2,3. */
        __m512i w0 = _mm512_unpacklo_epi8(lo, hi), w1 = _mm512_unpackhi_epi8(lo, hi);
        /* Floats, one pixel a lane: v0 = pixels 0,1,4,5; v1 = 8,9,12,13; v2 = 2,3,6,7; v3 = 10,11,14,15. */
        __m512 v0 = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(w0)));
        __m512 v1 = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(w0, 1)));
        __m512 v2 = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(w1)));
        __m512 v3 = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(w1, 1)));
        __m512i e0 = encode4(v0, c0, c1, c2, a0, a1, b0, b1);
        __m512i e1 = encode4(v1, c0, c1, c2, a0, a1, b0, b1);
        __m512i e2 = encode4(v2, c0, c1, c2, a0, a1, b0, b1);
        __m512i e3 = encode4(v3, c0, c1, c2, a0, a1, b0, b1);
        /* Packs work per 128-bit lane: lane k of the result holds pixels (0,2,8,10) + k for
         * k = 0, 1 and (4,6,12,14) + k - 2 for k = 2, 3, four bytes each. */
        __m512i packed = _mm512_packus_epi16(_mm512_packus_epi32(e0, e2), _mm512_packus_epi32(e1, e3));
        __m512i out = _mm512_permutexvar_epi32(order, packed);
        out = _mm512_mask_blend_epi8(alpha, out, px);
        if (n == 16) {
            _mm512_storeu_si512(p + 4 * (size_t)x, out);
        } else {
            _mm512_mask_storeu_epi8(p + 4 * (size_t)x, live, out);
        }
    }
}
/* ---- The planar AVX-512 + VNNI kernel. ---- */

#define PLANAR __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vnni")))

/* One byte plane through a curve (lookup: t[0-3] low bytes, t[4-7] high): its 15-bit linear
 * values as words, bytes 0-7 of each 128-bit lane in *w0 and bytes 8-15 in *w1. */
PLANAR static inline void plane_words(const __m512i t[8], __m512i plane, __m512i *w0, __m512i *w1) {
    __m512i lo, hi;
    lookup(t, plane, _mm512_movepi8_mask(plane), &lo, &hi);
    *w0 = _mm512_unpacklo_epi8(lo, hi);
    *w1 = _mm512_unpackhi_epi8(lo, hi);
}

/* 16-bit linear values to encoded levels (words of 0...255), by the segments of fit_encoding. */
PLANAR static inline __m512i encode_words(__m512i x, const __m512i a[4], const __m512i b[4]) {
    __mmask32 dark = _mm512_cmplt_epu16_mask(x, _mm512_set1_epi16(4096));
    __m512i i = _mm512_mask_blend_epi16(dark, _mm512_add_epi16(_mm512_srli_epi16(x, 10), _mm512_set1_epi16(60)),
                                        _mm512_srli_epi16(x, 6));
    __mmask32 upper = _mm512_test_epi16_mask(i, _mm512_set1_epi16(64));
    __m512i ya = _mm512_mask_blend_epi16(upper, _mm512_permutex2var_epi16(a[0], i, a[1]),
                                         _mm512_permutex2var_epi16(a[2], i, a[3]));
    __m512i yb = _mm512_mask_blend_epi16(upper, _mm512_permutex2var_epi16(b[0], i, b[1]),
                                         _mm512_permutex2var_epi16(b[2], i, b[3]));
    /* The offset into the segment, scaled to 16 bits: the shift drops the bits above it. */
    __m512i offset = _mm512_sllv_epi16(x, _mm512_mask_blend_epi16(dark, _mm512_set1_epi16(6), _mm512_set1_epi16(10)));
    return _mm512_srli_epi16(_mm512_add_epi16(ya, _mm512_mulhi_epu16(yb, offset)), 8);
}

PLANAR static void convert_planar(const ic__matrix_shaper *f, uint8_t *p, uint32_t width) {
    __m512i t[3][8], a[4], b[4], rg[3], b1[3];
    for (int c = 0; c < 3; c++) {
        int curve = f->same_curves ? 0 : c;
        for (int k = 0; k < 4; k++) {
            t[c][k] = _mm512_loadu_si512(f->lin15_lo[curve] + 64 * k);
            t[c][4 + k] = _mm512_loadu_si512(f->lin15_hi[curve] + 64 * k);
        }
        rg[c] = _mm512_set1_epi32(f->pair_rg[c]);
        b1[c] = _mm512_set1_epi32(f->pair_b[c]);
    }
    for (int k = 0; k < 4; k++) {
        a[k] = _mm512_loadu_si512(enc_a + 32 * k);
        b[k] = _mm512_loadu_si512(enc_b + 32 * k);
    }
    const __m512i group = _mm512_loadu_si512(planar_group), ones = _mm512_set1_epi16(1);
    __m512i to_rg[4], to_b[4];
    for (int k = 0; k < 4; k++) {
        to_rg[k] = _mm512_loadu_si512(planar_rg[k]);
        to_b[k] = _mm512_loadu_si512(planar_b[k]);
    }
    const __mmask64 blue = 0x4444444444444444ull, alpha = 0x8888888888888888ull;
    for (uint32_t x = 0; x + 64 <= width; x += 64) {
        uint8_t *q = p + 4 * (size_t)x;
        __m512i v[4], c[4];
        for (int k = 0; k < 4; k++) {
            v[k] = _mm512_loadu_si512(q + 64 * k);
            c[k] = _mm512_permutexvar_epi8(group, v[k]);
        }
        __m512i rg01 = _mm512_shuffle_i64x2(c[0], c[1], 0x44), rg23 = _mm512_shuffle_i64x2(c[2], c[3], 0x44);
        __m512i ba01 = _mm512_shuffle_i64x2(c[0], c[1], 0xEE), ba23 = _mm512_shuffle_i64x2(c[2], c[3], 0xEE);
        __m512i planes[3] = {_mm512_shuffle_i64x2(rg01, rg23, 0x88), _mm512_shuffle_i64x2(rg01, rg23, 0xDD),
                             _mm512_shuffle_i64x2(ba01, ba23, 0x88)};
        __m512i w0[3], w1[3];
        for (int ch = 0; ch < 3; ch++) plane_words(t[ch], planes[ch], &w0[ch], &w1[ch]);
        /* (R, G) and (B, 1) word pairs, four pixels a 128-bit lane in each. */
        __m512i rgp[4] = {_mm512_unpacklo_epi16(w0[0], w0[1]), _mm512_unpackhi_epi16(w0[0], w0[1]),
                          _mm512_unpacklo_epi16(w1[0], w1[1]), _mm512_unpackhi_epi16(w1[0], w1[1])};
        __m512i bp[4] = {_mm512_unpacklo_epi16(w0[2], ones), _mm512_unpackhi_epi16(w0[2], ones),
                         _mm512_unpacklo_epi16(w1[2], ones), _mm512_unpackhi_epi16(w1[2], ones)};
        __m512i out[3];
        for (int o = 0; o < 3; o++) {
            __m512i sum[4];
            for (int g = 0; g < 4; g++) {
                sum[g] = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(_mm512_setzero_si512(), rgp[g], rg[o]), bp[g], b1[o]);
                sum[g] = _mm512_srai_epi32(sum[g], 11);
            }
            /* The packs undo the unpacks' order and clamp to 0...65535. */
            __m512i lin0 = _mm512_packus_epi32(sum[0], sum[1]), lin1 = _mm512_packus_epi32(sum[2], sum[3]);
            out[o] = _mm512_packus_epi16(encode_words(lin0, a, b), encode_words(lin1, a, b));
        }
        for (int k = 0; k < 4; k++) {
            __m512i px = _mm512_permutex2var_epi8(out[0], to_rg[k], out[1]);
            px = _mm512_mask_permutexvar_epi8(px, blue, to_b[k], out[2]);
            _mm512_storeu_si512(q + 64 * k, _mm512_mask_blend_epi8(alpha, px, v[k]));
        }
    }
    uint32_t done = width / 64 * 64;
    if (done < width) convert_avx512(f, p + 4 * (size_t)done, width - done);
}
#endif /* IC_MS_SIMD */

/* ---- Building and converting. ---- */

bool ic__ms_build(ic__matrix_shaper *f, const double linear[3][256], const double matrix[3][3]) {
    memset(f, 0, sizeof *f);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            if (fabs(matrix[r][c]) > 4) return false;
            f->matrix[r * 3 + c] = (float)matrix[r][c];
        }
    }
    f->same_curves = true;
    for (int c = 0; c < 3; c++) {
        for (int v = 0; v < 256; v++) {
            double lin = linear[c][v] < 0 ? 0 : linear[c][v] > 1 ? 1 : linear[c][v];
            f->linear[c][v] = (float)(lin * ENCODE_ONE);
            uint16_t q = (uint16_t)lround(lin * 65535.0);
            f->lin_lo[c][v] = (uint8_t)q;
            f->lin_hi[c][v] = (uint8_t)(q >> 8);
            uint16_t q15 = (uint16_t)lround(lin * 32767.0);
            f->lin15_lo[c][v] = (uint8_t)q15;
            f->lin15_hi[c][v] = (uint8_t)(q15 >> 8);
            if (c > 0 && (f->lin_lo[c][v] != f->lin_lo[0][v] || f->lin_hi[c][v] != f->lin_hi[0][v])) {
                f->same_curves = false;
            }
        }
    }
    /* Column k, per pixel lane: what source channel k adds to R, G and B (alpha lane 0). The
     * 16-bit curve scale is folded in. */
    for (int k = 0; k < 3; k++) {
        for (int px = 0; px < 4; px++) {
            for (int out = 0; out < 3; out++) {
                f->columns[k][px * 4 + out] = (float)(matrix[out][k] / 65535.0);
            }
            f->columns[k][px * 4 + 3] = 0;
        }
    }
    /* The planar kernel's coefficients in 1/4096 as word pairs: (R, G), and (B, the 1 << 10
     * that rounds the sum's shift by 11 from 15-bit inputs times 1/4096 to 16-bit outputs). */
    for (int out = 0; out < 3; out++) {
        long r = lround(matrix[out][0] * 4096), g = lround(matrix[out][1] * 4096), b = lround(matrix[out][2] * 4096);
        f->pair_rg[out] = (int32_t)((uint32_t)(uint16_t)(int16_t)r | (uint32_t)(uint16_t)(int16_t)g << 16);
        f->pair_b[out] = (int32_t)((uint32_t)(uint16_t)(int16_t)b | (uint32_t)1024 << 16);
    }
    fit_segments(f);
    return true;
}

void ic__ms_convert(const ic__matrix_shaper *f, uint8_t *row, uint32_t width) {
#ifdef IC_MS_SIMD
    if (have_vnni) {
        convert_planar(f, row, width);
        return;
    }
    if (have_avx512) {
        convert_avx512(f, row, width);
        return;
    }
    if (have_avx2) {
        table_avx2(f, row, width);
        return;
    }
#endif
    table_plain(f, row, width);
}

bool ic__ms_convert_kernel(const ic__matrix_shaper *f, int kernel, uint8_t *row, uint32_t width) {
    switch (kernel) {
    case IC_COLOR_KERNEL_PORTABLE:
        table_plain(f, row, width);
        return true;
#ifdef IC_MS_SIMD
    case IC_COLOR_KERNEL_AVX2:
        if (!have_avx2) return false;
        table_avx2(f, row, width);
        return true;
    case IC_COLOR_KERNEL_AVX512:
        if (!have_avx512) return false;
        convert_avx512(f, row, width);
        return true;
    case IC_COLOR_KERNEL_AVX512_PLANAR:
        if (!have_vnni) return false;
        convert_planar(f, row, width);
        return true;
#endif
    default:
        return false;
    }
}
