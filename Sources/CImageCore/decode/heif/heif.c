/*
 * heif.c — HEIF and HEIC decoding with libheif (HEVC through libde265), the version
 * IC_HEIF_MIRRORED_VERSION names (README.md here).
 *
 * The primary image only (frame_count 1; image sequences and other items are
 * not read). libheif applies the item's transformative properties (clap crop,
 * irot, imir) itself; keep_orientation=1 sets its ignore_transformations, so
 * the pixels come as coded — the clean-aperture crop is then not applied either
 * (libheif has one switch for all three). The orientation reported is the
 * primary item's irot/imir as an EXIF value (heif_boxes.c); an EXIF block in the
 * file is not applied on top (HEIF: irot/imir are authoritative).
 *
 * Pixels: an item of 8 bits comes as heif_chroma_interleaved_RGBA, 8 bits. An
 * item of 9 to 16 bits (luma or chroma; 10- and 12-bit HDR HEIC from phones) comes
 * as libheif's 16-bit big-endian RRGGBB, or RRGGBBAA with alpha, holding the
 * values of its YCbCr to RGB step at the coded depth b
 * (heif_image_get_bits_per_pixel_range); each sample v is rounded to 8 bits here,
 * one row at a time into the sink's row: round(v * 255 / (2^b - 1)), computed as
 * (v * 255 + (2^b - 1) / 2) / (2^b - 1) in integers (2^b - 1 is odd: no ties),
 * the rounding AVIF and JPEG XL get from their libraries. libheif's own
 * 8-bit output would drop the low bits instead (a shift). Big-endian because
 * libheif writes those layouts directly (the little-endian ones cost it a
 * second copy to swap bytes); RRGGBB without alpha because RRGGBBAA would fill
 * alpha with 0xFFFF, not 2^b - 1. Alpha is taken at the colour's depth: libheif
 * reports one depth for the interleaved image (its encoder writes alpha at
 * the colour's depth); a larger value counts as the maximum. Straight alpha,
 * rounded like the colour, is premultiplied by the sink; a handle that says its
 * colour is premultiplied already is passed through as final. Should libheif
 * refuse the 16-bit layout for a picture (its conversion graph above 8 bits is
 * narrower), its own truncating 8-bit output is taken instead. HDR output is out
 * of scope: the values are read as 8-bit SDR, whatever their transfer.
 *
 * Colour: an ICC profile ('prof'/'rICC' colr box) goes to the colour code like
 * JPEG's and PNG's and wins over an nclx box. Without one, an nclx colr box is
 * used by libheif for the YCbCr to RGB matrix, and its primaries and transfer go
 * to the code AVIF's go to (color/cicp.c): Display P3 (primaries 12, sRGB
 * transfer 13) is converted through the P3 profile ImageKit builds, which the
 * output image then carries; BT.709/sRGB and unspecified need nothing; other code
 * points (BT.2020, PQ, HLG: HDR is out of scope) are left as they are, their
 * values read as sRGB. An nclx in the HEVC stream only (no colr box) sets the
 * matrix, not the colour (libheif reports it after the decode only).
 *
 * Limits: the coded size (ispe: libheif decodes all of it before cropping) and
 * the output size are checked (ic__dec_check_size) before libheif decodes, with an
 * estimate of libheif's working memory: the decoded YCbCr 4:2:0 planes twice
 * (libde265's picture and libheif's copy, two bytes a sample above 8 bits), the
 * alpha plane likewise, and libheif's interleaved output (4 bytes a pixel at 8
 * bits, 6 or 8 with alpha above). libheif's own size limit
 * (heif_context_set_maximum_image_size_limit, the only security limit it
 * exposes, per side) is lowered to max_pixels when that is smaller. What ispe does
 * not bound is read from the boxes first (heif_boxes.c, hevc_sps.c; see
 * check_coded_pictures): the largest grid or overlay canvas and the largest picture
 * an HEVC SPS in the file declares meet the same limits, and derived images that
 * derive from themselves (libheif recurses until the stack overflows) or whose
 * inputs decode far more pixels than their canvas shows are refused.
 *
 * Thumbnails: an embedded thumbnail item at least as large as the planned output
 * is decoded instead of the primary image; otherwise the primary image is
 * decoded and shrunk through the sink (above 8 bits: rounded as above, then
 * resampled). For an opaque 8-bit primary image shrunk 4x or more, libheif is
 * asked for YCbCr 4:2:0 planes (HEIC's usual coding: no
 * conversion then; libheif reports no coded chroma format, and without an
 * explicit one it hands over RGB); 8-bit planes are box-averaged and converted 16 rows
 * at a time into the resampler like AVIF's (yuv.c), with the matrix and range
 * libheif's own RGBA conversion would use: the decoded image's nclx (from the
 * colr box or the HEVC stream), else libheif's default, BT.601 full range.
 * Planes libheif hands over otherwise are decoded again as RGBA.
 *
 * Cancellation: looked at before and after the decode. libheif cannot stop
 * inside heif_decode_image: its progress callbacks (on_progress, tiles of grid
 * images only) return nothing.
 *
 * libheif is opened by the first decode or probe (codecs/ic_heif_lib.h); when it cannot be,
 * both fail with IC_ERR_UNSUPPORTED_FORMAT and the loader's reason. The YUV path needs libavif
 * too (yuv.c), opened when it is first taken; without it the thumbnail comes from RGBA rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../codecs/ic_heif_lib.h"
#include "../ic_yuv_internal.h"
#include "../ic_dec_color.h"
#include "../ic_decoder.h"
#include "../ic_formats.h"
#include "../ic_sink.h"
#include "ic_heif_internal.h"

/* libheif's own default size limit (MAX_IMAGE_WIDTH/HEIGHT). */
#define HEIF_LIBRARY_MAX_SIDE 32768u

