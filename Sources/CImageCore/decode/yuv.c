/*
 * yuv.c — YUV pictures (avifImage) to the sink, for the AVIF and HEIF decoders: the
 * conversion to RGBA8 (libavif's avifImageYUVToRGB, libyuv where it has a kernel) in place
 * or in 16-row strips into the resampler, and the box average that shrinks an opaque picture
 * for a thumbnail before it is converted.
 *
 * The box average: by the largest power of two (up to 8) that keeps the planned region at
 * least twice the output size, into a 4:4:4 picture (chroma averaged by what its subsampling
 * leaves). YUV to RGB is affine, so this equals a box average of the RGB values (up to
 * rounding and chroma upsampling), and conversion and resampling see 1/4 to 1/64 of the
 * pixels; the resampler makes the last 2x or more. Pictures with alpha are not averaged
 * (alpha must be premultiplied first).
 */
#include <string.h>

#include "ic_yuv_internal.h"
#include "ic_sink.h"

/* libavif's conversion failure as an ImageKit error. */
static ic_status convert_failure(ic__decoder *d, avifResult r) {
    ic_status st = r == AVIF_RESULT_OUT_OF_MEMORY ? IC_ERR_OUT_OF_MEMORY
                   : r == AVIF_RESULT_NOT_IMPLEMENTED || r == AVIF_RESULT_UNSUPPORTED_DEPTH
                       ? IC_ERR_UNSUPPORTED_FEATURE
                       : IC_ERR_CORRUPT;
    return ic__set_error(d->err, st, "%s: cannot convert YUV to RGB: %s", ic_format_name(d->format),
                        avifResultToString(r));
}

/* Keeps premultiplied colour within alpha (a hostile file may say otherwise); whether any
 * pixel of the rows is transparent. */
static bool clamp_premultiplied(uint8_t *rows, size_t stride, uint32_t width, uint32_t count) {
    bool transparent = false;
    for (uint32_t y = 0; y < count; y++) {
        uint8_t *p = rows + (size_t)y * stride;
        for (uint32_t x = 0; x < width; x++, p += 4) {
            uint8_t a = p[3];
            if (a == 255) continue;
            transparent = true;
            if (p[0] > a) p[0] = a;
            if (p[1] > a) p[1] = a;
            if (p[2] > a) p[2] = a;
        }
    }
    return transparent;
}

/* Converts a decoded frame to RGBA8 and hands it to the sink: in place in direct mode,
 * else in strips of IC_SINK_ROWS rows (a multiple of 2, so chroma rows line up). */
ic_status ic__yuv_convert(ic__decoder *d, const avifImage *img, avifImage *view, uint32_t f, bool alpha) {
    bool keep_premultiplied = alpha && img->alphaPremultiplied && !ic__color_sink_converts(&d->color);
    bool straight = alpha && !keep_premultiplied;
    bool through_sink = straight || ic__color_sink_converts(&d->color);
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, img);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    rgb.alphaPremultiplied = keep_premultiplied ? AVIF_TRUE : AVIF_FALSE;
    /* 10/12-bit: libavif's float path, rounded to nearest, not libyuv's fixed point. */
    rgb.avoidLibYUV = img->depth > 8 ? AVIF_TRUE : AVIF_FALSE;
    uint32_t w = img->width, h = img->height;
    if (ic__dec_is_direct(d)) {
        rgb.pixels = ic__dec_row(d, f, 0);
        rgb.rowBytes = (uint32_t)d->image->stride;
        avifResult r = avifImageYUVToRGB(img, &rgb);
        if (r != AVIF_RESULT_OK) return convert_failure(d, r);
        if (keep_premultiplied && clamp_premultiplied(rgb.pixels, rgb.rowBytes, w, h)) {
            ic__dec_note_transparency(d);
        }
        if (through_sink) ic__dec_rows_done(d, f, 0, h, straight);
        return IC_OK;
    }
    for (uint32_t y = 0; y < h; y += IC_SINK_ROWS) {
        if (ic__dec_cancelled(d)) return ic__dec_fail_cancelled(d);
        uint32_t n = h - y < IC_SINK_ROWS ? h - y : IC_SINK_ROWS;
        avifCropRect rect = {0, y, w, n};
        avifResult r = avifImageSetViewRect(view, img, &rect);
        if (r == AVIF_RESULT_OK) {
            rgb.width = w;
            rgb.height = n;
            rgb.pixels = ic__dec_row(d, f, y);
            rgb.rowBytes = (uint32_t)d->scratch_stride;
            r = avifImageYUVToRGB(view, &rgb);
        }
        if (r != AVIF_RESULT_OK) return convert_failure(d, r);
        if (keep_premultiplied) clamp_premultiplied(rgb.pixels, rgb.rowBytes, w, n);
        ic__dec_rows_done(d, f, y, n, straight);
    }
    return IC_OK;
}

/* Box-averages `img`'s planes by `den` (2, 4 or 8; chroma by what its subsampling leaves) into
 * `small`, 4:4:4 (4:0:0 for monochrome) at the same depth. `sums` holds a plane's width: column
 * sums of at most 8 rows of 12-bit samples fit 16 bits. Whole blocks divide by a shift. */
