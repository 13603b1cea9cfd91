/*
 * webp_encode.c — WebP through libwebp: a still frame (WebPEncodeRGBA or its lossless
 * twin), or every frame as an animation (webp_anim.c), and the ICC profile added as an
 * ICCP chunk by libwebpmux when asked.
 */
#include <stdlib.h>
#include <string.h>

#include <webp/encode.h>
#include <webp/mux.h>

#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_encode_internal.h"

/* A malloc'd copy of the WebP file `webp` (still or animated) with o's ICC profile in an
 * ICCP chunk; libwebpmux makes the file extended, VP8X announcing the profile. */
static ic_status add_iccp(const uint8_t *webp, size_t size, const ic_encode_options *o,
                          uint8_t **out, size_t *out_size, ic_error *err) {
    WebPData image = {webp, size};
    WebPData icc = {o->icc_profile, o->icc_profile_size};
    WebPData assembled = {NULL, 0};
    WebPMux *mux = WebPMuxCreate(&image, 0);
    WebPMuxError e = mux ? WebPMuxSetChunk(mux, "ICCP", &icc, 0) : WEBP_MUX_MEMORY_ERROR;
    if (e == WEBP_MUX_OK) e = WebPMuxAssemble(mux, &assembled);
    WebPMuxDelete(mux);
    if (e != WEBP_MUX_OK) {
        WebPDataClear(&assembled);
        return ic__set_error(err, e == WEBP_MUX_MEMORY_ERROR ? IC_ERR_OUT_OF_MEMORY : IC_ERR_ENCODE,
                            "WebP: cannot add the ICC profile (libwebpmux error %d)", (int)e);
    }
    *out = malloc(assembled.size);
    if (!*out) {
        WebPDataClear(&assembled);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "WebP: out of memory");
    }
    memcpy(*out, assembled.bytes, assembled.size);
    *out_size = assembled.size;
    WebPDataClear(&assembled);
    return IC_OK;
}

/* The caller's copy of libwebp's output `webp`: with o's ICC profile when it has one. */
static ic_status deliver(const uint8_t *webp, size_t size, const ic_encode_options *o, uint8_t **out,
                         size_t *out_size, ic_error *err) {
    if (o->icc_profile) return add_iccp(webp, size, o, out, out_size, err);
    *out = malloc(size);
    if (!*out) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "WebP: out of memory");
    memcpy(*out, webp, size);
    *out_size = size;
    return IC_OK;
}

/* IC_OK when WebP holds an image of img's size, else IC_ERR_ENCODE (as GIF's encoder refuses a
 * side over 65535): the still and the animation encoders both refuse a side over 16383. */
static ic_status webp_fits(const ic_image *img, ic_error *err) {
    if (img->width <= WEBP_MAX_DIMENSION && img->height <= WEBP_MAX_DIMENSION) return IC_OK;
    return ic__set_error(err, IC_ERR_ENCODE, "WebP: %ux%u is larger than WebP's %dx%d", img->width,
                        img->height, WEBP_MAX_DIMENSION, WEBP_MAX_DIMENSION);
}

static ic_status encode_animation(const ic_image *img, const ic_encode_options *o, uint8_t **out,
                                  size_t *out_size, ic_error *err) {
    ic_status st = webp_fits(img, err);
    if (st != IC_OK) return st;
    if (!o->lossless && (o->quality < 0 || o->quality > 100)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "WebP: quality %d is not 0...100", o->quality);
    }
    WebPData assembled = {NULL, 0};
    st = ic__encode_webp_animation(img, o, &assembled, err);
    if (st == IC_OK) st = deliver(assembled.bytes, assembled.size, o, out, out_size, err);
    WebPDataClear(&assembled);
    return st;
}

static ic_status encode_still(const ic_image *img, const uint8_t *frame, const ic_encode_options *o,
                              uint8_t **out, size_t *out_size, ic_error *err) {
    if (!o->lossless && (o->quality < 0 || o->quality > 100)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "WebP: quality %d is not 0...100", o->quality);
    }
    ic_status st = webp_fits(img, err);
    if (st != IC_OK) return st;
    const uint8_t *src = frame;
    size_t stride = img->stride;
    uint8_t *straight = NULL;
    if (!img->is_opaque) {
        straight = malloc(img->frame_size);
        if (!straight) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "WebP: out of memory");
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
    if (size == 0) return ic__set_error(err, IC_ERR_ENCODE, "WebP: the encoder failed");
    st = deliver(buf, size, o, out, out_size, err);
    WebPFree(buf);
    return st;
}

ic_status ic__encode_webp(const ic_image *image, const ic_encode_options *options, uint8_t **out,
                         size_t *out_size, ic_error *err) {
    if (options->all_frames && image->frame_count > 1) {
        return encode_animation(image, options, out, out_size, err);
    }
    return encode_still(image, ic_image_frame(image, options->frame), options, out, out_size, err);
}
