/*
 * heifjxl.c — bare libheif and libjxl calls for the HEIC and JPEG XL benchmarks: encoders
 * that make the inputs (libheif's x265 encoder, libjxl's JxlEncoder) and the decodes ImageKit
 * is compared with (the library's own RGBA8 output, on the calling thread).
 */
#include <stdlib.h>
#include <string.h>

#include <jxl/decode.h>
#include <jxl/encode.h>
#include <libheif/heif.h>

#include "CAnchors.h"

typedef struct grow_buffer {
    uint8_t *p;
    size_t size, capacity;
} grow_buffer;

static int grow_append(grow_buffer *b, const void *data, size_t size) {
    if (b->size + size > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 1 << 16;
        while (cap < b->size + size) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->capacity = cap;
    }
    memcpy(b->p + b->size, data, size);
    b->size += size;
    return 0;
}

static struct heif_error write_to_buffer(struct heif_context *ctx, const void *data, size_t size,
                                         void *userdata) {
    (void)ctx;
    struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, ""};
    struct heif_error fail = {heif_error_Encoding_error, heif_suberror_Cannot_write_output_data,
                              "out of memory"};
    return grow_append(userdata, data, size) == 0 ? ok : fail;
}

/* Copies `rgba` (4 samples a pixel, bytes at 8 bits, native uint16_t above) into the interleaved
 * plane of `img`: RGB or RGBA at 8 bits, little-endian RRGGBB or RRGGBBAA above. */
static void fill_interleaved(struct heif_image *img, const void *rgba, int width, int height, int bits,
                             int alpha) {
    int stride = 0, channels = alpha ? 4 : 3;
    uint8_t *dst = heif_image_get_plane(img, heif_channel_interleaved, &stride);
    for (int y = 0; y < height; y++) {
        uint8_t *row = dst + (size_t)y * stride;
        for (int x = 0; x < width; x++) {
            for (int c = 0; c < channels; c++) {
                size_t at = ((size_t)y * width + x) * 4 + c;
                if (bits == 8) {
                    row[channels * x + c] = ((const uint8_t *)rgba)[at];
                } else {
                    uint16_t v = ((const uint16_t *)rgba)[at];
                    row[2 * (channels * x + c)] = (uint8_t)v;
                    row[2 * (channels * x + c) + 1] = (uint8_t)(v >> 8);
                }
            }
        }
    }
}

int anchors_encode_heic_with(const void *rgba, int width, int height, const anchors_heic_options *opts,
                             uint8_t **out, size_t *out_size) {
    if (!heif_have_encoder_for_format(heif_compression_HEVC)) return -1;
    if (opts->bits < 8 || opts->bits > 16) return -1;
    struct heif_context *ctx = heif_context_alloc();
    struct heif_encoder *enc = NULL;
    struct heif_image *img = NULL;
    struct heif_encoding_options *eo = heif_encoding_options_alloc();
    struct heif_color_profile_nclx *nclx = NULL;
    grow_buffer buf = {0};
    int rc = -1;
    int bits = opts->bits, alpha = opts->alpha != 0;
    enum heif_chroma chroma = bits == 8 ? (alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB)
                              : alpha  ? heif_chroma_interleaved_RRGGBBAA_LE
                                       : heif_chroma_interleaved_RRGGBB_LE;
    if (!eo || heif_context_get_encoder_for_format(ctx, heif_compression_HEVC, &enc).code) goto done;
    heif_encoder_set_lossy_quality(enc, opts->quality);
    if (heif_image_create(width, height, heif_colorspace_RGB, chroma, &img).code ||
        heif_image_add_plane(img, heif_channel_interleaved, width, height, bits).code) {
        goto done;
    }
    fill_interleaved(img, rgba, width, height, bits, alpha);
    if (opts->nclx) {
        nclx = heif_nclx_color_profile_alloc();
        if (!nclx || heif_nclx_color_profile_set_color_primaries(nclx, (uint16_t)opts->primaries).code ||
            heif_nclx_color_profile_set_transfer_characteristics(nclx, (uint16_t)opts->transfer).code ||
            heif_nclx_color_profile_set_matrix_coefficients(nclx, (uint16_t)opts->matrix).code) {
            goto done;
        }
        nclx->full_range_flag = 1;
        if (heif_image_set_nclx_color_profile(img, nclx).code) goto done;
    }
    if (opts->icc_size > 0 &&
        heif_image_set_raw_color_profile(img, "prof", opts->icc, opts->icc_size).code) {
        goto done;
    }
    /* libheif 1.15 leaves the nclx box out unless told (macOS once could not read it). */
    eo->macOS_compatibility_workaround_no_nclx_profile = opts->nclx ? 0 : 1;
    eo->save_two_colr_boxes_when_ICC_and_nclx_available = 1;
    if (heif_context_encode_image(ctx, img, enc, eo, NULL).code) goto done;
    struct heif_writer writer = {1, write_to_buffer};
    if (heif_context_write(ctx, &writer, &buf).code) goto done;
    *out = buf.p;
    *out_size = buf.size;
    buf.p = NULL;
    rc = 0;
done:
    free(buf.p);
    if (nclx) heif_nclx_color_profile_free(nclx);
    if (eo) heif_encoding_options_free(eo);
    if (img) heif_image_release(img);
    if (enc) heif_encoder_release(enc);
    heif_context_free(ctx);
    return rc;
}

