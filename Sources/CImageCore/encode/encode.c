/* encode.c — JPEG (TurboJPEG), PNG (libpng) and WebP (libwebp) encoders. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <turbojpeg.h>
#include <webp/encode.h>

#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_encode.h"

void ic_encode_options_init(ic_encode_options *o, ic_format format) {
    memset(o, 0, sizeof *o);
    o->format = format;
    o->quality = format == IC_FORMAT_WEBP ? 80 : 85;
    o->compression_level = 6;
    o->background[0] = o->background[1] = o->background[2] = 255;
}

void ic_encode_free(uint8_t *data) { free(data); }

/* ---- JPEG ---- */

static ic_status encode_jpeg(const ic_image *img, const uint8_t *frame, const ic_encode_options *o,
                             uint8_t **out, size_t *out_size, ic_error *err) {
    if (o->quality < 1 || o->quality > 100) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "JPEG: quality %d is not 1...100", o->quality);
    }
    const uint8_t *src = frame;
    uint8_t *composited = NULL;
    if (!img->is_opaque) {
        /* Over the background: c + bg * (255 - a) / 255, exact on premultiplied pixels. */
        composited = malloc(img->frame_size);
        if (!composited) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG: out of memory");
        for (uint32_t y = 0; y < img->height; y++) {
            const uint8_t *s = frame + (size_t)y * img->stride;
            uint8_t *d = composited + (size_t)y * img->stride;
            for (uint32_t x = 0; x < img->width; x++, s += 4, d += 4) {
                uint32_t rest = 255u - s[3];
                for (int c = 0; c < 3; c++) d[c] = (uint8_t)(s[c] + ic_mul255(o->background[c], rest));
                d[3] = 255;
            }
        }
        src = composited;
    }
    tjhandle tj = tjInitCompress();
    if (!tj) {
        free(composited);
        return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot create encoder");
    }
    unsigned char *buf = NULL;
    unsigned long size = 0;
    int rc = tjCompress2(tj, src, (int)img->width, (int)img->stride, (int)img->height, TJPF_RGBX,
                         &buf, &size, TJSAMP_420, o->quality, o->progressive ? TJFLAG_PROGRESSIVE : 0);
    ic_status st = IC_OK;
    if (rc != 0) {
        st = ic_set_error(err, IC_ERR_ENCODE, "JPEG: %s", tjGetErrorStr2(tj));
    } else if (!(*out = malloc(size))) {
        st = ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG: out of memory");
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
    bool failed;
    char message[128];
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
    (void)png;
    (void)msg;
}

static ic_status encode_png(const ic_image *img, const uint8_t *frame, const ic_encode_options *o,
                            uint8_t **out, size_t *out_size, ic_error *err) {
    if (o->compression_level < 0 || o->compression_level > 9) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "PNG: compression level %d is not 0...9",
                            o->compression_level);
    }
    png_out sink;
    memset(&sink, 0, sizeof sink);
    uint8_t *volatile row = NULL;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "PNG: cannot create encoder");
    }
    if (setjmp(sink.jump)) {
        png_destroy_write_struct(&png, &info);
        free(row);
        free(sink.data);
        return ic_set_error(err, IC_ERR_ENCODE, "PNG: %s", sink.message);
    }
    png_set_write_fn(png, &sink, png_write_fn, png_flush_fn);
    png_set_compression_level(png, o->compression_level);
    bool opaque = img->is_opaque;
    png_set_IHDR(png, info, img->width, img->height, 8,
                 opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
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

/* ---- WebP ---- */

static ic_status encode_webp(const ic_image *img, const uint8_t *frame, const ic_encode_options *o,
                             uint8_t **out, size_t *out_size, ic_error *err) {
    if (!o->lossless && (o->quality < 0 || o->quality > 100)) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "WebP: quality %d is not 0...100", o->quality);
    }
    if (img->width > WEBP_MAX_DIMENSION || img->height > WEBP_MAX_DIMENSION) {
        return ic_set_error(err, IC_ERR_ENCODE, "WebP: %ux%u is larger than WebP's %dx%d",
                            img->width, img->height, WEBP_MAX_DIMENSION, WEBP_MAX_DIMENSION);
    }
    const uint8_t *src = frame;
    size_t stride = img->stride;
    uint8_t *straight = NULL;
    if (!img->is_opaque) {
        straight = malloc(img->frame_size);
        if (!straight) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "WebP: out of memory");
        for (uint32_t y = 0; y < img->height; y++) {
            ic_unpremultiply_row(straight + (size_t)y * stride, frame + (size_t)y * stride, img->width);
        }
        src = straight;
    }
    uint8_t *buf = NULL;
    size_t size = o->lossless
                      ? WebPEncodeLosslessRGBA(src, (int)img->width, (int)img->height, (int)stride, &buf)
                      : WebPEncodeRGBA(src, (int)img->width, (int)img->height, (int)stride,
                                       (float)o->quality, &buf);
    free(straight);
    if (size == 0) return ic_set_error(err, IC_ERR_ENCODE, "WebP: the encoder failed");
    *out = malloc(size);
    if (!*out) {
        WebPFree(buf);
        return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "WebP: out of memory");
    }
    memcpy(*out, buf, size);
    *out_size = size;
    WebPFree(buf);
    return IC_OK;
}

ic_status ic_encode(const ic_image *image, const ic_encode_options *options, uint8_t **out,
                    size_t *out_size, ic_error *err) {
    ic_clear_error(err);
    if (!image || !options || !out || !out_size) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "encode: NULL argument");
    }
    *out = NULL;
    *out_size = 0;
    if (options->frame >= image->frame_count) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "encode: frame %u of %u", options->frame,
                            image->frame_count);
    }
    const uint8_t *frame = ic_image_frame(image, options->frame);
    switch (options->format) {
    case IC_FORMAT_JPEG: return encode_jpeg(image, frame, options, out, out_size, err);
    case IC_FORMAT_PNG: return encode_png(image, frame, options, out, out_size, err);
    case IC_FORMAT_WEBP: return encode_webp(image, frame, options, out, out_size, err);
    default:
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "encode: cannot encode %s",
                            ic_format_name(options->format));
    }
}
