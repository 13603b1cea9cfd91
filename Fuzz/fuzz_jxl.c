/* fuzz_jxl.c — JPEG XL decoding through libjxl: first frame, all frames, thumbnails. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The last 3 bytes (when there are enough) choose the thumbnail; the file is whole. */
    uint32_t knobs = size >= 3 ? (uint32_t)data[size - 1] | (uint32_t)data[size - 2] << 8 |
                                     (uint32_t)data[size - 3] << 16
                               : 0;
    if (ic_sniff(data, size) != IC_FORMAT_JXL) return 0;
    fuzz_decode_chosen_way(data, size, knobs);
    return 0;
}
