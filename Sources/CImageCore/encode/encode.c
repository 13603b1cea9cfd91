/*
 * encode.c — JPEG (TurboJPEG) and PNG (libpng) encoders, and the ICC profile each
 * embeds when asked (APP2 markers spliced into TurboJPEG's output, libpng's iCCP);
 * WebP (webp_encode.c), AVIF (avif_encode.c) and GIF (gif_encode.c) are dispatched
 * from here.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <turbojpeg.h>

#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_encode_internal.h"

void ic_encode_options_init(ic_encode_options *o, ic_format format) {
    memset(o, 0, sizeof *o);
    o->format = format;
    o->quality = format == IC_FORMAT_WEBP ? 80 : format == IC_FORMAT_AVIF ? 60 : format == IC_FORMAT_GIF ? 100 : 85;
    o->compression_level = 6;
    o->speed = format == IC_FORMAT_GIF ? 4 : 6;
    o->dither_level = 1.0f;
    o->frame_differencing = 1;
    o->background[0] = o->background[1] = o->background[2] = 255;
}

void ic_encode_free(uint8_t *data) { free(data); }

/* ---- ICC profiles ---- */

/* An APP2 ICC_PROFILE marker: length (2), "ICC_PROFILE\0" (12), sequence number and marker
 * count (1 each), then at most this many bytes of the profile; 255 markers at most. */
#define ICC_MARKER_OVERHEAD 16
#define ICC_MARKER_DATA (65535 - ICC_MARKER_OVERHEAD)
#define ICC_MAX_MARKERS 255

/* The minimal checks a profile to embed passes (see ic_encode_options.icc_profile). */
static ic_status check_icc(const ic_encode_options *o, ic_error *err) {
    const char *name = ic_format_name(o->format);
    const uint8_t *p = o->icc_profile;
    size_t n = o->icc_profile_size;
    if (!p) {
        if (n == 0) return IC_OK;
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "%s: ICC profile of %zu bytes at NULL",
                            name, n);
    }
    if (n < 132) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "%s: the ICC profile is %zu bytes, shorter than a profile header and "
                            "tag count (132 bytes)", name, n);
    }
    uint32_t declared = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    if (declared != n) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "%s: the ICC profile's header says %u bytes, but it is %zu bytes",
                            name, declared, n);
    }
    if (memcmp(p + 36, "acsp", 4) != 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "%s: the ICC profile has no 'acsp' signature at byte 36", name);
    }
    if (o->format == IC_FORMAT_JPEG && n > (size_t)ICC_MAX_MARKERS * ICC_MARKER_DATA) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "JPEG: the ICC profile is %zu bytes, more than %d APP2 markers hold "
                            "(%d bytes)", n, ICC_MAX_MARKERS, ICC_MAX_MARKERS * ICC_MARKER_DATA);
    }
    return IC_OK;
}

/* A malloc'd copy of `jpeg` with the profile's APP2 markers after SOI and the JFIF APP0
 * marker (which must come first), where libjpeg's jpeg_write_icc_profile puts them. */
static ic_status splice_icc(const uint8_t *jpeg, size_t size, const ic_encode_options *o,
                            uint8_t **out, size_t *out_size, ic_error *err) {
    size_t at = 2;
    if (size >= 6 && jpeg[2] == 0xFF && jpeg[3] == 0xE0) at = 4 + ((size_t)jpeg[4] << 8 | jpeg[5]);
    if (size < 2 || at > size) {
        return ic__set_error(err, IC_ERR_INTERNAL, "JPEG: unexpected encoder output");
    }
    size_t icc = o->icc_profile_size;
    size_t markers = (icc + ICC_MARKER_DATA - 1) / ICC_MARKER_DATA;
    size_t total = size + icc + markers * (2 + ICC_MARKER_OVERHEAD);
    uint8_t *p = malloc(total);
    if (!p) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG: out of memory");
    memcpy(p, jpeg, at);
    uint8_t *q = p + at;
    for (size_t i = 0; i < markers; i++) {
        size_t chunk = icc - i * ICC_MARKER_DATA;
        if (chunk > ICC_MARKER_DATA) chunk = ICC_MARKER_DATA;
        size_t len = chunk + ICC_MARKER_OVERHEAD;
        *q++ = 0xFF;
        *q++ = 0xE2;
        *q++ = (uint8_t)(len >> 8);
        *q++ = (uint8_t)len;
        memcpy(q, "ICC_PROFILE", 12);
        q += 12;
        *q++ = (uint8_t)(i + 1);
        *q++ = (uint8_t)markers;
        memcpy(q, o->icc_profile + i * ICC_MARKER_DATA, chunk);
        q += chunk;
    }
    memcpy(q, jpeg + at, size - at);
    *out = p;
    *out_size = total;
    return IC_OK;
}

