/* fuzz_jpeg.c — JPEG decoding: first frame, all frames, thumbnails; and for a progressive
 * file, ImageKit's DC-only decoder against libjpeg's path at 1/8 (ic_decode_jpeg_path),
 * each under another heap fill: the same status and sentence, and the same pixels. */
#include "fuzz_common.h"
#include "ic_jpeg_testing.h"

/* At the exact 1/8 size (the codec's rows, in direct mode) and as a thumbnail from `knobs`. */
static void dc_differential(const uint8_t *data, size_t size, uint32_t knobs) {
    ic_info info;
    ic_error err;
    if (ic_probe(data, size, &info, &err) != IC_OK || !info.is_progressive) return;
    for (int way = 0; way < 2; way++) {
        ic_decode_options o;
        fuzz_limits(&o);
        if (way == 0) {
            o.thumbnail_width = (info.width + 7) / 8;
            o.thumbnail_height = (info.height + 7) / 8;
            o.thumbnail_mode = IC_RESIZE_STRETCH;
        } else {
            o.thumbnail_width = 1 + (knobs & 0x3F);
            o.thumbnail_height = (knobs >> 6) & 0x3F;
            o.thumbnail_mode = (knobs >> 12) & 1 ? IC_RESIZE_FILL : IC_RESIZE_FIT;
        }
        ic_image *x = NULL, *y = NULL;
        ic_error ex, ey;
        fuzz_heap_fill(FUZZ_FILL_A);
        ic_status sx = ic_decode_jpeg_path(data, size, &o, IC_JPEG_PATH_LIBJPEG, &x, NULL, &ex);
        fuzz_heap_fill(FUZZ_FILL_B);
        ic_status sy = ic_decode_jpeg_path(data, size, &o, IC_JPEG_PATH_AUTO, &y, NULL, &ey);
        fuzz_heap_fill(FUZZ_FILL_A);
        fuzz_same_or_trap(sx, &ex, x, sy, &ey, y);
        ic_image_free(x);
        ic_image_free(y);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The last 3 bytes (when there are enough) choose the thumbnail; the file is whole. */
    uint32_t knobs = size >= 3 ? (uint32_t)data[size - 1] | (uint32_t)data[size - 2] << 8 |
                                     (uint32_t)data[size - 3] << 16
                               : 0;
    if (ic_sniff(data, size) != IC_FORMAT_JPEG) return 0;
    fuzz_decode_chosen_way(data, size, knobs);
    dc_differential(data, size, knobs);
    return 0;
}
