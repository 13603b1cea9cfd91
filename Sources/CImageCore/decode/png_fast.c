/*
 * png_fast.c — PNG pixels without libpng's row machinery: the whole IDAT
 * stream inflated at once by libdeflate into a buffer of exactly the filtered
 * image's size, unfiltered in place (SSE2 for 3- and 4-byte pixels), and
 * expanded to straight RGBA8 as png.c's libpng transforms do (palette and tRNS
 * to alpha, low bit depths scaled to 8, 16 bits truncated to the high byte,
 * grey to RGB, opaque filler). Adam7 passes are unfiltered one after the
 * other and scattered into the output rows.
 *
 * One difference from libpng stays, libdeflate's: it does not refuse every
 * invalid deflate stream (some invalid or incomplete Huffman codes decode), so
 * a file whose IDAT stream zlib refuses may decode here when its Adler-32
 * still matches; a file zlib decodes always decodes the same.
 *
 * See ic_png_internal.h for when png.c uses this path and when libpng instead.
 */
#include <string.h>

#include <libdeflate.h>

#include "../common/ic_bytes.h"
#include "ic_png_internal.h"
#include "ic_sink.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#define PNG_FAST_SSE2 1
#endif
/* SSSE3 for RGB to RGBA, chosen at run time with __builtin_cpu_supports (no ifunc, so TSan
 * builds work); IC_NO_CPU_DISPATCH turns it off as in premul.c and resample.c. */
#if defined(__x86_64__) && !defined(IC_NO_CPU_DISPATCH)
#include <tmmintrin.h>
#define PNG_FAST_SSSE3 1
#endif

static ic_status unusual(ic__decoder *d, const char *what, size_t at) {
    return ic__set_error(d->err, IC_ERR_CORRUPT, "PNG: %s (chunk at byte %zu)", what, at);
}

/* ---- Geometry. ---- */

static const uint8_t adam7_x0[7] = {0, 4, 0, 2, 0, 1, 0};
static const uint8_t adam7_y0[7] = {0, 0, 4, 0, 2, 0, 1};
static const uint8_t adam7_dx[7] = {8, 8, 4, 4, 2, 2, 1};
static const uint8_t adam7_dy[7] = {8, 8, 8, 4, 4, 2, 2};

/* Size of pass `pass` (0 for a plain image's only pass). */
static void pass_size(const ic__png_header *h, int pass, uint32_t *w, uint32_t *rows) {
    if (!h->interlace) {
        *w = h->width;
        *rows = h->height;
        return;
    }
    uint32_t x0 = adam7_x0[pass], y0 = adam7_y0[pass];
    *w = h->width > x0 ? (h->width - x0 + adam7_dx[pass] - 1) / adam7_dx[pass] : 0;
    *rows = h->height > y0 ? (h->height - y0 + adam7_dy[pass] - 1) / adam7_dy[pass] : 0;
}

uint64_t ic__png_row_bytes(uint32_t width, uint32_t bits_per_pixel) {
    return ((uint64_t)width * bits_per_pixel + 7) / 8;
}

/* Bytes of the filtered image: every non-empty pass's rows, each with its filter byte. */
static uint64_t filtered_size(const ic__png_header *h, uint32_t bits_per_pixel) {
    uint64_t total = 0;
    for (int pass = 0; pass < (h->interlace ? 7 : 1); pass++) {
        uint32_t w, rows;
        pass_size(h, pass, &w, &rows);
        if (w && rows) total += (uint64_t)rows * (1 + ic__png_row_bytes(w, bits_per_pixel));
    }
    return total;
}

ic_status ic__png_format_init(ic__decoder *d, const ic__png_header *h, ic__png_format *fmt) {
    static const uint8_t channels[7] = {1, 0, 3, 1, 2, 0, 4};
    if (h->color_type > 6 || channels[h->color_type] == 0) {
        return ic__set_error(d->err, IC_ERR_CORRUPT, "PNG: colour type %u", h->color_type);
    }
    fmt->bits_per_pixel = (uint32_t)channels[h->color_type] * h->bit_depth;
    fmt->filter_bpp = fmt->bits_per_pixel >= 8 ? fmt->bits_per_pixel / 8 : 1;
    fmt->has_alpha = (h->color_type & 4) != 0 || h->has_trns;
    for (int i = 0; i < 256; i++) {
        uint8_t px[4] = {h->palette[i][0], h->palette[i][1], h->palette[i][2],
                         i < h->num_trans ? h->trans_alpha[i] : 0xFF};
        memcpy(&fmt->palette[i], px, 4);
    }
    fmt->filtered = filtered_size(h, fmt->bits_per_pixel);
    return IC_OK;
}

