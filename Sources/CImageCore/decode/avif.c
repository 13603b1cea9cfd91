/*
 * avif.c — AVIF decoding with libavif 0.11 (dav1d, libgav1 or aom underneath):
 * still images, grids and image sequences ('avis').
 *
 * The container is parsed first (avifDecoderParse reads boxes, no AV1), so the
 * size, the frame count, alpha, the profile and the transforms are known before
 * anything large is allocated; ic_dec_check_size sees them with an estimate of
 * the codec's own memory. libavif's limits are set from ours as a second line:
 * imageSizeLimit from max_pixels (also dav1d's frame size limit), imageCountLimit
 * from max_frames when every frame is asked for.
 *
 * Pixels: each frame is decoded by the AV1 decoder to YUV planes libavif owns,
 * then avifImageYUVToRGB converts them to RGBA8 (libavif's default chroma
 * upsampling, libyuv where it has a kernel) straight into the output image, or
 * 16 rows at a time into the resampler's rows for a thumbnail. AV1 has no
 * reduced-size decode, so a thumbnail costs the full-size AV1 decode; but for
 * an opaque picture shrunk 4x or more the YUV planes are box-averaged first by
 * the largest power of two (up to 8) that keeps the planned region at least
 * twice the output size, into a 4:4:4 picture (chroma averaged by what its subsampling
 * leaves): YUV to RGB is affine, so this equals a box average of the RGB values
 * (up to rounding and chroma upsampling), and conversion and resampling see 1/4
 * to 1/64 of the pixels; the resampler then makes the last 2x or more. Pictures with alpha are converted at full size (alpha
 * must be premultiplied before averaging). Straight alpha is premultiplied by the sink
 * with ImageKit's formula; a source whose alpha is flagged premultiplied is kept
 * premultiplied when no colour conversion runs (colour clamped to alpha), else
 * libavif un-premultiplies it first.
 *
 * 10- and 12-bit sources become 8-bit in that same avifImageYUVToRGB call (rgb
 * depth 8) through libavif's float path, which rounds to nearest
 * ((uint8_t)(0.5f + v * 255)): libyuv is avoided for them (avoidLibYUV), whose
 * fixed-point kernels libavif would otherwise pick for some layouts (10-bit
 * 4:2:0/4:2:2/4:4:4 and 12-bit 4:2:0 into RGBA). 8-bit sources go through libyuv
 * where it has a kernel, as avifdec's do.
 *
 * Transforms: libavif 0.11 reports irot/imir (transformFlags) without applying
 * them; they are mapped to the EXIF orientation they equal (rotation first, then
 * the mirror, as HEIF orders them) and applied like a JPEG's EXIF orientation
 * (ic_decode_options.keep_orientation keeps the stored pixels). 'clap' (clean
 * aperture) and 'pasp' are not applied. EXIF and XMP items are not read.
 *
 * Colour: an ICC profile (colr 'prof'/'rICC') goes through color/ like a JPEG's.
 * Without one, the nclx code points decide: sRGB / BT.709 primaries (1) or
 * unspecified (2) are taken as sRGB; Display P3 primaries (12) with the sRGB
 * transfer (13) are converted through a P3 profile ImageKit builds (color/cicp.c,
 * which the output image then carries as its profile); any other combination
 * (BT.2020, PQ, HLG: HDR is out of scope) is left untouched, its values read as sRGB.
 *
 * Sequences: every frame is a full picture (no compositing); delays come from
 * the sample durations (ms, rounded). libavif 0.11 reads no repetition count
 * (no edit list): loop_count is reported as 0, "forever", as browsers play them.
 *
 * Memory: libavif's and the AV1 decoder's buffers are not ours to count byte by
 * byte, so they are estimated and reserved: the YUV(A) planes of one picture at
 * the stored depth, times 2 for a still (the decoder's picture and libavif's
 * grid or alpha copy) and times 9 for a sequence (AV1's 8 reference slots and
 * the current frame).
 *
 * Cancellation is looked at before each frame's AV1 decode, between it and the
 * YUV to RGB step, and between 16-row strips of a thumbnail; libavif cannot
 * stop inside one frame's AV1 decode.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <avif/avif.h>

#include "ic_decode_internal.h"

static ic_status result_status(avifResult r) {
    switch (r) {
    case AVIF_RESULT_OUT_OF_MEMORY: return IC_ERR_OUT_OF_MEMORY;
    case AVIF_RESULT_TRUNCATED_DATA:
    case AVIF_RESULT_IO_ERROR:
    case AVIF_RESULT_WAITING_ON_IO: return IC_ERR_TRUNCATED;
    case AVIF_RESULT_NOT_IMPLEMENTED:
    case AVIF_RESULT_NO_CODEC_AVAILABLE:
    case AVIF_RESULT_UNSUPPORTED_DEPTH: return IC_ERR_UNSUPPORTED_FEATURE;
    default: return IC_ERR_CORRUPT;
    }
}

/* Fails with libavif's result and its diagnostic; a refusal by libavif's own
 * size or count limit (set from ours) is IC_ERR_LIMIT_EXCEEDED. */
