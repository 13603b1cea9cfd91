/*
 * premul.c — premultiplying and un-premultiplying RGBA8 rows.
 *
 * p = (c*a + 127) / 255 is computed as t = c*a + 128; p = (t + (t >> 8)) >> 8,
 * which gives the same result for all 65,536 inputs and vectorises. Rows that
 * are fully opaque are detected first and left untouched (the premultiply is
 * the identity there). On x86-64 an AVX2 copy of the loop is chosen at run
 * time with __builtin_cpu_supports; no ifunc, so TSan builds work.
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
        uint32_t r = ic_mul255(v & 0xFFu, a);            \
        uint32_t g = ic_mul255((v >> 8) & 0xFFu, a);     \
        uint32_t b = ic_mul255((v >> 16) & 0xFFu, a);    \
        store32(px + 4 * i, r | (g << 8) | (b << 16) | (a << 24)); \
    }

static bool row_opaque_generic(const uint8_t *px, size_t count) { IC_OPAQUE_BODY }
static void premul_generic(uint8_t *px, size_t count) { IC_PREMUL_BODY }

#if defined(__x86_64__) && defined(__clang__) && !defined(IC_NO_CPU_DISPATCH)
#define IC_HAVE_AVX2_PATH 1
__attribute__((target("avx2"))) static bool row_opaque_avx2(const uint8_t *px, size_t count) {
    IC_OPAQUE_BODY
}
__attribute__((target("avx2"))) static void premul_avx2(uint8_t *px, size_t count) {
    IC_PREMUL_BODY
}
#endif

typedef bool (*opaque_fn)(const uint8_t *, size_t);
typedef void (*premul_fn)(uint8_t *, size_t);

struct premul_impl {
    opaque_fn opaque;
    premul_fn premul;
};

static struct premul_impl pick_impl(void) {
#ifdef IC_HAVE_AVX2_PATH
    if (__builtin_cpu_supports("avx2")) return (struct premul_impl){row_opaque_avx2, premul_avx2};
#endif
    return (struct premul_impl){row_opaque_generic, premul_generic};
}

static pthread_once_t impl_once = PTHREAD_ONCE_INIT;
static struct premul_impl impl_chosen;

static void choose_impl(void) { impl_chosen = pick_impl(); }

bool ic_pixels_opaque(const uint8_t *rgba, size_t count) {
    pthread_once(&impl_once, choose_impl);
    return impl_chosen.opaque(rgba, count);
}

int ic_premultiply_row(uint8_t *rgba, size_t count) {
    pthread_once(&impl_once, choose_impl);
    if (impl_chosen.opaque(rgba, count)) return 1;
    impl_chosen.premul(rgba, count);
    return 0;
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
