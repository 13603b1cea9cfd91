/* fuzz_resize.c — resizing and cropping with arbitrary sizes, modes and pixels; a resize
 * split into bands of output rows (any number) must give the whole-frame pixels. */
#include <string.h>

#include "fuzz_common.h"
#include "ic_resize_testing.h"

static uint32_t take(const uint8_t **p, size_t *n, uint32_t mask) {
    uint32_t v = 0;
    for (int i = 0; i < 2 && *n; i++, (*p)++, (*n)--) v = v << 8 | **p;
    return v & mask;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint32_t w = 1 + take(&data, &size, 0x7F), h = 1 + take(&data, &size, 0x7F);
    uint32_t frames = 1 + take(&data, &size, 0x1);
    uint32_t tw = take(&data, &size, 0xFF), th = take(&data, &size, 0xFF);
    uint32_t mode = take(&data, &size, 0xFF) % 3, upscale = take(&data, &size, 1);
    /* An unconstrained side while enlarging grows without bound (1x128 to width 255
     * is 255x32640): valid, but too slow for a fuzzer's thousands of runs. */
    if (upscale && (tw == 0 || th == 0)) upscale = 0;
    uint32_t cx = take(&data, &size, 0xFF), cy = take(&data, &size, 0xFF);
    uint32_t cw = take(&data, &size, 0xFF), ch = take(&data, &size, 0xFF);
    uint32_t bands = 1 + take(&data, &size, 0xFF);
    ic_image *src;
    ic_error err;
    if (ic_image_create(w, h, frames, &src, &err) != IC_OK) return 0;
    /* Fill with the remaining bytes, made valid premultiplied pixels. */
    for (uint32_t f = 0; f < frames; f++) {
        for (uint32_t y = 0; y < h; y++) {
            uint8_t *row = ic_image_frame(src, f) + (size_t)y * src->stride;
            for (uint32_t x = 0; x < w * 4; x += 4) {
                uint8_t a = size ? data[(x + y) % size] : 255;
                for (int c = 0; c < 3; c++) {
                    uint8_t v = size ? data[(x + c + y * 7) % size] : 0;
                    row[x + c] = v > a ? a : v;
                }
                row[x + 3] = a;
            }
        }
    }
    src->is_opaque = 0;
    ic_image *out = NULL;
    if (ic_resize(src, tw, th, (ic_resize_mode)mode, (int)upscale, &out, &err) == IC_OK) {
        if (out->frame_count != frames || out->width == 0 || out->height == 0) __builtin_trap();
        if (tw && th && mode != IC_RESIZE_FIT && upscale && (out->width != tw || out->height != th)) __builtin_trap();
        ic_image *split = NULL;
        if (ic_resize_in_bands(src, tw, th, (ic_resize_mode)mode, (int)upscale, bands, &split, &err) != IC_OK) {
            __builtin_trap();
        }
        if (split->width != out->width || split->height != out->height) __builtin_trap();
        for (uint32_t f = 0; f < frames; f++) {
            for (uint32_t y = 0; y < out->height; y++) {
                if (memcmp(ic_image_frame(out, f) + (size_t)y * out->stride,
                           ic_image_frame(split, f) + (size_t)y * split->stride, 4 * (size_t)out->width)) {
                    __builtin_trap();
                }
            }
        }
        ic_image_free(split);
        ic_image_free(out);
    }
    if (ic_crop(src, cx, cy, cw, ch, &out, &err) == IC_OK) {
        if (out->width != cw || out->height != ch) __builtin_trap();
        ic_image_free(out);
    }
    ic_image_free(src);
    return 0;
}
