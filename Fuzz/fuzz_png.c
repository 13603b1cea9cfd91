/* fuzz_png.c — PNG decoding: first frame, all frames, thumbnails; and the fast path
 * (libdeflate) against libpng: whenever the fast path decodes a file, libpng must give
 * the same bytes, and the automatic choice must end as libpng does (libpng under one heap
 * fill, the other two under another). */
#include <stdlib.h>

#include <zlib.h>

#include "../Sources/CImageCore/common/ic_bytes.h"
#include "fuzz_common.h"
#include "ic_png_testing.h"

/* Rewrites every complete chunk's CRC, so mutations reach the pixel decoders (libpng
 * refuses a critical chunk with a bad CRC, the fast path then declines too, and apng.c
 * refuses a frame chunk with one). */
static void fix_crcs(uint8_t *p, size_t n) {
    size_t pos = 8;
    while (pos + 12 <= n) {
        uint32_t len = ic__be32(p + pos);
        if (len > n - pos - 12) break;
        ic__put_be32(p + pos + 8 + len, (uint32_t)crc32(0, p + pos + 4, 4 + len));
        pos += 12 + (size_t)len;
    }
}

static bool same_pixels(const ic_image *a, const ic_image *b) {
    if (a->width != b->width || a->height != b->height || a->is_opaque != b->is_opaque) return false;
    for (uint32_t y = 0; y < a->height; y++) {
        if (memcmp(ic_image_frame(a, 0) + (size_t)y * a->stride,
                   ic_image_frame(b, 0) + (size_t)y * b->stride, (size_t)a->width * 4) != 0) {
            return false;
        }
    }
    return true;
}

/*
 * libpng refused the file on the Huffman codes of its zlib stream. libdeflate, by design,
 * does not refuse every such stream (its own tests say it may map invalid streams to valid
 * ones and accepts some incomplete Huffman codes), so the fast path may decode what zlib
 * refuses (found by this harness in CI: a fixed-code block that zlib stops at an invalid
 * literal/length code). The Adler-32 of what it decoded must still match, and the
 * automatic choice must give the fast path's image: the only difference allowed.
 */
static bool libdeflate_may_accept(ic_status s, const ic_error *e) {
    static const char *const codes[] = {"invalid literal/length code", "invalid distance code",
                                        "invalid code lengths set", "invalid literal/lengths set",
                                        "invalid distances set"};
    if (s != IC_ERR_CORRUPT) return false;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (strstr(e->message, codes[i])) return true;
    }
    return false;
}

/* Decodes through libpng, the fast path and the automatic choice; traps on a difference. */
static void differential(const uint8_t *data, size_t size, uint32_t knobs) {
    ic_decode_options o;
    fuzz_choose_options(&o, knobs);
    o.all_frames = 0; /* APNG animations do not go through the fast path */
    ic_image *ref = NULL, *fast = NULL, *automatic = NULL;
    ic_error e1, e2, e3;
    /* The reference under one heap fill, the paths it is compared with under the other. */
    fuzz_heap_fill(FUZZ_FILL_A);
    ic_status s1 = ic_decode_png_path(data, size, &o, IC_PNG_PATH_LIBPNG, &ref, NULL, &e1);
    fuzz_heap_fill(FUZZ_FILL_B);
    ic_status s2 = ic_decode_png_path(data, size, &o, IC_PNG_PATH_FAST, &fast, NULL, &e2);
    ic_status s3 = ic_decode_png_path(data, size, &o, IC_PNG_PATH_AUTO, &automatic, NULL, &e3);
    fuzz_heap_fill(FUZZ_FILL_A);
    if (s2 == IC_OK && s1 != IC_OK && libdeflate_may_accept(s1, &e1)) {
        if (s3 != IC_OK || !same_pixels(fast, automatic)) __builtin_trap();
    } else {
        if (s2 == IC_OK && (s1 != IC_OK || !same_pixels(ref, fast))) __builtin_trap();
        if (s3 != s1 || (s1 == IC_OK && !same_pixels(ref, automatic))) __builtin_trap();
        if (s1 != IC_OK && strcmp(e1.message, e3.message) != 0) __builtin_trap();
    }
    if (ref) ic_image_free(ref);
    if (fast) ic_image_free(fast);
    if (automatic) ic_image_free(automatic);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The last 3 bytes (when there are enough) choose the thumbnail; the file is whole. */
    uint32_t knobs = size >= 3 ? (uint32_t)data[size - 1] | (uint32_t)data[size - 2] << 8 |
                                     (uint32_t)data[size - 3] << 16
                               : 0;
    if (ic_sniff(data, size) != IC_FORMAT_PNG) return 0;
    fuzz_decode_chosen_way(data, size, knobs);
    uint8_t *fixed = malloc(size);
    if (!fixed) return 0;
    memcpy(fixed, data, size);
    fix_crcs(fixed, size);
    /* CRCs are checked in every build (decode/ic_png_chunks.h): the repaired copy is what
     * reaches APNG's frames and compositing, the raw input the CRC errors. */
    if (memcmp(fixed, data, size) != 0) fuzz_decode_chosen_way(fixed, size, knobs);
    differential(fixed, size, knobs);
    free(fixed);
    return 0;
}