bool ic__png_window_ok(uint8_t cmf, uint64_t filtered) {
    return (cmf >> 4) >= 7 || filtered <= (1u << ((cmf >> 4) + 8));
}

/* ---- Inflating. ---- */

/* What ic__png_fast_emit allocates besides the filtered image: the output, the sink's
 * resampler and rows, Adam7's full-size staging frame when resampling, and its own rows. */
static uint64_t output_bytes(const ic__decoder *d, const ic__png_header *h, const ic__png_fast *f) {
    const ic__geometry *g = &d->plan;
    uint64_t bytes = (uint64_t)ic__stride_for_width(g->out_w) * g->out_h;
    if (ic__dec_plans_resize(d)) {
        bytes += ic__scaler_bytes(h->width, h->height, &g->crop, g->out_w, g->out_h) +
                 (uint64_t)IC_SINK_ROWS * ic__stride_for_width(h->width);
        if (h->interlace) bytes += (uint64_t)ic__stride_for_width(h->width) * h->height;
    }
    return bytes + (uint64_t)h->width * 4 + ic__png_row_bytes(h->width, f->fmt.bits_per_pixel) + 1;
}

ic_status ic__png_fast_inflate(ic__decoder *d, const ic__png_header *h, ic__png_fast *f) {
    memset(f, 0, sizeof *f);
    f->h = h;
    ic_status st = ic__png_format_init(d, h, &f->fmt);
    if (st != IC_OK) return st;
    uint64_t size = f->fmt.filtered;
    if (size > IC_PNG_FAST_MAX_FILTERED_BYTES) {
        return ic__set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                            "PNG: the filtered image is %.1f MiB, over the fast path's %.1f MiB",
                            ic__mib(size), ic__mib(IC_PNG_FAST_MAX_FILTERED_BYTES));
    }
    const uint8_t *p = d->data;
    ic__png_walk w;
    ic__png_walk_init(&w, h->idat_at);
    for (size_t pos = h->idat_at; pos < d->size;) {
        size_t used;
        bool idat;
        st = ic__png_walk_feed(d, &w, p + pos, d->size - pos, &used, &idat);
        if (st != IC_OK) return st;
        pos += used;
    }
    st = ic__png_walk_end(d, &w);
    if (st != IC_OK) return st;
    size_t idat_end = (size_t)w.idat_end;
    uint64_t payload = w.payload;
    if (payload < 2) return unusual(d, "no zlib stream in the IDAT chunks", h->idat_at);
    /* Once pixels are delivered there is no going back to libpng: everything the decode
     * will hold at once must fit in the memory limit now, or libpng (which needs only the
     * output and a few rows) decodes the file. */
    st = ic__dec_reserve(d, size + payload + output_bytes(d, h, f));
    if (st != IC_OK) return st;
    ic__dec_release(d, size + payload + output_bytes(d, h, f));

    /* The zlib stream, contiguous: the single IDAT's payload, or all of them copied. */
    const uint8_t *stream = p + h->idat_at + 8;
    ic__dec_buffer joined = {0};
    if (payload != ic__be32(p + h->idat_at)) {
        st = ic__dec_buffer_alloc(d, (size_t)payload, &joined);
        if (st != IC_OK) return st;
        /* The walk checked every IDAT chunk, whole, up to idat_end. */
        size_t at = 0, pos = h->idat_at;
        ic__png_chunk c;
        while (pos < idat_end && ic__png_next_chunk(p, d->size, &pos, &c)) {
            memcpy(joined.p + at, c.data, c.length);
            at += c.length;
        }
        stream = joined.p;
    }
    if (!ic__png_window_ok(stream[0], size)) {
        ic__dec_buffer_free(d, &joined);
        return unusual(d, "zlib window smaller than the image", h->idat_at);
    }
    st = ic__dec_buffer_alloc(d, (size_t)size, &f->filtered);
    if (st != IC_OK) {
        ic__dec_buffer_free(d, &joined);
        return st;
    }
    struct libdeflate_decompressor *z = libdeflate_alloc_decompressor();
    if (!z) {
        ic__dec_buffer_free(d, &joined);
        ic__png_fast_free(d, f);
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "PNG: cannot allocate the inflater");
    }
    size_t in_used = 0, out_size = 0;
    enum libdeflate_result r = libdeflate_zlib_decompress_ex(
        z, stream, (size_t)payload, f->filtered.p, (size_t)size, &in_used, &out_size);
    libdeflate_free_decompressor(z);
    ic__dec_buffer_free(d, &joined);
    if (r != LIBDEFLATE_SUCCESS || out_size != size) {
        ic__png_fast_free(d, f);
        return ic__set_error(d->err, IC_ERR_CORRUPT,
                            r == LIBDEFLATE_SUCCESS ? "PNG: the image data is %zu bytes, not %llu"
                                                    : "PNG: bad zlib stream in IDAT (%zu bytes "
                                                      "out of %llu)",
                            out_size, (unsigned long long)size);
    }
    /* Every row's filter type, before any output exists. */
    const uint8_t *row = f->filtered.p;
    for (int pass = 0; pass < (h->interlace ? 7 : 1); pass++) {
        uint32_t w, rows;
        pass_size(h, pass, &w, &rows);
        if (!w || !rows) continue;
        size_t step = 1 + (size_t)ic__png_row_bytes(w, f->fmt.bits_per_pixel);
        for (uint32_t y = 0; y < rows; y++, row += step) {
            if (*row > 4) {
                unsigned filter = *row; /* read before the buffer goes */
                ic__png_fast_free(d, f);
                return ic__set_error(d->err, IC_ERR_CORRUPT,
                                    "PNG: bad filter type %u at row %u of pass %d", filter, y,
                                    pass);
            }
        }
    }
    return IC_OK;
}

