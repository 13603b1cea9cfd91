/*
 * premul.c — premultiplying and un-premultiplying RGBA8 rows.
 *
 * p = (c*a + 127) / 255 is computed as t = c*a + 128; p = (t + (t >> 8)) >> 8,
 * which gives the same result for all 65,536 inputs and vectorises. Rows that
 * are fully opaque are detected first and left untouched (the premultiply is
 * the identity there). On x86-64 an AVX2 copy of the loop is chosen at run
 * time with __builtin_cpu_supports; no ifunc, so TSan builds work.
 *
 * The resampler reads straight rows through ic__premultiply_to_float: the same
 * values, premultiplied in registers on their way to floats, so the row is
 * neither written back nor read twice.
 */
#include <pthread.h>
#include <string.h>

#include "ic_image_internal.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "premul.c assumes a little-endian target"
#endif

static inline uint32_t load32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline void store32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* AND of every pixel: alpha byte 0xFF means the row is opaque. */
#define IC_OPAQUE_BODY                                   \
    uint32_t acc = 0xFFFFFFFFu;                          \
    for (size_t i = 0; i < count; i++) acc &= load32(px + 4 * i); \
    return (acc >> 24) == 0xFFu;

#define IC_PREMUL_BODY                                   \
    for (size_t i = 0; i < count; i++) {                 \
        uint32_t v = load32(px + 4 * i);                 \
        uint32_t a = v >> 24;                            \
        uint32_t r = ic__mul255(v & 0xFFu, a);            \
        uint32_t g = ic__mul255((v >> 8) & 0xFFu, a);     \
        uint32_t b = ic__mul255((v >> 16) & 0xFFu, a);    \
        store32(px + 4 * i, r | (g << 8) | (b << 16) | (a << 24)); \
    }

static bool row_opaque_generic(const uint8_t *px, size_t count) { IC_OPAQUE_BODY }
static void premul_generic(uint8_t *px, size_t count) { IC_PREMUL_BODY }

static void premul_float_generic(const uint8_t *px, float *out, size_t count) {
    for (size_t i = 0; i < count; i++) {
        const uint8_t *p = px + 4 * i;
        float *o = out + 4 * i;
        uint32_t a = p[3];
        o[0] = (float)ic__mul255(p[0], a);
        o[1] = (float)ic__mul255(p[1], a);
        o[2] = (float)ic__mul255(p[2], a);
        o[3] = (float)a;
    }
}

#if defined(__x86_64__) && defined(__clang__) && !defined(IC_NO_CPU_DISPATCH)
#include <immintrin.h>
#define IC_HAVE_AVX2_PATH 1
__attribute__((target("avx2"))) static bool row_opaque_avx2(const uint8_t *px, size_t count) {
    IC_OPAQUE_BODY
}
__attribute__((target("avx2"))) static void premul_avx2(uint8_t *px, size_t count) {
    IC_PREMUL_BODY
}

/* ic__mul255 on sixteen 16-bit lanes: t = c * a + 128 fits, and so does t + (t >> 8). */
__attribute__((target("avx2"))) static inline __m256i mul255_epi16(__m256i c, __m256i a) {
    __m256i t = _mm256_add_epi16(_mm256_mullo_epi16(c, a), _mm256_set1_epi16(128));
    return _mm256_srli_epi16(_mm256_add_epi16(t, _mm256_srli_epi16(t, 8)), 8);
}

/* Eight pixels a step. Eight opaque pixels are only widened, eight transparent ones are
 * zeros; others are widened to 16 bits per channel, each channel multiplied by its pixel's
 * alpha and alpha by 255 (ic__mul255(a, 255) is a), and the results widened to 32 bits and
 * converted, two pixels per register, then put back in pixel order. */
