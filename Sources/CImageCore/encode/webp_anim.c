/*
 * webp_anim.c — animated WebP through libwebpmux's WebPAnimEncoder: every frame at the
 * options' quality (or lossless), each shown for its delay in milliseconds, with the
 * image's loop count (0 = forever). A frame's duration is 24 bits in the file (ANMF), and
 * WebPAnimEncoder takes no longer step between timestamps: a longer delay (an APNG frame may
 * last 65535 s) is written as the longest, 16777215 ms, as the GIF encoder writes its longest.
 */
#include <limits.h>
#include <stdlib.h>

#include <webp/encode.h>
#include <webp/mux.h>

#include "../common/ic_common_internal.h"
#include "ic_encode_internal.h"

#define WEBP_MAX_FRAME_MS 0xffffffu

/* How long frame `i` is shown, as the file can hold it. */
static uint32_t frame_ms(const ic_image *img, uint32_t i) {
    uint32_t d = img->frame_delays_ms ? img->frame_delays_ms[i] : 0;
    return d > WEBP_MAX_FRAME_MS ? WEBP_MAX_FRAME_MS : d;
}

ic_status ic__encode_webp_animation(const ic_image *img, const ic_encode_options *o, WebPData *out,
                                   ic_error *err) {
    if (img->loop_count > 65535) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "WebP: loop count %u is more than an animation holds (65535)", img->loop_count);
    }
    uint64_t total_ms = 0;
    for (uint32_t i = 0; i < img->frame_count; i++) total_ms += frame_ms(img, i);
    if (total_ms > INT_MAX) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "WebP: the animation lasts %llu ms, more than WebPAnimEncoder counts (%d ms)",
                            (unsigned long long)total_ms, INT_MAX);
    }
    WebPAnimEncoderOptions anim;
    WebPConfig config;
    WebPPicture pic;
    if (!WebPAnimEncoderOptionsInit(&anim) || !WebPConfigInit(&config) || !WebPPictureInit(&pic)) {
        return ic__set_error(err, IC_ERR_INTERNAL, "WebP: libwebp version mismatch");
    }
    anim.anim_params.loop_count = (int)img->loop_count;
    config.lossless = o->lossless ? 1 : 0;
    if (!o->lossless) config.quality = (float)o->quality;
    pic.use_argb = 1;
    pic.width = (int)img->width;
    pic.height = (int)img->height;
    uint8_t *straight = malloc(img->frame_size);
    WebPAnimEncoder *enc = WebPAnimEncoderNew((int)img->width, (int)img->height, &anim);
    WebPData assembled = {NULL, 0};
    ic_status st = IC_OK;
    if (!straight || !enc) {
        st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "WebP: out of memory for a %ux%u animation",
                          img->width, img->height);
        goto done;
    }
    int timestamp = 0;
    for (uint32_t i = 0; i < img->frame_count; i++) {
        const uint8_t *frame = ic_image_frame(img, i);
        for (uint32_t y = 0; y < img->height; y++) {
            ic_unpremultiply_row(straight + (size_t)y * img->stride, frame + (size_t)y * img->stride, img->width);
        }
        if (!WebPPictureImportRGBA(&pic, straight, (int)img->stride)) {
            st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "WebP: out of memory importing frame %u", i);
            goto done;
        }
        int ok = WebPAnimEncoderAdd(enc, &pic, timestamp, &config);
        WebPPictureFree(&pic);
        if (!ok) {
            st = ic__set_error(err, IC_ERR_ENCODE, "WebP: frame %u: %s", i, WebPAnimEncoderGetError(enc));
            goto done;
        }
        timestamp += (int)frame_ms(img, i);
    }
    if (!WebPAnimEncoderAdd(enc, NULL, timestamp, NULL) || !WebPAnimEncoderAssemble(enc, &assembled)) {
        st = ic__set_error(err, IC_ERR_ENCODE, "WebP: cannot assemble the animation: %s",
                          WebPAnimEncoderGetError(enc));
        goto done;
    }
    *out = assembled;
    assembled = (WebPData){NULL, 0};
done:
    WebPDataClear(&assembled);
    WebPAnimEncoderDelete(enc);
    free(straight);
    return st;
}