void ic__png_fast_free(ic__decoder *d, ic__png_fast *f) { ic__dec_buffer_free(d, &f->filtered); }

/* ---- Unfiltering (in place; `prev` is the previous unfiltered row or zeros). ---- */

static int paeth(int a, int b, int c) {
    int p = a + b - c;
    int pa = p > a ? p - a : a - p, pb = p > b ? p - b : b - p, pc = p > c ? p - c : c - p;
    if (pa <= pb && pa <= pc) return a;
    return pb <= pc ? b : c;
}

static void unfilter_scalar(uint8_t type, uint8_t *cur, const uint8_t *prev, size_t len,
                            size_t bpp) {
    size_t i;
    switch (type) {
    case 1:
        for (i = bpp; i < len; i++) cur[i] = (uint8_t)(cur[i] + cur[i - bpp]);
        break;
    case 2:
        for (i = 0; i < len; i++) cur[i] = (uint8_t)(cur[i] + prev[i]);
        break;
    case 3:
        for (i = 0; i < bpp && i < len; i++) cur[i] = (uint8_t)(cur[i] + (prev[i] >> 1));
        for (; i < len; i++) cur[i] = (uint8_t)(cur[i] + ((cur[i - bpp] + prev[i]) >> 1));
        break;
    case 4:
        for (i = 0; i < bpp && i < len; i++) cur[i] = (uint8_t)(cur[i] + prev[i]);
        for (; i < len; i++) {
            cur[i] = (uint8_t)(cur[i] + paeth(cur[i - bpp], prev[i], prev[i - bpp]));
        }
        break;
    default:
        break;
    }
}

#ifdef PNG_FAST_SSE2
/* Loads / stores one pixel of 3 or 4 bytes in the low lanes (bpp a constant after inlining). */
static inline __m128i load_px(const uint8_t *p, size_t bpp) {
    uint32_t v;
    if (bpp == 4) {
        memcpy(&v, p, 4);
    } else {
        v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    }
    return _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)v), _mm_setzero_si128());
}

static inline void store_px(uint8_t *p, __m128i v, size_t bpp) {
    uint32_t x = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(v, v));
    if (bpp == 4) {
        memcpy(p, &x, 4);
    } else {
        p[0] = (uint8_t)x;
        p[1] = (uint8_t)(x >> 8);
        p[2] = (uint8_t)(x >> 16);
    }
}

/* |v| for 16-bit lanes. */
static inline __m128i abs16(__m128i v) {
    __m128i neg = _mm_srai_epi16(v, 15);
    return _mm_sub_epi16(_mm_xor_si128(v, neg), neg);
}