static const char *name(const ic__decoder *d) { return ic_format_name(d->format); }

/* libheif's message without its trailing newline, in `buf`. */
static const char *message(struct heif_error e, char buf[256]) {
    snprintf(buf, 256, "%s", e.message ? e.message : "error");
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
    return buf;
}

static ic_status heif_failure(ic__decoder *d, struct heif_error e, const char *what) {
    char text[256];
    ic_status st;
    switch (e.code) {
    case heif_error_Memory_allocation_error: st = IC_ERR_OUT_OF_MEMORY; break;
    case heif_error_Unsupported_feature:
    case heif_error_Unsupported_filetype: st = IC_ERR_UNSUPPORTED_FEATURE; break;
    default: st = IC_ERR_CORRUPT; break;
    }
    if (e.subcode == heif_suberror_End_of_data) st = IC_ERR_TRUNCATED;
    if (e.subcode == heif_suberror_Security_limit_exceeded) st = IC_ERR_LIMIT_EXCEEDED;
    return ic__set_error(d->err, st, "%s: %s: %s", name(d), what, message(e, text));
}

/* Reads the container into a context limited by `max_pixels` (0: libheif's own limits), after
 * bounding its items by what an image of `item_pixels` needs; NULL with an error set. */
static struct heif_context *open_context(const uint8_t *data, size_t size, uint64_t max_pixels,
                                         uint64_t item_pixels, const char *fmt, ic_error *err,
                                         ic_status *st) {
    /* A HEIF file has one file-level meta box (ISO/IEC 23008-12). libheif reads every
     * one it meets and mixes their items and properties: fuzz_heif found files that make it
     * allocate 760 MB and then read out of bounds. */
    if (ic__heif_meta_boxes(data, size) > 1) {
        *st = ic__set_error(err, IC_ERR_CORRUPT, "%s: more than one file-level meta box", fmt);
        return NULL;
    }
    /* libheif reads a file's items in time that grows with their square (a 1.4 MB file of
     * 20 000 items: 11 s in heif-info). An image of item_pixels needs no more items than a
     * grid of 256 x 256 tiles for it and for its alpha, with 256 more (thumbnails, metadata). */
    uint64_t items = ic__heif_item_count(data, size);
    uint64_t most = item_pixels ? 256 + item_pixels / (256 * 256) * 2 : UINT64_MAX;
    if (items > most) {
        *st = ic__set_error(err, IC_ERR_LIMIT_EXCEEDED,
                           "%s: %llu items, more than the %llu an image within the limit of %llu pixels needs", fmt,
                           (unsigned long long)items, (unsigned long long)most, (unsigned long long)item_pixels);
        return NULL;
    }
    struct heif_context *ctx = heif_context_alloc();
    if (!ctx) {
        *st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "%s: cannot create a libheif context", fmt);
        return NULL;
    }
    /* libheif refuses a side >= the limit; a side over max_pixels can never pass ours. */
    if (max_pixels && max_pixels < HEIF_LIBRARY_MAX_SIDE) {
        heif_context_set_maximum_image_size_limit(ctx, (int)max_pixels + 1);
    }
    heif_context_set_max_decoding_threads(ctx, 0);
    struct heif_error e = heif_context_read_from_memory_without_copy(ctx, data, size, NULL);
    if (e.code != heif_error_Ok) {
        ic_status s = e.subcode == heif_suberror_End_of_data ? IC_ERR_TRUNCATED : IC_ERR_CORRUPT;
        if (e.code == heif_error_Memory_allocation_error) s = IC_ERR_OUT_OF_MEMORY;
        if (e.subcode == heif_suberror_Security_limit_exceeded) s = IC_ERR_LIMIT_EXCEEDED;
        char text[256];
        *st = ic__set_error(err, s, "%s: cannot read the container: %s", fmt, message(e, text));
        heif_context_free(ctx);
        return NULL;
    }
    *st = IC_OK;
    return ctx;
}

