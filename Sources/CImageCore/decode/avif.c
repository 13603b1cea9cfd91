/*
 * avif.c — AVIF decoding with libavif 0.11 (dav1d, libgav1 or aom underneath):
 * still images, grids and image sequences ('avis').
 *
 * The container is parsed first (avifDecoderParse reads boxes, no AV1), so the
 * size, the frame count, alpha, the profile and the transforms are known before
 * anything large is allocated; ic__dec_check_size sees them with an estimate of
 * the codec's own memory. libavif's limits are set from ours as a second line:
 * imageSizeLimit from max_pixels (also dav1d's frame size limit), imageCountLimit
 * from max_frames when every frame is asked for.
 *
 * Pixels: each frame is decoded by the AV1 decoder to YUV planes libavif owns,
 * then avifImageYUVToRGB converts them to RGBA8 (libavif's default chroma
 * upsampling, libyuv where it has a kernel) straight into the output image, or
 * 16 rows at a time into the resampler's rows for a thumbnail (yuv.c, shared
 * with HEIF: the conversion and the box average below). AV1 has no
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
 * transfer (13) are converted through a P3 profile ImageKit builds (color/cicp.c, shared
 * with HEIF; the output image then carries it as its profile); any other combination
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
 *
 * libavif is opened by the first decode or probe (codecs/ic_avif_lib.h); when it cannot be,
 * both fail with IC_ERR_UNSUPPORTED_FORMAT and the loader's reason.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../codecs/ic_avif_lib.h"
#include "ic_yuv_internal.h"
#include "ic_dec_color.h"
#include "ic_decoder.h"
#include "ic_formats.h"
#include "ic_sink.h"

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
    return ic__set_error(err, st, "AVIF: %s: %s%s%s", stage, avifResultToString(r), why[0] ? " — " : "",
                        why);
}

/* A decoder over `data` with the container parsed. */
static ic_status open_parsed(const uint8_t *data, size_t size, const ic_limits *lim, bool all_frames,
                             int threads, avifDecoder **out, ic_error *err) {
    *out = NULL;
    avifDecoder *dec = avifDecoderCreate();
    if (!dec) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "AVIF: cannot create the decoder");
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

/* Takes the image's profile, or one built for its CICP code points, and prepares colour. */
static void prepare_color(ic__decoder *d, const avifImage *img) {
    if (img->icc.size > 0) ic__color_take_profile(d, img->icc.data, img->icc.size);
    ic__color_take_cicp(d, (uint16_t)img->colorPrimaries, (uint16_t)img->transferCharacteristics);
    bool gray = img->yuvFormat == AVIF_PIXEL_FORMAT_YUV400 && d->color.space == IC_COLOR_SPACE_GRAY;
    ic__color_prepare(d, gray ? IC_COLOR_INPUT_GRAY : IC_COLOR_INPUT_RGBA);
}

/* Frame delays in milliseconds from the samples' durations. */
static void read_delays(ic__decoder *d, const avifDecoder *dec, uint32_t frames) {
    uint32_t *delays = d->image->frame_delays_ms;
    if (!delays) return;
    for (uint32_t i = 0; i < frames; i++) {
        avifImageTiming t;
        double ms = avifDecoderNthImageTiming(dec, i, &t) == AVIF_RESULT_OK ? t.duration * 1000.0 : 0;
        delays[i] = ms <= 0 || !isfinite(ms) ? 0 : ms >= UINT32_MAX ? UINT32_MAX : (uint32_t)lround(ms);
    }
}

/* Decodes and hands over `frames` frames; with a planned box average (shrink->small), each
 * frame is averaged into that picture first. */