/* Sub, Average and Paeth for 3- and 4-byte pixels, one pixel at a time in 16-bit lanes
 * (the dependency on the pixel to the left is inherent). */
static inline __attribute__((always_inline)) void
unfilter_sse2(uint8_t type, uint8_t *cur, const uint8_t *prev, size_t len, size_t bpp) {
    const __m128i low = _mm_set1_epi16(0xFF);
    size_t pixels = len / bpp;
    __m128i a = _mm_setzero_si128(), c = a; /* left and upper-left, widened */
    if (type == 1) {
        for (size_t i = 0; i < pixels; i++) {
            a = _mm_and_si128(_mm_add_epi16(load_px(cur + i * bpp, bpp), a), low);
            store_px(cur + i * bpp, a, bpp);
        }
    } else if (type == 3) {
        for (size_t i = 0; i < pixels; i++) {
            __m128i b = load_px(prev + i * bpp, bpp);
            __m128i avg = _mm_srli_epi16(_mm_add_epi16(a, b), 1);
            a = _mm_and_si128(_mm_add_epi16(load_px(cur + i * bpp, bpp), avg), low);
            store_px(cur + i * bpp, a, bpp);
        }
    } else {
        for (size_t i = 0; i < pixels; i++) {
            __m128i b = load_px(prev + i * bpp, bpp);
            __m128i pa = abs16(_mm_sub_epi16(b, c)); /* |p - a| = |b - c| */
            __m128i pb = abs16(_mm_sub_epi16(a, c)); /* |p - b| = |a - c| */
            __m128i pc = abs16(_mm_sub_epi16(_mm_add_epi16(a, b), _mm_add_epi16(c, c)));
            /* pa <= pb && pa <= pc ? a : (pb <= pc ? b : c) */
            __m128i use_c = _mm_cmpgt_epi16(pb, pc);
            __m128i bc = _mm_or_si128(_mm_and_si128(use_c, c), _mm_andnot_si128(use_c, b));
            __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
            __m128i pred = _mm_or_si128(_mm_and_si128(not_a, bc), _mm_andnot_si128(not_a, a));
            a = _mm_and_si128(_mm_add_epi16(load_px(cur + i * bpp, bpp), pred), low);
            store_px(cur + i * bpp, a, bpp);
            c = b;
        }
    }
}
#endif

void ic__png_unfilter_row(uint8_t type, uint8_t *cur, const uint8_t *prev, size_t len, size_t bpp) {
    if (type == 0) return;
#ifdef PNG_FAST_SSE2
    if (type != 2 && bpp == 3) {
        unfilter_sse2(type, cur, prev, len, 3);
        return;
    }
    if (type != 2 && bpp == 4) {
        unfilter_sse2(type, cur, prev, len, 4);
        return;
    }
#endif
    unfilter_scalar(type, cur, prev, len, bpp);
}

/* ---- Expanding to RGBA8 (straight alpha). ---- */

/* Sample x of a row of `depth`-bit samples (depth 1, 2, 4 or 8), scaled to 8 bits. */
static inline uint8_t low_sample(const uint8_t *row, uint32_t x, uint32_t depth) {
    if (depth == 8) return row[x];
    uint32_t per_byte = 8 / depth;
    uint32_t shift = 8 - depth - (x % per_byte) * depth;
    return (uint8_t)((row[x / per_byte] >> shift) & ((1u << depth) - 1));
}

#ifdef PNG_FAST_SSSE3
/* RGB8 to RGBA8 with alpha 255, 16 pixels a step with SSSE3's byte shuffle (callers check
 * the CPU); returns how many pixels it converted. */
