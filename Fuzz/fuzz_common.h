/*
 * fuzz_common.h — shared set-up of the libFuzzer harnesses: small limits so a
 * hostile header is refused quickly, a helper that derives decode options
 * from the first bytes of the input, and the heap fills (fuzz_heap_fill.h).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "CImageCore.h"
#include "fuzz_heap_fill.h"

/* Limits small enough for fast iterations (a fuzzer wants thousands of runs a
 * second), large enough for the bugs of real files. */
static inline void fuzz_limits(ic_decode_options *o) {
    ic_decode_options_init(o);
    o->limits.max_pixels = 1u << 16;
    o->limits.max_frames = 32;
    o->limits.max_memory_bytes = 16u << 20;
}

/* Reads every row of every frame (ASan catches a short buffer) and traps when
 * a colour exceeds its alpha, which premultiplied output never does. Kept out
 * of coverage tracing (Fuzz/coverage_ignore.txt): the loop is the same for
 * every input. */
static __attribute__((noinline)) void fuzz_check_pixels(const ic_image *img) {
    volatile uint8_t sink = 0;
    for (uint32_t f = 0; f < img->frame_count; f++) {
        const uint8_t *frame = ic_image_frame(img, f);
        for (uint32_t y = 0; y < img->height; y++) {
            const uint8_t *row = frame + (size_t)y * img->stride;
            sink ^= row[0] ^ row[(size_t)img->width * 4 - 1];
            for (uint32_t x = 0; x < img->width; x++) {
                const uint8_t *p = row + 4 * (size_t)x;
                if (p[0] > p[3] || p[1] > p[3] || p[2] > p[3]) __builtin_trap();
            }
        }
    }
    (void)sink;
}

/* Options for one of the ways a caller might decode, chosen by `knobs`: first
 * frame, all frames, or a thumbnail whose box and mode come from `knobs`. */
static inline void fuzz_choose_options(ic_decode_options *out, uint32_t knobs) {
    ic_decode_options o;
    fuzz_limits(&o);
    int way = (int)((knobs >> 22) % 3);
    o.all_frames = way == 1;
    if (way == 2) {
        /* Boxes up to 256 x 255: an output no larger than the input limit (1 << 16
         * pixels). Larger upscales only repeat the same resampling loops and
         * halved the executions per second. */
        o.thumbnail_width = 1 + (knobs & 0xFF);
        o.thumbnail_height = (knobs >> 9) & 0xFF;
        static const ic_resize_mode modes[4] = {IC_RESIZE_FIT, IC_RESIZE_FILL, IC_RESIZE_STRETCH, IC_RESIZE_FILL};
        o.thumbnail_mode = modes[(knobs >> 17) & 3];
        o.allow_upscale = (knobs >> 19) & 1;
        o.keep_orientation = (knobs >> 20) & 1;
        o.scale_down_limit_bytes = (knobs >> 21) & 1 ? 4096 : 0;
    }
    *out = o;
}

/* Traps unless two decodes of one input ended alike: the same status and sentence, or the
 * same size, opacity, frame count and pixels of every frame. */
static inline void fuzz_same_or_trap(ic_status a, const ic_error *ea, const ic_image *x, ic_status b,
                                     const ic_error *eb, const ic_image *y) {
    if (a != b) __builtin_trap();
    if (a != IC_OK) {
        if (strcmp(ea->message, eb->message) != 0) __builtin_trap();
        return;
    }
    if (x->width != y->width || x->height != y->height || x->is_opaque != y->is_opaque ||
        x->frame_count != y->frame_count) {
        __builtin_trap();
    }
    for (uint32_t f = 0; f < x->frame_count; f++) {
        for (uint32_t r = 0; r < x->height; r++) {
            if (memcmp(ic_image_frame(x, f) + (size_t)r * x->stride, ic_image_frame(y, f) + (size_t)r * y->stride,
                       (size_t)x->width * 4) != 0) {
                __builtin_trap();
            }
        }
    }
}

/* Decodes `data` the way fuzz_choose_options picks from `knobs`, with fresh heap blocks
 * filled with FUZZ_FILL_A. Checks the output: every row readable, colour <= alpha, limits
 * kept. With bit 8 of `knobs` (the only one the options leave), decodes again with
 * use_helper_thread (the fuzz build starts helpers for images of 1024 pixels and more) and
 * fresh blocks filled with FUZZ_FILL_B, and traps unless both decodes end alike: the same
 * error, or the same pixels, as ic_decode_options promises and as no output byte may
 * depend on memory the decoder never wrote. */
static inline void fuzz_decode_chosen_way(const uint8_t *data, size_t size, uint32_t knobs) {
    ic_decode_options o;
    fuzz_choose_options(&o, knobs);
    ic_image *img = NULL;
    ic_error err;
    ic_decode_stats stats;
    fuzz_heap_fill(FUZZ_FILL_A);
    ic_status st = ic_decode(data, size, &o, &img, &stats, &err);
    if (st == IC_OK) {
        fuzz_check_pixels(img);
        if (stats.peak_bytes > o.limits.max_memory_bytes) __builtin_trap();
    } else if (img != NULL || err.message[0] == '\0') {
        __builtin_trap(); /* a failure must say why and return nothing */
    }
    if ((knobs >> 8) & 1) {
        o.use_helper_thread = 1;
        ic_image *helped = NULL;
        ic_error helped_err;
        fuzz_heap_fill(FUZZ_FILL_B);
        ic_status helped_st = ic_decode(data, size, &o, &helped, NULL, &helped_err);
        fuzz_heap_fill(FUZZ_FILL_A);
        fuzz_same_or_trap(st, &err, img, helped_st, &helped_err, helped);
        ic_image_free(helped);
    }
    ic_image_free(img);
}

#endif /* FUZZ_COMMON_H */