/* reduce's 8-bit whole-block loop for blocks `FX` samples wide. */
#define REDUCE_ROW(FX)                                                                   \
    for (; x < whole; x++) {                                                             \
        uint32_t sum = 0;                                                                \
        for (uint32_t c = 0; c < (FX); c++) sum += sums[x * (FX) + c];                   \
        out[x] = (uint8_t)((sum + half) >> shift);                                       \
    }

static void reduce(const avifImage *img, avifImage *small, uint32_t den, uint16_t *sums) {
    avifPixelFormatInfo info;
    avifGetPixelFormatInfo(img->yuvFormat, &info);
    bool wide = img->depth > 8;
    int planes = img->yuvFormat == AVIF_PIXEL_FORMAT_YUV400 ? 1 : 3;
    for (int p = 0; p < planes; p++) {
        uint32_t sx = p ? (uint32_t)info.chromaShiftX : 0, sy = p ? (uint32_t)info.chromaShiftY : 0;
        uint32_t pw = (img->width + sx) >> sx, ph = (img->height + sy) >> sy;
        uint32_t fx = den >> sx, fy = den >> sy;
        uint32_t shift = (uint32_t)__builtin_ctz(fx * fy), half = (fx * fy) >> 1;
        const uint8_t *src = img->yuvPlanes[p];
        size_t src_stride = img->yuvRowBytes[p];
        for (uint32_t y = 0; y < small->height; y++) {
            uint32_t y0 = y * fy, y1 = y0 + fy < ph ? y0 + fy : ph;
            memset(sums, 0, sizeof *sums * pw);
            for (uint32_t r = y0; r < y1; r++) {
                const uint8_t *row = src + (size_t)r * src_stride;
                if (wide) {
                    const uint16_t *row16 = (const uint16_t *)row;
                    for (uint32_t x = 0; x < pw; x++) sums[x] = (uint16_t)(sums[x] + row16[x]);
                } else {
                    for (uint32_t x = 0; x < pw; x++) sums[x] = (uint16_t)(sums[x] + row[x]);
                }
            }
            uint8_t *out = small->yuvPlanes[p] + (size_t)y * small->yuvRowBytes[p];
            bool full_rows = y1 - y0 == fy;
            uint32_t x = 0;
            if (full_rows && !wide) {
                /* Whole blocks of 8-bit rows, the block width a constant for the compiler. */
                uint32_t whole = pw / fx;
                switch (fx) {
                case 1: REDUCE_ROW(1); break;
                case 2: REDUCE_ROW(2); break;
                case 4: REDUCE_ROW(4); break;
                case 8: REDUCE_ROW(8); break;
                default: break;
                }
            }
            for (; x < small->width; x++) {
                uint32_t x0 = x * fx, x1 = x0 + fx < pw ? x0 + fx : pw, sum = 0;
                for (uint32_t c = x0; c < x1; c++) sum += sums[c];
                uint32_t v;
                if (full_rows && x1 - x0 == fx) {
                    v = (sum + half) >> shift;
                } else {
                    uint32_t n = (x1 - x0) * (y1 - y0);
                    v = (sum + n / 2) / n;
                }
                if (wide) {
                    ((uint16_t *)out)[x] = (uint16_t)v;
                } else {
                    out[x] = (uint8_t)v;
                }
            }
        }
    }
}


ic_status ic__yuv_shrink_begin(ic__decoder *d, const avifImage *like, ic__yuv_shrink *s) {
    memset(s, 0, sizeof *s);
    uint32_t den = ic__dec_shrink_denominator(d, 8);
    const ic__geometry *g = &d->plan;
    while (den > 1 && (g->crop.w / den < 2.0 * g->out_w || g->crop.h / den < 2.0 * g->out_h)) den /= 2;
    s->den = den;
    if (den == 1) return IC_OK;
    uint32_t cw = (like->width + den - 1) / den, ch = (like->height + den - 1) / den;
    s->small_bytes = (uint64_t)cw * ch * 3 * (like->depth > 8 ? 2 : 1);
    ic_status st = ic__dec_reserve(d, s->small_bytes);
    if (st != IC_OK) {
        s->small_bytes = 0;
        return st;
    }
    s->sums_size = sizeof *s->sums * ((size_t)like->width + 1);
    if (!(s->sums = ic__dec_malloc(d, s->sums_size))) return d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    bool mono = like->yuvFormat == AVIF_PIXEL_FORMAT_YUV400;
    s->small = avifImageCreate(cw, ch, like->depth, mono ? AVIF_PIXEL_FORMAT_YUV400 : AVIF_PIXEL_FORMAT_YUV444);
    if (s->small) {
        s->small->yuvRange = like->yuvRange;
        s->small->colorPrimaries = like->colorPrimaries;
        s->small->transferCharacteristics = like->transferCharacteristics;
        s->small->matrixCoefficients = like->matrixCoefficients;
    }
    if (!s->small || avifImageAllocatePlanes(s->small, AVIF_PLANES_YUV) != AVIF_RESULT_OK) {
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "%s: out of memory", ic_format_name(d->format));
    }
    return IC_OK;
}

void ic__yuv_shrink_run(const avifImage *img, const ic__yuv_shrink *s) {
    reduce(img, s->small, s->den, s->sums);
}

void ic__yuv_shrink_end(ic__decoder *d, ic__yuv_shrink *s) {
    if (s->small) avifImageDestroy(s->small);
    ic__dec_free(d, s->sums, s->sums_size);
    ic__dec_release(d, s->small_bytes);
    memset(s, 0, sizeof *s);
}
