/*
 * icc_source.c — embedded profiles as the containers carry them: JPEG APP2
 * "ICC_PROFILE" chunks reassembled by sequence number, the WebP ICCP chunk,
 * and a decode's copy of the profile. PNG's iCCP is read by libpng (png.c).
 */
#include <string.h>

#include "../common/ic_bytes.h"
#include "../image/ic_image_internal.h"
#include "ic_color_internal.h"

/* "ICC_PROFILE\0", sequence number, count. */
#define JPEG_ICC_HEADER 14

bool ic__icc_jpeg_chunk(const uint8_t *seg, size_t size, ic__icc_chunk *chunk) {
    if (size < JPEG_ICC_HEADER || memcmp(seg, "ICC_PROFILE", 12) != 0) return false;
    chunk->seq = seg[12];
    chunk->count = seg[13];
    chunk->data = seg + JPEG_ICC_HEADER;
    chunk->size = size - JPEG_ICC_HEADER;
    return true;
}

size_t ic__icc_jpeg_total(const ic__icc_chunk *chunks, size_t n) {
    if (n == 0 || n > IC_ICC_MAX_CHUNKS) return 0;
    uint8_t count = chunks[0].count;
    if (count == 0 || n != count) return 0;
    bool seen[IC_ICC_MAX_CHUNKS + 1] = {false};
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const ic__icc_chunk *c = &chunks[i];
        if (c->count != count || c->seq == 0 || c->seq > count || seen[c->seq]) return 0;
        seen[c->seq] = true;
        total += c->size;
        if (total > IC_ICC_MAX_BYTES) return 0;
    }
    return total;
}

bool ic__icc_webp_find(const uint8_t *p, size_t n, const uint8_t **icc, size_t *icc_size) {
    /* RIFF header, then VP8X (with the ICC flag) first; ICCP comes right after it. */
    if (n < 30 || memcmp(p, "RIFF", 4) != 0 || memcmp(p + 8, "WEBPVP8X", 8) != 0) return false;
    if (!(p[20] & 0x20)) return false;
    size_t at = 12;
    while (n - at >= 8) {
        uint32_t size = ic__le32(p + at + 4);
        if (size > n - at - 8) return false;
        if (memcmp(p + at, "ICCP", 4) == 0) {
            *icc = p + at + 8;
            *icc_size = size;
            return true;
        }
        if (memcmp(p + at, "VP8 ", 4) == 0 || memcmp(p + at, "VP8L", 4) == 0 ||
            memcmp(p + at, "ANIM", 4) == 0) {
            return false;
        }
        at += 8 + (size_t)size + (size & 1);
        if (at > n) return false;
    }
    return false;
}

ic_color_space ic__icc_header_space(const uint8_t *icc, size_t size) {
    if (size < 20) return IC_COLOR_SPACE_NONE;
    const uint8_t *s = icc + 16;
    if (memcmp(s, "RGB ", 4) == 0) return IC_COLOR_SPACE_RGB;
    if (memcmp(s, "GRAY", 4) == 0) return IC_COLOR_SPACE_GRAY;
    if (memcmp(s, "CMYK", 4) == 0) return IC_COLOR_SPACE_CMYK;
    return IC_COLOR_SPACE_OTHER;
}

void ic__icc_note_probe(ic_info *info, const uint8_t *head, size_t head_size, size_t total) {
    info->has_icc_profile = 1;
    info->icc_size = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
    info->icc_space = (uint8_t)ic__icc_header_space(head, head_size);
}

void ic__color_state_ignore(ic__color_state *c) { c->ignored = true; }

void ic__color_state_take_profile(ic__color_state *c, ic__budget *budget, const uint8_t *icc,
                                 size_t size) {
    if (c->icc) return; /* the first profile wins */
    if (size == 0 || size > IC_ICC_MAX_BYTES) {
        c->ignored = true;
        return;
    }
    /* Only the memory limit can refuse the copy; the decode then goes on untagged. */
    uint8_t *copy = ic__budget_try_alloc(budget, size);
    if (!copy) {
        c->ignored = true;
        return;
    }
    memcpy(copy, icc, size);
    c->icc = copy;
    c->icc_size = size;
    c->space = ic__icc_header_space(copy, size);
}

void ic__color_state_take_jpeg_chunks(ic__color_state *c, ic__budget *budget,
                                     const ic__icc_chunk *chunks, size_t n) {
    if (n == 0) return;
    size_t total = ic__icc_jpeg_total(chunks, n);
    if (total == 0) {
        ic__color_state_ignore(c);
        return;
    }
    uint8_t *icc = ic__budget_try_alloc(budget, total);
    if (!icc) {
        ic__color_state_ignore(c);
        return;
    }
    /* Chunks in sequence order, whatever order the segments came in. */
    size_t at = 0;
    for (uint8_t seq = 1; seq <= chunks[0].count && seq != 0; seq++) {
        for (size_t i = 0; i < n; i++) {
            if (chunks[i].seq != seq) continue;
            memcpy(icc + at, chunks[i].data, chunks[i].size);
            at += chunks[i].size;
            break;
        }
        if (seq == 255) break;
    }
    c->icc = icc;
    c->icc_size = total;
    c->space = ic__icc_header_space(icc, total);
}

const uint8_t *ic_image_icc_profile(const ic_image *image, size_t *size) {
    *size = image->icc_profile ? image->icc_profile_size : 0;
    return image->icc_profile;
}