/* The deeper of an item's luma and chroma sample depths (-1 when libheif cannot say). */
static int item_bits(const struct heif_image_handle *handle) {
    int luma = heif_image_handle_get_luma_bits_per_pixel(handle);
    int chroma = heif_image_handle_get_chroma_bits_per_pixel(handle);
    return luma > chroma ? luma : chroma;
}

/* libheif's working memory for decoding a w x h item of `bits` whose chroma is `chroma` (an
 * SPS's chroma_format_idc: 0 4:0:0, 1 4:2:0, 2 4:2:2, 3 4:4:4; see the top of the file). */
static uint64_t working_bytes(uint32_t w, uint32_t h, int bits, bool alpha, unsigned chroma) {
    static const unsigned twice_samples[4] = {2, 3, 4, 6};
    uint64_t px = (uint64_t)w * h;
    uint64_t sample = bits > 8 ? 2 : 1;
    uint64_t planes = px * twice_samples[chroma & 3] / 2 * sample + (alpha ? px * sample : 0);
    uint64_t output = bits > 8 ? px * (alpha ? 8 : 6) : px * 4;
    return 2 * planes + output;
}

/* The thumbnail item to decode instead of the primary image, or NULL. */
static struct heif_image_handle *pick_thumbnail(ic__decoder *d, struct heif_image_handle *primary) {
    if (!ic__dec_plans_resize(d)) return NULL;
    int n = heif_image_handle_get_number_of_thumbnails(primary);
    if (n <= 0) return NULL;
    heif_item_id ids[8];
    if (n > 8) n = 8;
    n = heif_image_handle_get_list_of_thumbnail_IDs(primary, ids, n);
    const ic__geometry *g = &d->plan;
    struct heif_image_handle *best = NULL;
    uint64_t best_px = 0;
    for (int i = 0; i < n; i++) {
        struct heif_image_handle *t = NULL;
        if (heif_image_handle_get_thumbnail(primary, ids[i], &t).code != heif_error_Ok) continue;
        double tw = heif_image_handle_get_width(t), th = heif_image_handle_get_height(t);
        double sx = tw / d->source_width, sy = th / d->source_height;
        /* The same picture (its aspect, to two pixels of the thumbnail's height) with enough
         * pixels for the output. */
        bool same = tw > 0 && th > 0 && fabs(th - tw * d->source_height / d->source_width) <= 2;
        bool enough = g->crop.w * sx >= g->out_w && g->crop.h * sy >= g->out_h;
        uint64_t px = (uint64_t)tw * (uint64_t)th;
        if (same && enough && (!best || px < best_px)) {
            if (best) heif_image_handle_release(best);
            best = t;
            best_px = px;
        } else {
            heif_image_handle_release(t);
        }
    }
    return best;
}