int anchors_encode_heic(const uint8_t *rgba, int width, int height, int quality, uint8_t **out,
                        size_t *out_size) {
    /* RGB without an alpha plane, as a camera's HEIC is: the colour of `rgba`, alpha dropped. */
    anchors_heic_options opts = {.quality = quality, .bits = 8};
    return anchors_encode_heic_with(rgba, width, height, &opts, out, out_size);
}

int anchors_decode_heic(const uint8_t *data, size_t size) {
    struct heif_context *ctx = heif_context_alloc();
    struct heif_image_handle *h = NULL;
    struct heif_image *img = NULL;
    int rc = -1;
    if (!heif_context_read_from_memory_without_copy(ctx, data, size, NULL).code &&
        !heif_context_get_primary_image_handle(ctx, &h).code &&
        !heif_decode_image(h, &img, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, NULL).code) {
        rc = 0;
    }
    if (img) heif_image_release(img);
    if (h) heif_image_handle_release(h);
    heif_context_free(ctx);
    return rc;
}

int anchors_decode_heic_samples(const uint8_t *data, size_t size, uint16_t *dst, size_t capacity,
                                int *width, int *height, int *bits) {
    struct heif_context *ctx = heif_context_alloc();
    struct heif_image_handle *h = NULL;
    struct heif_image *img = NULL;
    int rc = -1;
    if (heif_context_read_from_memory_without_copy(ctx, data, size, NULL).code ||
        heif_context_get_primary_image_handle(ctx, &h).code) {
        goto done;
    }
    int alpha = heif_image_handle_has_alpha_channel(h);
    if (heif_decode_image(h, &img, heif_colorspace_RGB,
                          alpha ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RRGGBB_LE,
                          NULL).code) {
        goto done;
    }
    int stride = 0, channels = alpha ? 4 : 3;
    const uint8_t *src = heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
    int w = heif_image_get_width(img, heif_channel_interleaved);
    int hh = heif_image_get_height(img, heif_channel_interleaved);
    int depth = heif_image_get_bits_per_pixel_range(img, heif_channel_interleaved);
    if (!src || w <= 0 || hh <= 0 || depth < 1 || depth > 16 || (size_t)w * hh * 4 > capacity) goto done;
    for (int y = 0; y < hh; y++) {
        const uint8_t *row = src + (size_t)y * stride;
        for (int x = 0; x < w; x++) {
            uint16_t *px = dst + ((size_t)y * w + x) * 4;
            for (int c = 0; c < channels; c++) {
                px[c] = (uint16_t)(row[2 * (channels * x + c)] | row[2 * (channels * x + c) + 1] << 8);
            }
            if (!alpha) px[3] = (uint16_t)((1u << depth) - 1);
        }
    }
    *width = w;
    *height = hh;
    *bits = depth;
    rc = 0;
done:
    if (img) heif_image_release(img);
    if (h) heif_image_handle_release(h);
    heif_context_free(ctx);
    return rc;
}

