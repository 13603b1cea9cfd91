/*
 * fuzz_incremental.c — the incremental decode (JPEG, PNG, WebP and GIF engines) against
 * ic_decode. The first 4 bytes choose the options and the piece sizes; the
 * rest is the body, fed in those pieces (with a partial image taken now and
 * then), with fresh heap blocks filled otherwise than for ic_decode
 * (fuzz_heap_fill.h). The result must be ic_decode's on the same body: the same status,
 * and when both succeed the same size, opacity, frame count, delays and loop
 * count, and for PNG, WebP and GIF the same pixels. A difference
 * traps. JPEG pixels are compared by the tests on valid files
 * only: on entropy-coded data with bad Huffman codes (a warning libjpeg
 * decodes through) libjpeg-turbo's fast and slow Huffman decoders produce
 * different blocks, and which one runs depends on how many bytes libjpeg has
 * buffered — the whole body, or what has arrived.
 */
#include <stdbool.h>

#include "fuzz_common.h"
#include "ic_incremental.h"

static void same_or_trap(ic_status whole_st, ic_image *whole, ic_status inc_st, ic_image *inc,
                         ic_format format) {
    if (whole_st != inc_st) __builtin_trap();
    if (whole_st != IC_OK) return;
    if (whole->width != inc->width || whole->height != inc->height || whole->is_opaque != inc->is_opaque ||
        whole->frame_count != inc->frame_count || whole->loop_count != inc->loop_count ||
        (whole->frame_delays_ms == NULL) != (inc->frame_delays_ms == NULL)) {
        __builtin_trap();
    }
    if (whole->frame_delays_ms &&
        memcmp(whole->frame_delays_ms, inc->frame_delays_ms, sizeof(uint32_t) * whole->frame_count) != 0) {
        __builtin_trap();
    }
    if (format == IC_FORMAT_JPEG) return;
    for (uint32_t y = 0; y < whole->height; y++) {
        if (memcmp(ic_image_frame(whole, 0) + (size_t)y * whole->stride,
                   ic_image_frame(inc, 0) + (size_t)y * inc->stride, (size_t)whole->width * 4) != 0) {
            __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5) return 0;
    uint8_t knobs = data[0];
    const uint8_t *sizes = data + 1; /* three bytes: the piece sizes, in turn */
    data += 4;
    size -= 4;
    ic_format format = ic_sniff(data, size);
    if (format != IC_FORMAT_JPEG && format != IC_FORMAT_PNG && format != IC_FORMAT_WEBP &&
        format != IC_FORMAT_GIF) {
        return 0;
    }

    ic_decode_options o;
    fuzz_limits(&o);
    if (knobs & 1) {
        o.thumbnail_width = 1 + (knobs >> 2);
        o.thumbnail_height = 1 + (knobs >> 2);
    }
    o.keep_orientation = (knobs >> 1) & 1;

    ic_image *whole = NULL;
    ic_error err;
    fuzz_heap_fill(FUZZ_FILL_A);
    ic_status whole_st = ic_decode(data, size, &o, &whole, NULL, &err);
    fuzz_heap_fill(FUZZ_FILL_B);

    ic_incremental *inc = NULL;
    if (ic_incremental_new(&o, &inc, &err) != IC_OK) __builtin_trap();
    ic_status st = IC_OK;
    size_t at = 0;
    for (unsigned turn = 0; at < size && st == IC_OK; turn++) {
        size_t piece = 1 + (size_t)sizes[turn % 3] * (sizes[turn % 3] & 1 ? 1 : 17);
        if (piece > size - at) piece = size - at;
        st = ic_incremental_feed(inc, data + at, piece, &err);
        at += piece;
        if (st == IC_OK && turn % 5 == 4) {
            ic_image *partial = NULL;
            if (ic_incremental_partial(inc, &partial, &err) != IC_OK) __builtin_trap();
            if (partial) {
                fuzz_check_pixels(partial);
                ic_image_free(partial);
            }
        }
    }
    ic_image *out = NULL;
    if (st == IC_OK) st = ic_incremental_finish(inc, &out, NULL, &err);
    if (st != IC_OK && (out != NULL || err.message[0] == '\0')) __builtin_trap();
    ic_incremental_free(inc);
    fuzz_heap_fill(FUZZ_FILL_A);
    same_or_trap(whole_st, whole, st, out, format);
    ic_image_free(whole);
    ic_image_free(out);
    return 0;
}