/* Wraps libheif's 8-bit YCbCr planes of `img` in `pic` (not owned); false for any other layout. */
static bool wrap_planes(const struct heif_image *img, avifImage *pic) {
    if (heif_image_get_colorspace(img) != heif_colorspace_YCbCr) return false;
    enum heif_chroma chroma = heif_image_get_chroma_format(img);
    avifPixelFormat format = chroma == heif_chroma_420   ? AVIF_PIXEL_FORMAT_YUV420
                             : chroma == heif_chroma_422 ? AVIF_PIXEL_FORMAT_YUV422
                             : chroma == heif_chroma_444 ? AVIF_PIXEL_FORMAT_YUV444
                                                         : AVIF_PIXEL_FORMAT_NONE;
    if (format == AVIF_PIXEL_FORMAT_NONE) return false;
    static const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    int w = heif_image_get_width(img, heif_channel_Y), h = heif_image_get_height(img, heif_channel_Y);
    if (w <= 0 || h <= 0) return false;
    for (int p = 0; p < 3; p++) {
        if (heif_image_get_bits_per_pixel_range(img, channels[p]) != 8) return false;
        int stride = 0;
        const uint8_t *plane = heif_image_get_plane_readonly(img, channels[p], &stride);
        if (!plane || stride <= 0) return false;
        pic->yuvPlanes[p] = (uint8_t *)plane;
        pic->yuvRowBytes[p] = (uint32_t)stride;
    }
    pic->width = (uint32_t)w;
    pic->height = (uint32_t)h;
    pic->depth = 8;
    pic->yuvFormat = format;
    pic->imageOwnsYUVPlanes = AVIF_FALSE;
    /* libheif's own conversion: the image's nclx, else BT.601 full range. */
    struct heif_color_profile_nclx *nclx = NULL;
    pic->yuvRange = AVIF_RANGE_FULL;
    pic->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    pic->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    pic->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    if (heif_image_get_nclx_color_profile(img, &nclx).code == heif_error_Ok && nclx) {
        pic->yuvRange = nclx->full_range_flag ? AVIF_RANGE_FULL : AVIF_RANGE_LIMITED;
        pic->matrixCoefficients = (avifMatrixCoefficients)nclx->matrix_coefficients;
        pic->colorPrimaries = (avifColorPrimaries)nclx->color_primaries;
        pic->transferCharacteristics = (avifTransferCharacteristics)nclx->transfer_characteristics;
    }
    /* Allocated even when libheif refuses the code points (see take_color). */
    if (nclx) heif_nclx_color_profile_free(nclx);
    return true;
}

/* Box-averages and converts the planes of `img`, wrapped in `pic`, to the sink (yuv.c). */
static ic_status put_planes(ic__decoder *d, avifImage *pic) {
    ic__yuv_shrink shrink;
    ic_status st = ic__yuv_shrink_begin(d, pic, &shrink);
    avifImage *view = st == IC_OK ? avifImageCreateEmpty() : NULL;
    if (st == IC_OK && !view) st = ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "%s: out of memory", name(d));
    if (st == IC_OK) st = ic__dec_begin(d, (pic->width + shrink.den - 1) / shrink.den,
                                       (pic->height + shrink.den - 1) / shrink.den, 1);
    if (st == IC_OK) {
        if (shrink.small) ic__yuv_shrink_run(pic, &shrink);
        st = ic__yuv_convert(d, shrink.small ? shrink.small : pic, view, 0, false);
    }
    if (view) avifImageDestroy(view);
    ic__yuv_shrink_end(d, &shrink);
    return st;
}

/* Rows of libheif's interleaved output: 8-bit RGBA, or 16-bit big-endian samples of `bits`. */
typedef struct heif_rows {
    const uint8_t *px;
    size_t stride;
    uint32_t width;
    uint32_t height;
    bool wide;
    int bits;
    bool alpha;
} heif_rows;