int anchors_encode_jxl(const uint8_t *rgba, int width, int height, float distance, int effort,
                       uint8_t **out, size_t *out_size) {
    JxlEncoder *enc = JxlEncoderCreate(NULL);
    if (!enc) return -1;
    int rc = -1;
    JxlBasicInfo info;
    JxlEncoderInitBasicInfo(&info);
    info.xsize = (uint32_t)width;
    info.ysize = (uint32_t)height;
    info.bits_per_sample = 8;
    info.num_color_channels = 3;
    info.uses_original_profile = JXL_FALSE;
    JxlColorEncoding srgb;
    JxlColorEncodingSetToSRGB(&srgb, JXL_FALSE);
    JxlPixelFormat fmt = {3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    size_t rgb_size = (size_t)width * height * 3;
    uint8_t *rgb = malloc(rgb_size);
    grow_buffer buf = {0};
    if (!rgb) goto done;
    for (size_t i = 0; i < (size_t)width * height; i++) memcpy(rgb + 3 * i, rgba + 4 * i, 3);
    if (JxlEncoderSetBasicInfo(enc, &info) != JXL_ENC_SUCCESS ||
        JxlEncoderSetColorEncoding(enc, &srgb) != JXL_ENC_SUCCESS) {
        goto done;
    }
    JxlEncoderFrameSettings *fs = JxlEncoderFrameSettingsCreate(enc, NULL);
    JxlEncoderSetFrameDistance(fs, distance);
    JxlEncoderFrameSettingsSetOption(fs, JXL_ENC_FRAME_SETTING_EFFORT, effort);
    if (JxlEncoderAddImageFrame(fs, &fmt, rgb, rgb_size) != JXL_ENC_SUCCESS) goto done;
    JxlEncoderCloseInput(enc);
    uint8_t chunk[1 << 16];
    for (;;) {
        uint8_t *next = chunk;
        size_t avail = sizeof chunk;
        JxlEncoderStatus s = JxlEncoderProcessOutput(enc, &next, &avail);
        if (grow_append(&buf, chunk, sizeof chunk - avail) != 0) goto done;
        if (s == JXL_ENC_SUCCESS) break;
        if (s != JXL_ENC_NEED_MORE_OUTPUT) goto done;
    }
    *out = buf.p;
    *out_size = buf.size;
    buf.p = NULL;
    rc = 0;
done:
    free(buf.p);
    free(rgb);
    JxlEncoderDestroy(enc);
    return rc;
}

int anchors_decode_jxl_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity) {
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec) return -1;
    JxlDecoderSubscribeEvents(dec, JXL_DEC_FULL_IMAGE);
    JxlDecoderSetInput(dec, data, size);
    JxlDecoderCloseInput(dec);
    JxlPixelFormat fmt = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    int rc = -1;
    for (;;) {
        JxlDecoderStatus s = JxlDecoderProcessInput(dec);
        if (s == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t need = 0;
            if (JxlDecoderImageOutBufferSize(dec, &fmt, &need) != JXL_DEC_SUCCESS || need > capacity ||
                JxlDecoderSetImageOutBuffer(dec, &fmt, dst, need) != JXL_DEC_SUCCESS) {
                break;
            }
        } else if (s == JXL_DEC_FULL_IMAGE) {
            rc = 0;
            break;
        } else {
            break;
        }
    }
    JxlDecoderDestroy(dec);
    return rc;
}