/* ---- JPEG ---- */

static ic_status encode_jpeg(const ic_image *img, const uint8_t *frame, const ic_encode_options *o,
                             uint8_t **out, size_t *out_size, ic_error *err) {
    if (o->quality < 1 || o->quality > 100) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "JPEG: quality %d is not 1...100", o->quality);
    }
    const uint8_t *src = frame;
    uint8_t *composited = NULL;
    if (!img->is_opaque) {
        /* Over the background: c + bg * (255 - a) / 255, exact on premultiplied pixels. */
        composited = malloc(img->frame_size);
        if (!composited) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG: out of memory");
        for (uint32_t y = 0; y < img->height; y++) {
            const uint8_t *s = frame + (size_t)y * img->stride;
            uint8_t *d = composited + (size_t)y * img->stride;
            for (uint32_t x = 0; x < img->width; x++, s += 4, d += 4) {
                uint32_t rest = 255u - s[3];
                for (int c = 0; c < 3; c++) d[c] = (uint8_t)(s[c] + ic__mul255(o->background[c], rest));
                d[3] = 255;
            }
        }
        src = composited;
    }
    tjhandle tj = tjInitCompress();
    if (!tj) {
        free(composited);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot create encoder");
    }
    unsigned char *buf = NULL;
    unsigned long size = 0;
    int rc = tjCompress2(tj, src, (int)img->width, (int)img->stride, (int)img->height, TJPF_RGBX,
                         &buf, &size, TJSAMP_420, o->quality, o->progressive ? TJFLAG_PROGRESSIVE : 0);
    ic_status st = IC_OK;
    if (rc != 0) {
        st = ic__set_error(err, IC_ERR_ENCODE, "JPEG: %s", tjGetErrorStr2(tj));
    } else if (o->icc_profile) {
        st = splice_icc(buf, size, o, out, out_size, err);
    } else if (!(*out = malloc(size))) {
        st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG: out of memory");
    } else {
        memcpy(*out, buf, size);
        *out_size = size;
    }
    tjFree(buf);
    tjDestroy(tj);
    free(composited);
    return st;
}

/* ---- PNG ---- */

typedef struct png_out {
    uint8_t *data;
    size_t size, capacity;
    bool in_icc;        /* libpng is checking the ICC profile */
    char message[128];  /* libpng's error, or its last warning */
    jmp_buf jump;
} png_out;

static void png_write_fn(png_structp png, png_bytep bytes, size_t n) {
    png_out *o = png_get_io_ptr(png);
    if (o->size + n > o->capacity) {
        size_t cap = o->capacity ? o->capacity * 2 : 65536;
        while (cap < o->size + n) cap *= 2;
        uint8_t *p = realloc(o->data, cap);
        if (!p) png_error(png, "out of memory");
        o->data = p;
        o->capacity = cap;
    }
    memcpy(o->data + o->size, bytes, n);
    o->size += n;
}

static void png_flush_fn(png_structp png) { (void)png; }