/* Reduces one row of 16-bit samples (RRGGBB or RRGGBBAA) to RGBA8 through `to8`, the 8-bit
 * value of each sample up to `max`; samples over `max` count as `max`. */
static void reduce_row(const heif_rows *r, const uint8_t *src, uint8_t *dst, const uint8_t *to8,
                       uint32_t max) {
    uint32_t channels = r->alpha ? 4 : 3;
    for (uint32_t x = 0; x < r->width; x++, dst += 4) {
        for (uint32_t c = 0; c < channels; c++, src += 2) {
            uint32_t v = (uint32_t)src[0] << 8 | src[1];
            dst[c] = to8[v < max ? v : max];
        }
        if (!r->alpha) dst[3] = 255;
    }
}

/* Hands the rows to the sink, frame 0 top down: 8-bit rows as they are, 16-bit ones rounded to
 * 8 bits one row at a time into the sink's row (see the top of the file). */
static ic_status put_rows(ic__decoder *d, const heif_rows *r, bool straight) {
    if (!r->wide) {
        ic__dec_put_rows(d, 0, 0, r->height, r->px, r->stride, straight);
        return IC_OK;
    }
    uint32_t max = (1u << r->bits) - 1;
    uint8_t *to8 = ic__dec_malloc(d, (size_t)max + 1);
    if (!to8) return d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    /* round(v * 255 / max): max is odd, so no value falls halfway. */
    for (uint32_t v = 0; v <= max; v++) to8[v] = (uint8_t)((v * 255 + max / 2) / max);
    for (uint32_t y = 0; y < r->height; y++) {
        reduce_row(r, r->px + (size_t)y * r->stride, ic__dec_row(d, 0, y), to8, max);
        ic__dec_rows_done(d, 0, y, 1, straight);
    }
    ic__dec_free(d, to8, (size_t)max + 1);
    return IC_OK;
}

/* Decodes `handle` and hands its rows to the sink; with `planar`, asks for YCbCr 4:2:0 planes
 * and takes the YUV path when they come 8-bit (see the top of the file). */
