/*
 * jpeg_probe.c — a JPEG's facts without libjpeg: the marker segments up to the first SOS
 * (size, bit depth, progressive, EXIF orientation, ICC profile header).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../ic_decode_internal.h"

ic_status ic__jpeg_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    size_t i = 2;
    bool have_sof = false;
    ic__icc_chunk chunks[IC_ICC_MAX_CHUNKS];
    size_t icc_chunks = 0;
    while (i + 4 <= n) {
        if (p[i] != 0xFF) {
            return ic__set_error(err, IC_ERR_CORRUPT, "JPEG: expected a marker at byte %zu", i);
        }
        uint8_t marker = p[i + 1];
        if (marker == 0xFF) { /* fill byte */
            i++;
            continue;
        }
        if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
            i += 2;
            continue;
        }
        if (marker == 0xD9 || marker == 0xDA) break;
        size_t len = (size_t)p[i + 2] << 8 | p[i + 3];
        if (len < 2 || i + 2 + len > n) break;
        const uint8_t *seg = p + i + 4;
        size_t seg_len = len - 2;
        if (marker == 0xE1 && seg_len > 6 && memcmp(seg, "Exif\0\0", 6) == 0 &&
            info->orientation == 1) {
            info->orientation = ic__exif_orientation(seg + 6, seg_len - 6);
        }
        if (marker == 0xE2 && icc_chunks < IC_ICC_MAX_CHUNKS &&
            ic__icc_jpeg_chunk(seg, seg_len, &chunks[icc_chunks])) {
            icc_chunks++;
        }
        bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
                   marker != 0xCC;
        if (sof && !have_sof && seg_len >= 6) {
            have_sof = true;
            info->bit_depth = seg[0];
            info->height = (uint32_t)seg[1] << 8 | seg[2];
            info->width = (uint32_t)seg[3] << 8 | seg[4];
            info->is_progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA ||
                                   marker == 0xCE;
        }
        i += 2 + len;
    }
    if (!have_sof) {
        return ic__set_error(err, IC_ERR_CORRUPT, "JPEG: no frame header (SOF) before the scan data");
    }
    info->has_alpha = 0;
    info->frame_count = 1;
    size_t icc_total = ic__icc_jpeg_total(chunks, icc_chunks);
    if (icc_total) {
        /* The header is in the first chunk when that chunk holds 20 bytes or more. */
        for (size_t c = 0; c < icc_chunks; c++) {
            if (chunks[c].seq == 1) ic__icc_note_probe(info, chunks[c].data, chunks[c].size, icc_total);
        }
    }
    return IC_OK;
}