static void png_error_fn(png_structp png, png_const_charp msg) {
    png_out *o = png_get_error_ptr(png);
    strncpy(o->message, msg ? msg : "error", sizeof o->message - 1);
    longjmp(o->jump, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg) {
    png_out *o = png_get_error_ptr(png);
    strncpy(o->message, msg ? msg : "warning", sizeof o->message - 1);
}

static ic_status encode_png(const ic_image *img, const uint8_t *frame, const ic_encode_options *o,
                            uint8_t **out, size_t *out_size, ic_error *err) {
    if (o->compression_level < 0 || o->compression_level > 9) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "PNG: compression level %d is not 0...9",
                            o->compression_level);
    }
    png_out sink;
    memset(&sink, 0, sizeof sink);
    uint8_t *volatile row = NULL;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "PNG: cannot create encoder");
    }
    if (setjmp(sink.jump)) {
        png_destroy_write_struct(&png, &info);
        free(row);
        free(sink.data);
        if (sink.in_icc) {
            return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "PNG: libpng refused the ICC profile: %s",
                                sink.message);
        }
        return ic__set_error(err, IC_ERR_ENCODE, "PNG: %s", sink.message);
    }
    png_set_write_fn(png, &sink, png_write_fn, png_flush_fn);
    png_set_compression_level(png, o->compression_level);
    bool opaque = img->is_opaque;
    png_set_IHDR(png, info, img->width, img->height, 8,
                 opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (o->icc_profile) {
        /* libpng checks the profile further (its tag table; an RGB profile for RGB pixels). */
        sink.in_icc = true;
        sink.message[0] = 0;
        png_set_iCCP(png, info, "ICC profile", PNG_COMPRESSION_TYPE_BASE, o->icc_profile,
                     (png_uint_32)o->icc_profile_size);
        if (!png_get_valid(png, info, PNG_INFO_iCCP)) {
            char why[sizeof sink.message];
            memcpy(why, sink.message, sizeof why);
            png_error(png, why[0] ? why : "the profile is not valid");
        }
        sink.in_icc = false;
    }
    png_write_info(png, info);
    if (opaque) {
        png_set_filler(png, 0, PNG_FILLER_AFTER); /* drop the 4th byte */
    } else {
        row = malloc((size_t)img->width * 4);
        if (!row) png_error(png, "out of memory");
    }
    for (uint32_t y = 0; y < img->height; y++) {
        const uint8_t *src = frame + (size_t)y * img->stride;
        if (opaque) {
            png_write_row(png, src);
        } else {
            ic_unpremultiply_row(row, src, img->width);
            png_write_row(png, row);
        }
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    *out = sink.data;
    *out_size = sink.size;
    return IC_OK;
}

ic_status ic_encode(const ic_image *image, const ic_encode_options *options, uint8_t **out,
                    size_t *out_size, ic_error *err) {
    ic__clear_error(err);
    if (!image || !options || !out || !out_size) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "encode: NULL argument");
    }
    *out = NULL;
    *out_size = 0;
    if (options->frame >= image->frame_count) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "encode: frame %u of %u", options->frame,
                            image->frame_count);
    }
    ic_format f = options->format;
    if (f != IC_FORMAT_JPEG && f != IC_FORMAT_PNG && f != IC_FORMAT_WEBP && f != IC_FORMAT_AVIF &&
        f != IC_FORMAT_GIF) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "encode: cannot encode %s",
                            ic_format_name(f));
    }
    ic_status st = check_icc(options, err);
    if (st != IC_OK) return st;
    if (f == IC_FORMAT_GIF) {
        if (options->icc_profile) {
            return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "GIF: ImageKit embeds no ICC profile in GIF");
        }
        return ic__encode_gif(image, options, out, out_size, err);
    }
    if (f == IC_FORMAT_WEBP) return ic__encode_webp(image, options, out, out_size, err);
    const uint8_t *frame = ic_image_frame(image, options->frame);
    switch (f) {
    case IC_FORMAT_JPEG: return encode_jpeg(image, frame, options, out, out_size, err);
    case IC_FORMAT_PNG: return encode_png(image, frame, options, out, out_size, err);
    default: return ic__encode_avif(image, frame, options, out, out_size, err);
    }
}