static ic_status decode_handle(ic__decoder *d, struct heif_image_handle *handle, bool planar) {
    bool alpha = heif_image_handle_has_alpha_channel(handle) != 0;
    bool premultiplied = alpha && heif_image_handle_is_premultiplied_alpha(handle) != 0;
    int bits = item_bits(handle);
    /* Above 8 bits: 16-bit samples, rounded here (`planar` is asked for 8-bit items only). */
    bool wide = bits > 8;
    enum heif_chroma rgb = !wide ? heif_chroma_interleaved_RGBA
                           : alpha ? heif_chroma_interleaved_RRGGBBAA_BE
                                   : heif_chroma_interleaved_RRGGBB_BE;
    int cw = heif_image_handle_get_ispe_width(handle), ch = heif_image_handle_get_ispe_height(handle);
    uint32_t w = cw > 0 ? (uint32_t)cw : (uint32_t)heif_image_handle_get_width(handle);
    uint32_t h = ch > 0 ? (uint32_t)ch : (uint32_t)heif_image_handle_get_height(handle);
    uint64_t work = working_bytes(w, h, bits, alpha, 1);
    ic_status st = ic__dec_reserve(d, work);
    if (st != IC_OK) return st;
    struct heif_decoding_options *o = heif_decoding_options_alloc();
    if (!o) {
        ic__dec_release(d, work);
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "%s: cannot allocate options", name(d));
    }
    o->ignore_transformations = d->opts.keep_orientation != 0;
    o->convert_hdr_to_8bit = !wide;
    struct heif_image *img = NULL;
    struct heif_error e = heif_decode_image(handle, &img, planar ? heif_colorspace_YCbCr : heif_colorspace_RGB,
                                            planar ? heif_chroma_420 : rgb, o);
    if (e.code == heif_error_Ok && planar) {
        avifImage *pic = avifImageCreateEmpty();
        bool wrapped = pic && wrap_planes(img, pic);
        if (wrapped) st = ic__dec_cancelled(d) ? ic__dec_fail_cancelled(d) : put_planes(d, pic);
        if (pic) avifImageDestroy(pic);
        if (wrapped) {
            heif_decoding_options_free(o);
            heif_image_release(img);
            ic__dec_release(d, work);
            return st;
        }
        /* Planes of another layout: libheif converts them to RGBA after all. */
        heif_image_release(img);
        img = NULL;
        e = heif_decode_image(handle, &img, heif_colorspace_RGB, rgb, o);
    }
    if (e.code == heif_error_Unsupported_feature && wide) {
        /* libheif has no 16-bit conversion for this picture's layout (its colour conversion
         * graph is narrower than its 8-bit one): its own 8-bit output then, truncated, rather
         * than no image. */
        wide = false;
        o->convert_hdr_to_8bit = 1;
        e = heif_decode_image(handle, &img, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, o);
    }
    heif_decoding_options_free(o);
    if (e.code != heif_error_Ok) {
        ic__dec_release(d, work);
        return heif_failure(d, e, "cannot decode the image");
    }
    if (ic__dec_cancelled(d)) {
        heif_image_release(img);
        ic__dec_release(d, work);
        return ic__dec_fail_cancelled(d);
    }
    int stride = 0;
    heif_rows rows = {.wide = wide, .alpha = alpha};
    rows.px = heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
    int iw = heif_image_get_width(img, heif_channel_interleaved);
    int ih = heif_image_get_height(img, heif_channel_interleaved);
    rows.bits = wide ? heif_image_get_bits_per_pixel_range(img, heif_channel_interleaved) : 8;
    int pixel_bytes = !wide ? 4 : alpha ? 8 : 6;
    if (!rows.px || iw <= 0 || ih <= 0 || stride / pixel_bytes < iw || rows.bits < 1 || rows.bits > 16) {
        heif_image_release(img);
        ic__dec_release(d, work);
        return ic__set_error(d->err, IC_ERR_CORRUPT, "%s: libheif returned no %s pixels", name(d),
                            wide ? "16-bit RGB" : "RGBA");
    }
    rows.stride = (size_t)stride;
    rows.width = (uint32_t)iw;
    rows.height = (uint32_t)ih;
    st = ic__dec_begin(d, rows.width, rows.height, 1);
    if (st == IC_OK) st = put_rows(d, &rows, alpha && !premultiplied);
    if (st == IC_OK && premultiplied) ic__dec_note_transparency(d);
    heif_image_release(img);
    ic__dec_release(d, work);
    return st;
}

/* The colour of `handle` to the colour code: its ICC profile if it has one (one that cannot be
 * read is ignored), else what its nclx colour box signals (color/cicp.c, as AVIF's). */
static void take_color(ic__decoder *d, struct heif_image_handle *handle) {
    enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(handle);
    if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
        size_t size = heif_image_handle_get_raw_color_profile_size(handle);
        uint8_t *icc = size > 0 && size <= IC_ICC_MAX_BYTES ? ic__dec_malloc(d, size) : NULL;
        if (icc && heif_image_handle_get_raw_color_profile(handle, icc).code == heif_error_Ok) {
            ic__color_take_profile(d, icc, size);
        } else {
            ic__color_ignore(d);
        }
        ic__dec_free(d, icc, size);
    }
    /* libheif allocates the profile before it checks the code points: free it either way. */
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx) {
        ic__color_take_cicp(d, (uint16_t)nclx->color_primaries, (uint16_t)nclx->transfer_characteristics);
    }
    if (nclx) heif_nclx_color_profile_free(nclx);
    ic__color_prepare(d, IC_COLOR_INPUT_RGBA);
}

/* What libheif would allocate and decode beyond the primary item's ispe, checked before it
 * does: AV1-coded items (refused), a grid's or overlay's canvas (allocated at the size its item data declares), the
 * largest HEVC picture in the file (libde265 allocates each at its SPS's size, and libheif
 * converts all of it) — both against the limits — and derived images that nest in a cycle,
 * decode far more than their canvas shows, or are grids whose tiles leave canvas pixels
 * unwritten. */