static ic_status avif_fail(ic_error *err, const char *stage, avifResult r, const avifDiagnostics *diag) {
    const char *why = diag && diag->error[0] ? diag->error : "";
    ic_status st = result_status(r);
    if (strstr(why, "imageCountLimit") || strstr(why, "too large")) st = IC_ERR_LIMIT_EXCEEDED;
    return ic_set_error(err, st, "AVIF: %s: %s%s%s", stage, avifResultToString(r), why[0] ? " — " : "",
                        why);
}

/* A decoder over `data` with the container parsed. */
static ic_status open_parsed(const uint8_t *data, size_t size, const ic_limits *lim, bool all_frames,
                             int threads, avifDecoder **out, ic_error *err) {
    *out = NULL;
    avifDecoder *dec = avifDecoderCreate();
    if (!dec) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "AVIF: cannot create the decoder");
    dec->maxThreads = threads;
    dec->ignoreExif = AVIF_TRUE;
    dec->ignoreXMP = AVIF_TRUE;
    if (lim && lim->max_pixels && lim->max_pixels < AVIF_DEFAULT_IMAGE_SIZE_LIMIT) {
        dec->imageSizeLimit = (uint32_t)lim->max_pixels;
    }
    if (lim && all_frames && lim->max_frames) dec->imageCountLimit = lim->max_frames;
    avifResult r = avifDecoderSetIOMemory(dec, data, size);
    if (r == AVIF_RESULT_OK) r = avifDecoderParse(dec);
    if (r != AVIF_RESULT_OK) {
        ic_status st = avif_fail(err, "cannot read the container", r, &dec->diag);
        avifDecoderDestroy(dec);
        return st;
    }
    *out = dec;
    return IC_OK;
}

/* The EXIF orientation that equals the image's irot (anticlockwise quarter turns) followed by
 * its imir (mode 0: top and bottom exchanged; 1: left and right). */
static uint8_t orientation_of(const avifImage *img) {
    uint32_t angle = (img->transformFlags & AVIF_TRANSFORM_IROT) ? img->irot.angle & 3 : 0;
    static const uint8_t rotate[4] = {1, 8, 3, 6};
    static const uint8_t rotate_mirror[2][4] = {{4, 5, 2, 7}, {2, 7, 4, 5}};
    if (!(img->transformFlags & AVIF_TRANSFORM_IMIR)) return rotate[angle];
    return rotate_mirror[img->imir.mode & 1][angle];
}

