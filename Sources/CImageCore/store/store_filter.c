/*
 * store_filter.c — reversible row filters applied before LZ4 (see ic_store.h).
 *
 * "up" replaces each byte by its difference from the byte above, which turns
 * smooth areas and flat artwork into runs LZ4 can match; the rgb filters drop
 * the alpha byte of opaque bitmaps (a quarter of the raw size that LZ4 cannot
 * remove when it is interleaved). Decoding is on the disk-hit path, so its
 * loops are written to vectorise: 4 pixels (16 bytes) per step with clang's
 * vector extensions, scalar code for the last pixels of a row.
 */
#include <string.h>

#include "ic_store_internal.h"

#if defined(__clang__)
#define IC_HAVE_SHUFFLE 1
typedef uint8_t ic_v16 __attribute__((vector_size(16)));

static inline ic_v16 load16(const uint8_t *p) {
    ic_v16 v;
    memcpy(&v, p, 16);
    return v;
}

static inline void store16(uint8_t *p, ic_v16 v) { memcpy(p, &v, 16); }
#else
#define IC_HAVE_SHUFFLE 0
#endif

/* ---- Encode. ---- */

static void up_encode_row(const uint8_t *row, const uint8_t *above, size_t n, uint8_t *dst) {
    if (!above) {
        memcpy(dst, row, n);
        return;
    }
    for (size_t i = 0; i < n; i++) dst[i] = (uint8_t)(row[i] - above[i]);
}

/* Packs R, G, B (minus those above, when given); returns the AND of all alphas. */
static uint8_t rgb_encode_row(const uint8_t *row, const uint8_t *above, uint32_t width,
                              uint8_t *dst) {
    uint32_t x = 0;
    uint8_t alpha = 0xFF;
#if IC_HAVE_SHUFFLE
    ic_v16 all = (ic_v16){0} - 1;
    /* 4 pixels in, 12 bytes out; the 16-byte store runs 4 bytes past them,
     * so stop while 2 more pixels still follow in this row. */
    for (; x + 6 <= width; x += 4) {
        ic_v16 v = load16(row + 4 * (size_t)x);
        all &= v;
        if (above) v -= load16(above + 4 * (size_t)x);
        ic_v16 packed = __builtin_shufflevector(v, v, 0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14,
                                                15, 15, 15, 15);
        store16(dst + 3 * (size_t)x, packed);
    }
    alpha = all[3] & all[7] & all[11] & all[15];
#endif
    for (; x < width; x++) {
        const uint8_t *p = row + 4 * (size_t)x;
        uint8_t *d = dst + 3 * (size_t)x;
        alpha &= p[3];
        if (above) {
            const uint8_t *a = above + 4 * (size_t)x;
            d[0] = (uint8_t)(p[0] - a[0]);
            d[1] = (uint8_t)(p[1] - a[1]);
            d[2] = (uint8_t)(p[2] - a[2]);
        } else {
            d[0] = p[0];
            d[1] = p[1];
            d[2] = p[2];
        }
    }
    return alpha;
}

bool ic__filter_encode(ic_store_filter filter, const uint8_t *rows, size_t stride, uint32_t width,
                      uint32_t count, uint8_t *dst) {
    size_t out_row = ic__filter_row_bytes(filter, width);
    for (uint32_t y = 0; y < count; y++) {
        const uint8_t *row = rows + (size_t)y * stride;
        const uint8_t *above = y > 0 ? row - stride : NULL;
        uint8_t *d = dst + (size_t)y * out_row;
        switch (filter) {
        case IC_STORE_FILTER_UP:
            up_encode_row(row, above, out_row, d);
            break;
        case IC_STORE_FILTER_RGB:
            if (rgb_encode_row(row, NULL, width, d) != 0xFF) return false;
            break;
        case IC_STORE_FILTER_RGB_UP:
            if (rgb_encode_row(row, above, width, d) != 0xFF) return false;
            break;
        default:
            memcpy(d, row, out_row);
            break;
        }
    }
    return true;
}

/* ---- Decode. ---- */

static void up_decode_row(const uint8_t *src, const uint8_t *above, size_t n, uint8_t *row) {
    if (!above) {
        memcpy(row, src, n);
        return;
    }
    for (size_t i = 0; i < n; i++) row[i] = (uint8_t)(src[i] + above[i]);
}

static void rgb_decode_row(const uint8_t *src, const uint8_t *above, uint32_t width,
                           uint8_t *row) {
    uint32_t x = 0;
#if IC_HAVE_SHUFFLE
    const ic_v16 opaque = {0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255};
    /* 12 bytes in (16 loaded), so stop while a later pixel's bytes follow. */
    for (; x + 6 <= width; x += 4) {
        ic_v16 v = load16(src + 3 * (size_t)x);
        ic_v16 px = __builtin_shufflevector(v, v, 0, 1, 2, 15, 3, 4, 5, 15, 6, 7, 8, 15, 9, 10, 11,
                                            15);
        if (above) px += load16(above + 4 * (size_t)x);
        store16(row + 4 * (size_t)x, px | opaque);
    }
#endif
    for (; x < width; x++) {
        const uint8_t *s = src + 3 * (size_t)x;
        uint8_t *d = row + 4 * (size_t)x;
        if (above) {
            const uint8_t *a = above + 4 * (size_t)x;
            d[0] = (uint8_t)(s[0] + a[0]);
            d[1] = (uint8_t)(s[1] + a[1]);
            d[2] = (uint8_t)(s[2] + a[2]);
        } else {
            d[0] = s[0];
            d[1] = s[1];
            d[2] = s[2];
        }
        d[3] = 0xFF;
    }
}

void ic__filter_decode(ic_store_filter filter, const uint8_t *src, uint32_t width, uint32_t count,
                      uint8_t *rows, size_t stride) {
    size_t in_row = ic__filter_row_bytes(filter, width);
    for (uint32_t y = 0; y < count; y++) {
        uint8_t *row = rows + (size_t)y * stride;
        const uint8_t *above = y > 0 ? row - stride : NULL;
        const uint8_t *s = src + (size_t)y * in_row;
        switch (filter) {
        case IC_STORE_FILTER_UP:
            up_decode_row(s, above, in_row, row);
            break;
        case IC_STORE_FILTER_RGB:
            rgb_decode_row(s, NULL, width, row);
            break;
        case IC_STORE_FILTER_RGB_UP:
            rgb_decode_row(s, above, width, row);
            break;
        default:
            memcpy(row, s, in_row);
            break;
        }
    }
}