__attribute__((target("avx2"))) static void premul_float_avx2(const uint8_t *px, float *out,
                                                               size_t count) {
    const __m256i zero = _mm256_setzero_si256();
    /* Byte shuffles giving each 16-bit channel of pixels 0, 1 (resp. 2, 3) of a 128-bit lane
     * its pixel's alpha (byte 3, 7, 11 or 15), and 0 in the alpha channel itself. */
    const __m256i alpha01 = _mm256_setr_epi8(3, -1, 3, -1, 3, -1, -1, -1, 7, -1, 7, -1, 7, -1, -1, -1,
                                             3, -1, 3, -1, 3, -1, -1, -1, 7, -1, 7, -1, 7, -1, -1, -1);
    const __m256i alpha23 = _mm256_setr_epi8(11, -1, 11, -1, 11, -1, -1, -1, 15, -1, 15, -1, 15, -1, -1, -1,
                                             11, -1, 11, -1, 11, -1, -1, -1, 15, -1, 15, -1, 15, -1, -1, -1);
    const __m256i alpha_by_255 = _mm256_set1_epi64x((long long)0x00FF000000000000ull);
    const __m256i alpha_bits = _mm256_set1_epi32((int)0xFF000000u);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(px + 4 * i));
        float *o = out + 4 * i;
        __m256i alphas = _mm256_and_si256(v, alpha_bits);
        if (_mm256_testc_si256(alphas, alpha_bits)) {
            for (int k = 0; k < 4; k++) {
                __m128i two = _mm_loadl_epi64((const __m128i *)(px + 4 * i + 8 * k));
                _mm256_storeu_ps(o + 8 * k, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(two)));
            }
            continue;
        }
        if (_mm256_testz_si256(v, alpha_bits)) {
            for (int k = 0; k < 4; k++) _mm256_storeu_ps(o + 8 * k, _mm256_setzero_ps());
            continue;
        }
        __m256i m01 = _mm256_or_si256(_mm256_shuffle_epi8(v, alpha01), alpha_by_255);
        __m256i m23 = _mm256_or_si256(_mm256_shuffle_epi8(v, alpha23), alpha_by_255);
        /* Lanes: pixels 0, 1 | 4, 5 and 2, 3 | 6, 7. */
        __m256i p01 = mul255_epi16(_mm256_unpacklo_epi8(v, zero), m01);
        __m256i p23 = mul255_epi16(_mm256_unpackhi_epi8(v, zero), m23);
        __m256 f04 = _mm256_cvtepi32_ps(_mm256_unpacklo_epi16(p01, zero));
        __m256 f15 = _mm256_cvtepi32_ps(_mm256_unpackhi_epi16(p01, zero));
        __m256 f26 = _mm256_cvtepi32_ps(_mm256_unpacklo_epi16(p23, zero));
        __m256 f37 = _mm256_cvtepi32_ps(_mm256_unpackhi_epi16(p23, zero));
        _mm256_storeu_ps(o, _mm256_permute2f128_ps(f04, f15, 0x20));
        _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(f26, f37, 0x20));
        _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(f04, f15, 0x31));
        _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(f26, f37, 0x31));
    }
    premul_float_generic(px + 4 * i, out + 4 * i, count - i);
}
#endif

typedef bool (*opaque_fn)(const uint8_t *, size_t);
typedef void (*premul_fn)(uint8_t *, size_t);
typedef void (*premul_float_fn)(const uint8_t *, float *, size_t);

struct premul_impl {
    opaque_fn opaque;
    premul_fn premul;
    premul_float_fn premul_float;
};

static struct premul_impl pick_impl(void) {
#ifdef IC_HAVE_AVX2_PATH
    if (__builtin_cpu_supports("avx2")) {
        return (struct premul_impl){row_opaque_avx2, premul_avx2, premul_float_avx2};
    }
#endif
    return (struct premul_impl){row_opaque_generic, premul_generic, premul_float_generic};
}

static pthread_once_t impl_once = PTHREAD_ONCE_INIT;
static struct premul_impl impl_chosen;

static void choose_impl(void) { impl_chosen = pick_impl(); }

bool ic__pixels_opaque(const uint8_t *rgba, size_t count) {
    pthread_once(&impl_once, choose_impl);
    return impl_chosen.opaque(rgba, count);
}

int ic_premultiply_row(uint8_t *rgba, size_t count) {
    pthread_once(&impl_once, choose_impl);
    if (impl_chosen.opaque(rgba, count)) return 1;
    impl_chosen.premul(rgba, count);
    return 0;
}

void ic__premultiply_to_float(const uint8_t *rgba, float *out, size_t count) {
    pthread_once(&impl_once, choose_impl);
    impl_chosen.premul_float(rgba, out, count);
}

void ic_unpremultiply_row(uint8_t *dst, const uint8_t *src, size_t count) {
    for (size_t i = 0; i < count; i++) {
        const uint8_t *s = src + 4 * i;
        uint8_t *o = dst + 4 * i;
        uint32_t a = s[3];
        if (a == 255) {
            if (o != s) memcpy(o, s, 4);
            continue;
        }
        if (a == 0) {
            memset(o, 0, 4);
            continue;
        }
        for (int c = 0; c < 3; c++) {
            uint32_t v = ((uint32_t)s[c] * 255u + a / 2) / a;
            o[c] = (uint8_t)(v > 255 ? 255 : v);
        }
        o[3] = (uint8_t)a;
    }
}