/* Bytes of one picture's YUV (and alpha) planes at the stored depth. */
static uint64_t plane_bytes(const avifImage *img, bool alpha) {
    uint64_t w = img->width, h = img->height, luma = w * h, chroma;
    switch (img->yuvFormat) {
    case AVIF_PIXEL_FORMAT_YUV444: chroma = 2 * luma; break;
    case AVIF_PIXEL_FORMAT_YUV422: chroma = 2 * ((w + 1) / 2) * h; break;
    case AVIF_PIXEL_FORMAT_YUV420: chroma = 2 * ((w + 1) / 2) * ((h + 1) / 2); break;
    default: chroma = 0; break;
    }
    return (luma + chroma + (alpha ? luma : 0)) * (img->depth > 8 ? 2 : 1);
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
static ic_status convert_frame(ic_decoder *d, const avifImage *img, avifImage *view, uint32_t f,
                               bool alpha) {
    bool keep_premultiplied = alpha && img->alphaPremultiplied && !ic_color_sink_converts(&d->color);
    bool straight = alpha && !keep_premultiplied;
    bool through_sink = straight || ic_color_sink_converts(&d->color);
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, img);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    rgb.alphaPremultiplied = keep_premultiplied ? AVIF_TRUE : AVIF_FALSE;
    /* 10/12-bit: libavif's float path, rounded to nearest, not libyuv's fixed point. */
    rgb.avoidLibYUV = img->depth > 8 ? AVIF_TRUE : AVIF_FALSE;
    uint32_t w = img->width, h = img->height;
    if (ic_dec_is_direct(d)) {
        rgb.pixels = ic_dec_row(d, f, 0);
        rgb.rowBytes = (uint32_t)d->image->stride;
        avifResult r = avifImageYUVToRGB(img, &rgb);
        if (r != AVIF_RESULT_OK) return avif_fail(d->err, "cannot convert YUV to RGB", r, NULL);
        if (keep_premultiplied && clamp_premultiplied(rgb.pixels, rgb.rowBytes, w, h)) {
            ic_dec_note_transparency(d);
        }
        if (through_sink) ic_dec_rows_done(d, f, 0, h, straight);
        return IC_OK;
    }
    for (uint32_t y = 0; y < h; y += IC_SINK_ROWS) {
        if (ic_dec_cancelled(d)) return ic_dec_fail_cancelled(d);
        uint32_t n = h - y < IC_SINK_ROWS ? h - y : IC_SINK_ROWS;
        avifCropRect rect = {0, y, w, n};
        avifResult r = avifImageSetViewRect(view, img, &rect);
        if (r == AVIF_RESULT_OK) {
            rgb.width = w;
            rgb.height = n;
            rgb.pixels = ic_dec_row(d, f, y);
            rgb.rowBytes = (uint32_t)d->scratch_stride;
            r = avifImageYUVToRGB(view, &rgb);
        }
        if (r != AVIF_RESULT_OK) return avif_fail(d->err, "cannot convert YUV to RGB", r, NULL);
        if (keep_premultiplied) clamp_premultiplied(rgb.pixels, rgb.rowBytes, w, n);
        ic_dec_rows_done(d, f, y, n, straight);
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

/* Takes the image's profile, or one built for its CICP code points, and prepares colour. */
static void prepare_color(ic_decoder *d, const avifImage *img) {
    const uint8_t *icc = NULL;
    size_t icc_size = 0;
    if (img->icc.size > 0) {
        ic_color_take_profile(d, img->icc.data, img->icc.size);
    } else if (ic_icc_cicp_profile((uint16_t)img->colorPrimaries, (uint16_t)img->transferCharacteristics,
                                   &icc, &icc_size)) {
        ic_color_take_profile(d, icc, icc_size);
    }
    bool gray = img->yuvFormat == AVIF_PIXEL_FORMAT_YUV400 && d->color.space == IC_COLOR_SPACE_GRAY;
    ic_color_prepare(d, gray ? IC_COLOR_INPUT_GRAY : IC_COLOR_INPUT_RGBA);
}

/* Frame delays in milliseconds from the samples' durations. */
static void read_delays(ic_decoder *d, const avifDecoder *dec, uint32_t frames) {
    uint32_t *delays = d->image->frame_delays_ms;
    if (!delays) return;
    for (uint32_t i = 0; i < frames; i++) {
        avifImageTiming t;
        double ms = avifDecoderNthImageTiming(dec, i, &t) == AVIF_RESULT_OK ? t.duration * 1000.0 : 0;
        delays[i] = ms <= 0 || !isfinite(ms) ? 0 : ms >= UINT32_MAX ? UINT32_MAX : (uint32_t)lround(ms);
    }
}

/* Decodes and hands over `frames` frames; with `small` (a picture of the codec size), each
 * frame is box-averaged into it by `den` first. */
static ic_status decode_frames(ic_decoder *d, avifDecoder *dec, uint32_t frames, bool alpha,
                               avifImage *small, uint32_t den, uint16_t *sums) {
    uint32_t w = d->source_width, h = d->source_height;
    avifImage *view = avifImageCreateEmpty();
    if (!view) return ic_set_error(d->err, IC_ERR_OUT_OF_MEMORY, "AVIF: out of memory");
    ic_status st = IC_OK;
    for (uint32_t f = 0; f < frames && st == IC_OK; f++) {
        if (ic_dec_cancelled(d)) {
            st = ic_dec_fail_cancelled(d);
            break;
        }
        avifResult r = avifDecoderNextImage(dec);
        if (r != AVIF_RESULT_OK) {
            char stage[48];
            snprintf(stage, sizeof stage, "cannot decode frame %u", f);
            st = avif_fail(d->err, stage, r, &dec->diag);
            break;
        }
        const avifImage *img = dec->image;
        if (img->width != w || img->height != h) {
            st = ic_set_error(d->err, IC_ERR_CORRUPT, "AVIF: frame %u is %ux%u, the image %ux%u", f,
                              img->width, img->height, w, h);
            break;
        }
        if (ic_dec_cancelled(d)) {
            st = ic_dec_fail_cancelled(d);
            break;
        }
        /* The AV1 stream may disagree with the container the plan was made from. */
        if (small && (img->depth != small->depth ||
                      (img->yuvFormat == AVIF_PIXEL_FORMAT_YUV400) != (small->yuvFormat == AVIF_PIXEL_FORMAT_YUV400))) {
            st = ic_set_error(d->err, IC_ERR_CORRUPT,
                              "AVIF: frame %u is %u-bit %s, the container said %u-bit %s", f, img->depth,
                              avifPixelFormatToString(img->yuvFormat), small->depth,
                              small->yuvFormat == AVIF_PIXEL_FORMAT_YUV400 ? "YUV400" : "colour");
            break;
        }
        if (small) reduce(img, small, den, sums);
        st = convert_frame(d, small ? small : img, view, f, alpha && img->alphaPlane != NULL);
        if (st == IC_OK && ic_dec_cancelled(d)) st = ic_dec_fail_cancelled(d);
    }
    avifImageDestroy(view);
    return st;
}

ic_status ic_avif_decode(ic_decoder *d) {
    bool all = d->opts.all_frames != 0;
    avifDecoder *dec;
    ic_status st = open_parsed(d->data, d->size, &d->opts.limits, all,
                               d->opts.use_helper_thread ? 2 : 1, &dec, d->err);
    if (st != IC_OK) return st;
    const avifImage *img = dec->image;
    uint32_t count = dec->imageCount > 0 ? (uint32_t)dec->imageCount : 1;
    uint32_t frames = all ? count : 1;
    bool alpha = dec->alphaPresent != 0;
    d->orientation = orientation_of(img);
    prepare_color(d, img);
    uint64_t extra = plane_bytes(img, alpha) * (count > 1 ? 9 : 2);
    st = ic_dec_check_size(d, img->width, img->height, frames, extra);
    if (st == IC_OK) st = ic_dec_reserve(d, extra);
    if (st != IC_OK) {
        avifDecoderDestroy(dec);
        return st;
    }
    /* An opaque picture shrunk 4x or more: YUV planes box-averaged to no less than twice the
     * output (as libwebp's scaler is used), the resampler doing the rest. */
    uint32_t den = alpha ? 1 : ic_dec_shrink_denominator(d, 8);
    const ic_geometry *g = &d->plan;
    while (den > 1 && (g->crop.w / den < 2.0 * g->out_w || g->crop.h / den < 2.0 * g->out_h)) den /= 2;
    uint32_t cw = (img->width + den - 1) / den, ch = (img->height + den - 1) / den;
    avifImage *small = NULL;
    uint16_t *sums = NULL;
    size_t sums_size = sizeof *sums * ((size_t)img->width + 1);
    uint64_t small_bytes = 0;
    if (den > 1) {
        small_bytes = (uint64_t)cw * ch * 3 * (img->depth > 8 ? 2 : 1);
        st = ic_dec_reserve(d, small_bytes);
        if (st == IC_OK && !(sums = ic_dec_malloc(d, sums_size))) st = d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
        if (st == IC_OK) {
            bool mono = img->yuvFormat == AVIF_PIXEL_FORMAT_YUV400;
            small = avifImageCreate(cw, ch, img->depth, mono ? AVIF_PIXEL_FORMAT_YUV400 : AVIF_PIXEL_FORMAT_YUV444);
            if (small) {
                small->yuvRange = img->yuvRange;
                small->colorPrimaries = img->colorPrimaries;
                small->transferCharacteristics = img->transferCharacteristics;
                small->matrixCoefficients = img->matrixCoefficients;
            }
            if (!small || avifImageAllocatePlanes(small, AVIF_PLANES_YUV) != AVIF_RESULT_OK) {
                st = ic_set_error(d->err, IC_ERR_OUT_OF_MEMORY, "AVIF: out of memory");
            }
        }
    }
    if (st == IC_OK) st = ic_dec_begin(d, cw, ch, frames);
    if (st == IC_OK) {
        if (count > 1) read_delays(d, dec, frames);
        st = decode_frames(d, dec, frames, alpha, small, den, sums);
    }
    if (small) avifImageDestroy(small);
    ic_dec_free(d, sums, sums_size);
    ic_dec_release(d, small_bytes);
    avifDecoderDestroy(dec);
    ic_dec_release(d, extra);
    return st;
}

ic_status ic_avif_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    avifDecoder *dec;
    ic_status st = open_parsed(p, n, NULL, false, 1, &dec, err);
    if (st != IC_OK) return st;
    const avifImage *img = dec->image;
    info->width = img->width;
    info->height = img->height;
    info->frame_count = dec->imageCount > 0 ? (uint32_t)dec->imageCount : 1;
    info->has_alpha = dec->alphaPresent != 0;
    info->bit_depth = (uint8_t)img->depth;
    info->orientation = orientation_of(img);
    info->is_progressive = dec->progressiveState != AVIF_PROGRESSIVE_STATE_UNAVAILABLE;
    if (img->icc.size > 0) ic_icc_note_probe(info, img->icc.data, img->icc.size, img->icc.size);
    avifDecoderDestroy(dec);
    return IC_OK;
}