static ic_status decode_frames(ic__decoder *d, avifDecoder *dec, uint32_t frames, bool alpha,
                               const ic__yuv_shrink *shrink) {
    const avifImage *small = shrink->small;
    uint32_t w = d->source_width, h = d->source_height;
    avifImage *view = avifImageCreateEmpty();
    if (!view) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "AVIF: out of memory");
    ic_status st = IC_OK;
    for (uint32_t f = 0; f < frames && st == IC_OK; f++) {
        if (ic__dec_cancelled(d)) {
            st = ic__dec_fail_cancelled(d);
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
            st = ic__set_error(d->err, IC_ERR_CORRUPT, "AVIF: frame %u is %ux%u, the image %ux%u", f,
                              img->width, img->height, w, h);
            break;
        }
        if (ic__dec_cancelled(d)) {
            st = ic__dec_fail_cancelled(d);
            break;
        }
        /* The AV1 stream may disagree with the container the plan was made from. */
        if (small && (img->depth != small->depth ||
                      (img->yuvFormat == AVIF_PIXEL_FORMAT_YUV400) != (small->yuvFormat == AVIF_PIXEL_FORMAT_YUV400))) {
            st = ic__set_error(d->err, IC_ERR_CORRUPT,
                              "AVIF: frame %u is %u-bit %s, the container said %u-bit %s", f, img->depth,
                              avifPixelFormatToString(img->yuvFormat), small->depth,
                              small->yuvFormat == AVIF_PIXEL_FORMAT_YUV400 ? "YUV400" : "colour");
            break;
        }
        if (small) ic__yuv_shrink_run(img, shrink);
        st = ic__yuv_convert(d, small ? small : img, view, f, alpha && img->alphaPlane != NULL);
        if (st == IC_OK && ic__dec_cancelled(d)) st = ic__dec_fail_cancelled(d);
    }
    avifImageDestroy(view);
    return st;
}

ic_status ic__avif_decode(ic__decoder *d) {
    ic_status st = ic__avif_load("AVIF", d->err);
    if (st != IC_OK) return st;
    bool all = d->opts.all_frames != 0;
    avifDecoder *dec;
    st = open_parsed(d->data, d->size, &d->opts.limits, all,
                               d->opts.use_helper_thread ? 2 : 1, &dec, d->err);
    if (st != IC_OK) return st;
    const avifImage *img = dec->image;
    uint32_t count = dec->imageCount > 0 ? (uint32_t)dec->imageCount : 1;
    uint32_t frames = all ? count : 1;
    bool alpha = dec->alphaPresent != 0;
    d->orientation = orientation_of(img);
    prepare_color(d, img);
    uint64_t extra = plane_bytes(img, alpha) * (count > 1 ? 9 : 2);
    st = ic__dec_check_size(d, img->width, img->height, frames, extra);
    if (st == IC_OK) st = ic__dec_reserve(d, extra);
    if (st != IC_OK) {
        avifDecoderDestroy(dec);
        return st;
    }
    /* An opaque picture shrunk 4x or more: YUV planes box-averaged to no less than twice the
     * output (as libwebp's scaler is used), the resampler doing the rest (yuv.c). */
    ic__yuv_shrink shrink = {.den = 1};
    if (!alpha) st = ic__yuv_shrink_begin(d, img, &shrink);
    uint32_t den = shrink.den;
    if (st == IC_OK) st = ic__dec_begin(d, (img->width + den - 1) / den, (img->height + den - 1) / den, frames);
    if (st == IC_OK) {
        if (count > 1) read_delays(d, dec, frames);
        st = decode_frames(d, dec, frames, alpha, &shrink);
    }
    ic__yuv_shrink_end(d, &shrink);
    avifDecoderDestroy(dec);
    ic__dec_release(d, extra);
    return st;
}

ic_status ic__avif_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    ic_status st = ic__avif_load("AVIF", err);
    if (st != IC_OK) return st;
    avifDecoder *dec;
    st = open_parsed(p, n, NULL, false, 1, &dec, err);
    if (st != IC_OK) return st;
    const avifImage *img = dec->image;
    info->width = img->width;
    info->height = img->height;
    info->frame_count = dec->imageCount > 0 ? (uint32_t)dec->imageCount : 1;
    info->has_alpha = dec->alphaPresent != 0;
    info->bit_depth = (uint8_t)img->depth;
    info->orientation = orientation_of(img);
    info->is_progressive = dec->progressiveState != AVIF_PROGRESSIVE_STATE_UNAVAILABLE;
    if (img->icc.size > 0) ic__icc_note_probe(info, img->icc.data, img->icc.size, img->icc.size);
    avifDecoderDestroy(dec);
    return IC_OK;
}