__attribute__((target("ssse3"))) static uint32_t rgb_to_rgba_ssse3(const uint8_t *src,
                                                                     uint8_t *dst,
                                                                     uint32_t width) {
    const __m128i shuffle = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m128i alpha = _mm_set1_epi32((int)0xFF000000u);
    uint32_t x = 0;
    /* Each load reads 16 bytes for 12 used: stop while a whole load stays in the row. */
    for (; x + 16 <= width && (size_t)(x + 16) * 3 + 4 <= (size_t)width * 3; x += 16) {
        const uint8_t *s = src + (size_t)x * 3;
        __m128i p0 = _mm_loadu_si128((const __m128i *)s);
        __m128i p1 = _mm_loadu_si128((const __m128i *)(s + 12));
        __m128i p2 = _mm_loadu_si128((const __m128i *)(s + 24));
        __m128i p3 = _mm_loadu_si128((const __m128i *)(s + 36));
        uint8_t *o = dst + (size_t)x * 4;
        _mm_storeu_si128((__m128i *)o, _mm_or_si128(_mm_shuffle_epi8(p0, shuffle), alpha));
        _mm_storeu_si128((__m128i *)(o + 16), _mm_or_si128(_mm_shuffle_epi8(p1, shuffle), alpha));
        _mm_storeu_si128((__m128i *)(o + 32), _mm_or_si128(_mm_shuffle_epi8(p2, shuffle), alpha));
        _mm_storeu_si128((__m128i *)(o + 48), _mm_or_si128(_mm_shuffle_epi8(p3, shuffle), alpha));
    }
    return x;
}
#endif

void ic__png_expand_row(const ic__png_header *h, const ic__png_format *fmt, const uint8_t *src,
                       uint8_t *dst, uint32_t width) {
    uint32_t depth = h->bit_depth;
    switch (h->color_type) {
    case 0: { /* grey */
        static const uint8_t scale[9] = {0, 0xFF, 0x55, 0, 0x11, 0, 0, 0, 1};
        uint32_t key = h->trans_gray & ((depth == 16) ? 0xFFFFu : (1u << depth) - 1);
        for (uint32_t x = 0; x < width; x++) {
            uint32_t v;
            uint8_t g;
            if (depth == 16) {
                v = (uint32_t)src[2 * x] << 8 | src[2 * x + 1];
                g = src[2 * x];
            } else {
                v = low_sample(src, x, depth);
                g = (uint8_t)(v * scale[depth]);
            }
            uint8_t *o = dst + 4 * (size_t)x;
            o[0] = o[1] = o[2] = g;
            o[3] = h->has_trns && v == key ? 0 : 0xFF;
        }
        break;
    }
    case 2: /* RGB */
        if (depth == 8) {
            uint8_t kr = (uint8_t)h->trans_red, kg = (uint8_t)h->trans_green,
                    kb = (uint8_t)h->trans_blue;
            uint32_t x = 0;
#ifdef PNG_FAST_SSSE3
            if (!h->has_trns && __builtin_cpu_supports("ssse3")) {
                x = rgb_to_rgba_ssse3(src, dst, width);
            }
#endif
            for (; x < width; x++) {
                const uint8_t *s = src + 3 * (size_t)x;
                uint8_t *o = dst + 4 * (size_t)x;
                o[0] = s[0];
                o[1] = s[1];
                o[2] = s[2];
                o[3] = h->has_trns && s[0] == kr && s[1] == kg && s[2] == kb ? 0 : 0xFF;
            }
        } else {
            for (uint32_t x = 0; x < width; x++) {
                const uint8_t *s = src + 6 * (size_t)x;
                uint8_t *o = dst + 4 * (size_t)x;
                o[0] = s[0];
                o[1] = s[2];
                o[2] = s[4];
                bool key = h->has_trns && (uint32_t)(s[0] << 8 | s[1]) == h->trans_red &&
                           (uint32_t)(s[2] << 8 | s[3]) == h->trans_green &&
                           (uint32_t)(s[4] << 8 | s[5]) == h->trans_blue;
                o[3] = key ? 0 : 0xFF;
            }
        }
        break;
    case 3: /* palette */
        for (uint32_t x = 0; x < width; x++) {
            uint32_t v = fmt->palette[low_sample(src, x, depth)];
            memcpy(dst + 4 * (size_t)x, &v, 4);
        }
        break;
    case 4: /* grey + alpha */
        for (uint32_t x = 0; x < width; x++) {
            const uint8_t *s = src + (depth == 16 ? 4 : 2) * (size_t)x;
            uint8_t *o = dst + 4 * (size_t)x;
            o[0] = o[1] = o[2] = s[0];
            o[3] = s[depth == 16 ? 2 : 1];
        }
        break;
    default: /* RGBA */
        if (depth == 8) {
            memcpy(dst, src, (size_t)width * 4);
        } else {
            for (uint32_t x = 0; x < width; x++) {
                const uint8_t *s = src + 8 * (size_t)x;
                uint8_t *o = dst + 4 * (size_t)x;
                o[0] = s[0];
                o[1] = s[2];
                o[2] = s[4];
                o[3] = s[6];
            }
        }
        break;
    }
}