static ic_status check_coded_pictures(ic__decoder *d, int bits, bool alpha) {
    ic__heif_scan scan;
    ic__heif_derived_status found = ic__heif_scan_items(d->data, d->size, &scan);
    const ic__heif_derived *derived = &scan.derived;
    /* libheif would hand an AV1-coded item to dav1d or aom with no limit on its frame
     * size, and only HEVC pictures are read here: AV1 goes through libavif (AVIF brands). */
    if (scan.has_av1) {
        return ic__set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "%s: an AV1-coded image in a file not branded AVIF (AV1 is decoded as AVIF)", name(d));
    }
    switch (found) {
    case IC_HEIF_DERIVED_OK: break;
    case IC_HEIF_DERIVED_UNREADABLE:
        return ic__set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "%s: the primary image's grid or overlay data cannot be located", name(d));
    case IC_HEIF_DERIVED_TOO_DEEP:
        return ic__set_error(d->err, IC_ERR_CORRUPT,
                            "%s: image %u derives from images, or carries auxiliary images, more than %d deep (or itself)",
                            name(d), derived->item, IC_HEIF_MAX_DERIVATION_DEPTH);
    case IC_HEIF_DERIVED_TOO_MANY:
        return ic__set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                            "%s: the derived images refer to more than %u images", name(d), IC_HEIF_MAX_DERIVATION_VISITS);
    case IC_HEIF_DERIVED_NO_MEMORY:
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "%s: no memory to read the items' boxes", name(d));
    case IC_HEIF_DERIVED_OVERDRAWN:
        return ic__set_error(d->err, IC_ERR_CORRUPT,
                            "%s: derived image %u's %u inputs decode %llu pixels for a %ux%u canvas", name(d),
                            derived->item, derived->inputs, (unsigned long long)derived->decoded_pixels,
                            derived->canvas_width, derived->canvas_height);
    case IC_HEIF_DERIVED_UNCOVERED:
        return ic__set_error(d->err, IC_ERR_CORRUPT,
                            "%s: grid image %u's tiles do not cover its %ux%u canvas (each must be an HEVC image of "
                            "one size, by its ispe, that decodes to at least that size)",
                            name(d), derived->item, derived->canvas_width, derived->canvas_height);
    }
    if (derived->largest_width > 0 && derived->largest_height > 0) {
        uint32_t cw = derived->largest_width, ch = derived->largest_height;
        ic_status st = ic__dec_check_size(d, cw, ch, 1, working_bytes(cw, ch, bits, alpha, 1));
        if (st != IC_OK) return st;
    }
    if (!scan.has_picture) return IC_OK;
    const ic__hevc_picture *coded = &scan.picture;
    return ic__dec_check_size(d, coded->width, coded->height, 1,
                             working_bytes(coded->width, coded->height, bits, alpha, coded->chroma_format));
}

