/*
 * fuzz_encode.c — decode any image with every frame, re-encode it to GIF and to an
 * animated WebP, and decode both again: the encoders must take whatever the decoders
 * give, and their files must decode to the same size, frames and timing.
 */
#include "fuzz_common.h"

/* Decodes an encoder's output with every frame; it must decode, to the source's size. */
static ic_image *decode_back(const ic_image *src, const uint8_t *data, size_t size) {
    ic_decode_options o;
    fuzz_limits(&o);
    o.all_frames = 1;
    ic_image *back = NULL;
    ic_error err;
    if (ic_decode(data, size, &o, &back, NULL, &err) != IC_OK) __builtin_trap();
    fuzz_check_pixels(back);
    if (back->width != src->width || back->height != src->height) __builtin_trap();
    return back;
}

/* GIF keeps frame count, size, loop count and delays rounded to centiseconds. */
static void check_gif(const ic_image *src, const uint8_t *data, size_t size) {
    ic_image *back = decode_back(src, data, size);
    if (back->frame_count != src->frame_count) __builtin_trap();
    if (src->frame_count > 1) {
        if (back->loop_count != src->loop_count) __builtin_trap();
        for (uint32_t i = 0; i < src->frame_count; i++) {
            uint32_t d = src->frame_delays_ms[i];
            uint32_t cs = d > 655349 ? 65535 : (d + 5) / 10;
            if (back->frame_delays_ms[i] != cs * 10) __builtin_trap();
        }
    }
    ic_image_free(back);
}

/* WebP keeps size and loop count; libwebp merges a frame equal to the one before it (so
 * an animation of equal frames becomes a still image, with no loop count). */
static void check_webp(const ic_image *src, const uint8_t *data, size_t size) {
    ic_image *back = decode_back(src, data, size);
    if (back->frame_count > src->frame_count) __builtin_trap();
    if (back->frame_count > 1 && back->loop_count != src->loop_count) __builtin_trap();
    ic_image_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The last byte chooses the encoders' settings; the file is whole. */
    uint8_t knobs = size ? data[size - 1] : 0;
    ic_decode_options o;
    fuzz_limits(&o);
    o.all_frames = 1;
    o.limits.max_pixels = 1u << 14; /* a frame: WebP encoding is the slow part */
    o.limits.max_frames = 8;
    ic_image *img = NULL;
    ic_error err;
    if (ic_decode(data, size, &o, &img, NULL, &err) != IC_OK) return 0;
    uint8_t *out = NULL;
    size_t out_size = 0;
    ic_encode_options e;
    ic_encode_options_init(&e, IC_FORMAT_GIF);
    e.all_frames = 1;
    e.speed = 10;
    e.quality = knobs & 1 ? 100 : 40;
    e.dither_level = knobs & 2 ? 1.0f : 0.0f;
    e.frame_differencing = (knobs >> 2) & 1;
    ic_status st = ic_encode(img, &e, &out, &out_size, &err);
    if (st == IC_OK) {
        check_gif(img, out, out_size);
        ic_encode_free(out);
    } else if (st != IC_ERR_INVALID_ARGUMENT || err.message[0] == '\0') {
        __builtin_trap(); /* only a loop count GIF cannot hold is refused */
    }
    ic_encode_options_init(&e, IC_FORMAT_WEBP);
    e.all_frames = 1;
    e.lossless = (knobs >> 3) & 1;
    e.quality = 30;
    st = ic_encode(img, &e, &out, &out_size, &err);
    /* WebP refuses a side over 16383 (IC_ERR_ENCODE, as the still encoder does); a 16384x1
     * image is within these limits. */
    bool too_large = img->width > 16383 || img->height > 16383;
    if (st == IC_OK) {
        check_webp(img, out, out_size);
        ic_encode_free(out);
    } else if ((st != IC_ERR_INVALID_ARGUMENT && !(st == IC_ERR_ENCODE && too_large)) || err.message[0] == '\0') {
        __builtin_trap();
    }
    ic_image_free(img);
    return 0;
}