/* ---- Output. ---- */

/* Unfilters the rows of one pass in place; the row before the first is zeros. */
static void unfilter_pass(ic__png_fast *f, uint8_t *rows_at, uint32_t w, uint32_t rows,
                          const uint8_t *zeros) {
    size_t len = (size_t)ic__png_row_bytes(w, f->fmt.bits_per_pixel), step = len + 1;
    for (uint32_t y = 0; y < rows; y++) {
        uint8_t *row = rows_at + (size_t)y * step;
        const uint8_t *prev = y ? row - step + 1 : zeros;
        ic__png_unfilter_row(row[0], row + 1, prev, len, f->fmt.filter_bpp);
    }
}

ic_status ic__png_fast_emit(ic__decoder *d, ic__png_fast *f) {
    const ic__png_header *h = f->h;
    bool has_alpha = f->fmt.has_alpha;
    ic_status st = ic__dec_begin(d, h->width, h->height, 1);
    if (st != IC_OK) {
        ic__png_fast_free(d, f);
        return st;
    }
    size_t max_len = (size_t)ic__png_row_bytes(h->width, f->fmt.bits_per_pixel);
    uint8_t *zeros = ic__dec_malloc(d, max_len + 1);
    if (!zeros) {
        ic__png_fast_free(d, f);
        return d->err && d->err->code ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    }
    memset(zeros, 0, max_len + 1);
    st = IC_OK;
    uint8_t *data = f->filtered.p;
    if (!h->interlace) {
        size_t step = max_len + 1;
        for (uint32_t y = 0; y < h->height; y++) {
            if ((y & 63) == 0 && ic__dec_cancelled(d)) {
                st = ic__dec_fail_cancelled(d);
                break;
            }
            uint8_t *row = data + (size_t)y * step;
            ic__png_unfilter_row(row[0], row + 1, y ? row - step + 1 : zeros, max_len, f->fmt.filter_bpp);
            ic__png_expand_row(h, &f->fmt, row + 1, ic__dec_row(d, 0, y), h->width);
            ic__dec_rows_done(d, 0, y, 1, has_alpha);
        }
    } else {
        /* Every row exists at once: the output itself, or a full-size staging frame when
         * resampling (as png.c's libpng path does). The pass row is expanded first. */
        size_t stride = ic__stride_for_width(h->width);
        ic__dec_buffer staging = {0};
        uint8_t *line = ic__dec_malloc(d, (size_t)h->width * 4);
        if (!line) st = d->err && d->err->code ? d->err->code : IC_ERR_OUT_OF_MEMORY;
        if (st == IC_OK && !ic__dec_is_direct(d)) st = ic__dec_buffer_alloc(d, stride * h->height, &staging);
        for (int pass = 0; pass < 7 && st == IC_OK; pass++) {
            if (ic__dec_cancelled(d)) {
                st = ic__dec_fail_cancelled(d);
                break;
            }
            uint32_t w, rows;
            pass_size(h, pass, &w, &rows);
            if (!w || !rows) continue;
            size_t step = (size_t)ic__png_row_bytes(w, f->fmt.bits_per_pixel) + 1;
            unfilter_pass(f, data, w, rows, zeros);
            for (uint32_t i = 0; i < rows; i++) {
                ic__png_expand_row(h, &f->fmt, data + (size_t)i * step + 1, line, w);
                uint32_t y = adam7_y0[pass] + i * adam7_dy[pass];
                uint8_t *out = staging.p ? staging.p + (size_t)y * stride : ic__dec_row(d, 0, y);
                for (uint32_t x = 0; x < w; x++) {
                    memcpy(out + 4 * ((size_t)adam7_x0[pass] + (size_t)x * adam7_dx[pass]),
                           line + 4 * (size_t)x, 4);
                }
            }
            data += (size_t)rows * step;
        }
        if (st == IC_OK) {
            if (staging.p) {
                ic__dec_put_rows(d, 0, 0, h->height, staging.p, stride, has_alpha);
            } else {
                ic__dec_rows_done(d, 0, 0, h->height, has_alpha);
            }
        }
        ic__dec_buffer_free(d, &staging);
        ic__dec_free(d, line, (size_t)h->width * 4);
    }
    ic__dec_free(d, zeros, max_len + 1);
    ic__png_fast_free(d, f);
    return st;
}
