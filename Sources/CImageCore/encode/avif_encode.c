/*
 * avif_encode.c — AVIF stills through libavif 0.11's encoder (libaom, the first
 * encoding codec Debian's libavif offers; rav1e and SVT-AV1 are the others).
 *
 * libavif 0.11 has no quality setting, only AV1 quantizers (0 best ... 63 worst):
 * quality q (0...100) becomes quantizer round((100 - q) * 63 / 100) for colour and
 * alpha alike, as both min and max quantizer (libavif 1.0 maps its quality the same
 * way). Speed 0...10 is libavif's (0 slowest, 10 fastest). One encoder thread.
 *
 * Pixels are un-premultiplied exactly first (as the other encoders do), converted to
 * full-range YUV 4:2:0 (or 4:4:4 with ic_encode_options.yuv444) with BT.601
 * coefficients and tagged sRGB in the nclx box (primaries 1, transfer 13, matrix 6);
 * an opaque image gets no alpha plane. An ICC profile to embed goes in the colr box
 * (libavif then writes no nclx box).
 *
 * libavif is opened by the first encode (codecs/ic_avif_lib.h); when it cannot be, the encode
 * fails with IC_ERR_UNSUPPORTED_FORMAT and the loader's reason.
 */
#include <stdlib.h>
#include <string.h>

#include "../codecs/ic_avif_lib.h"
#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_encode_internal.h"

static ic_status avif_encode_fail(ic_error *err, const char *stage, avifResult r,
                                  const avifDiagnostics *diag) {
    const char *why = diag && diag->error[0] ? diag->error : "";
    ic_status st = r == AVIF_RESULT_OUT_OF_MEMORY ? IC_ERR_OUT_OF_MEMORY : IC_ERR_ENCODE;
    return ic__set_error(err, st, "AVIF: %s: %s%s%s", stage, avifResultToString(r),
                        why[0] ? " — " : "", why);
}

ic_status ic__encode_avif(const ic_image *img, const uint8_t *frame, const ic_encode_options *o,
                         uint8_t **out, size_t *out_size, ic_error *err) {
    if (o->quality < 0 || o->quality > 100) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "AVIF: quality %d is not 0...100", o->quality);
    }
    if (o->speed < AVIF_SPEED_SLOWEST || o->speed > AVIF_SPEED_FASTEST) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "AVIF: speed %d is not 0...10", o->speed);
    }
    ic_status loaded = ic__avif_load("AVIF", err);
    if (loaded != IC_OK) return loaded;
    avifImage *image = avifImageCreate(img->width, img->height, 8,
                                       o->yuv444 ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420);
    if (!image) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "AVIF: out of memory");
    image->yuvRange = AVIF_RANGE_FULL;
    image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    if (o->icc_profile) avifImageSetProfileICC(image, o->icc_profile, o->icc_profile_size);

    uint8_t *straight = NULL;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    rgb.rowBytes = (uint32_t)img->stride;
    rgb.pixels = (uint8_t *)frame; /* only read */
    if (img->is_opaque) {
        rgb.ignoreAlpha = AVIF_TRUE;
    } else {
        straight = malloc(img->frame_size);
        if (!straight) {
            avifImageDestroy(image);
            return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "AVIF: out of memory");
        }
        for (uint32_t y = 0; y < img->height; y++) {
            ic_unpremultiply_row(straight + (size_t)y * img->stride, frame + (size_t)y * img->stride,
                                 img->width);
        }
        rgb.pixels = straight;
    }
    avifResult r = avifImageRGBToYUV(image, &rgb);
    free(straight);
    if (r != AVIF_RESULT_OK) {
        avifImageDestroy(image);
        return avif_encode_fail(err, "cannot convert RGB to YUV", r, NULL);
    }

    avifEncoder *enc = avifEncoderCreate();
    if (!enc) {
        avifImageDestroy(image);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "AVIF: cannot create the encoder");
    }
    int quantizer = ((100 - o->quality) * AVIF_QUANTIZER_WORST_QUALITY + 50) / 100;
    enc->maxThreads = 1;
    enc->speed = o->speed;
    enc->minQuantizer = enc->maxQuantizer = quantizer;
    enc->minQuantizerAlpha = enc->maxQuantizerAlpha = quantizer;
    avifRWData output = AVIF_DATA_EMPTY;
    r = avifEncoderWrite(enc, image, &output);
    ic_status st = IC_OK;
    if (r != AVIF_RESULT_OK) {
        st = avif_encode_fail(err, "the encoder failed", r, &enc->diag);
    } else if (!(*out = malloc(output.size))) {
        st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "AVIF: out of memory");
    } else {
        memcpy(*out, output.data, output.size);
        *out_size = output.size;
    }
    avifRWDataFree(&output);
    avifEncoderDestroy(enc);
    avifImageDestroy(image);
    return st;
}