ic_status ic__heif_decode(ic__decoder *d) {
    ic_status st = ic__heif_load(name(d), d->err);
    if (st == IC_OK) st = ic__heif_hevc_load(name(d), d->err);
    if (st != IC_OK) return st;
    struct heif_context *ctx =
        open_context(d->data, d->size, d->opts.limits.max_pixels, d->opts.limits.max_pixels, name(d),
                     d->err, &st);
    if (!ctx) return st;
    struct heif_image_handle *primary = NULL;
    struct heif_error e = heif_context_get_primary_image_handle(ctx, &primary);
    if (e.code != heif_error_Ok) {
        heif_context_free(ctx);
        return heif_failure(d, e, "no primary image");
    }
    uint8_t orientation = ic__heif_orientation(d->data, d->size);
    uint32_t w = (uint32_t)heif_image_handle_get_width(primary);
    uint32_t h = (uint32_t)heif_image_handle_get_height(primary);
    bool alpha = heif_image_handle_has_alpha_channel(primary) != 0;
    int bits = item_bits(primary);
    if (d->opts.keep_orientation) {
        /* The coded size: before clap, irot and imir. */
        int iw = heif_image_handle_get_ispe_width(primary);
        int ih = heif_image_handle_get_ispe_height(primary);
        if (iw > 0 && ih > 0) {
            w = (uint32_t)iw;
            h = (uint32_t)ih;
        }
    }
    /* libheif decodes the whole coded image (ispe) before it crops to the clean aperture:
     * the limits apply to that size first, then the output is planned in the orientation
     * libheif delivers (it orients, not decode.c). */
    int cw = heif_image_handle_get_ispe_width(primary), ch = heif_image_handle_get_ispe_height(primary);
    uint32_t coded_w = cw > 0 ? (uint32_t)cw : w, coded_h = ch > 0 ? (uint32_t)ch : h;
    uint64_t work = working_bytes(coded_w, coded_h, bits, alpha, 1);
    st = ic__dec_check_size(d, coded_w, coded_h, 1, work);
    if (st == IC_OK) st = check_coded_pictures(d, bits, alpha);
    if (st == IC_OK) st = ic__dec_check_size(d, w, h, 1, work);
    d->orientation = orientation;
    d->codec_oriented = true;
    if (st == IC_OK && ic__dec_cancelled(d)) st = ic__dec_fail_cancelled(d);
    if (st == IC_OK) {
        take_color(d, primary);
        struct heif_image_handle *thumb = d->opts.keep_orientation ? NULL : pick_thumbnail(d, primary);
        /* The YUV path for an opaque 8-bit primary image shrunk 4x or more, libavif permitting. */
        bool planar = !thumb && !alpha && heif_image_handle_get_luma_bits_per_pixel(primary) == 8 &&
                      heif_image_handle_get_chroma_bits_per_pixel(primary) == 8 &&
                      ic__dec_shrink_denominator(d, 8) >= 4 && ic__avif_load(name(d), NULL) == IC_OK;
        st = decode_handle(d, thumb ? thumb : primary, planar);
        if (thumb) heif_image_handle_release(thumb);
    }
    heif_image_handle_release(primary);
    heif_context_free(ctx);
    return st;
}

ic_status ic__heif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err) {
    const char *fmt = ic_format_name(info->format);
    ic_status st = ic__heif_load(fmt, err);
    if (st != IC_OK) return st;
    /* A probe has no limits of its own: it reads the size of an image of any size, but bounds
     * the items as a decode within the default limits would (a probe of 20 000 items: 8 s). */
    struct heif_context *ctx = open_context(data, size, 0, IC_DEFAULT_MAX_PIXELS, fmt, err, &st);
    if (!ctx) return st;
    struct heif_image_handle *h = NULL;
    struct heif_error e = heif_context_get_primary_image_handle(ctx, &h);
    if (e.code != heif_error_Ok) {
        heif_context_free(ctx);
        char text[256];
        return ic__set_error(err, IC_ERR_CORRUPT, "%s: no primary image: %s", fmt, message(e, text));
    }
    info->orientation = ic__heif_orientation(data, size);
    uint32_t w = (uint32_t)heif_image_handle_get_width(h);
    uint32_t hh = (uint32_t)heif_image_handle_get_height(h);
    /* As stored: the displayed size turned back by the orientation. */
    info->width = info->orientation >= 5 ? hh : w;
    info->height = info->orientation >= 5 ? w : hh;
    info->has_alpha = heif_image_handle_has_alpha_channel(h) != 0;
    int bits = heif_image_handle_get_luma_bits_per_pixel(h);
    info->bit_depth = bits > 0 ? (uint8_t)bits : 8;
    info->frame_count = 1;
    enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(h);
    if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
        size_t icc_size = heif_image_handle_get_raw_color_profile_size(h);
        uint8_t head[20];
        if (icc_size >= sizeof head && icc_size <= IC_ICC_MAX_BYTES) {
            uint8_t *icc = malloc(icc_size);
            if (icc && heif_image_handle_get_raw_color_profile(h, icc).code == heif_error_Ok) {
                memcpy(head, icc, sizeof head);
                ic__icc_note_probe(info, head, sizeof head, icc_size);
            }
            free(icc);
        }
    }
    heif_image_handle_release(h);
    heif_context_free(ctx);
    return IC_OK;
}
