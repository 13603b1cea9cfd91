/*
 * exif.c — the EXIF orientation: the tag in an EXIF (TIFF) block, and where
 * PNG (eXIf chunk) and WebP (EXIF chunk) keep that block. Only headers are
 * read: the chunk walks skip every chunk by its length, and nothing is
 * allocated. Anything malformed reads as orientation 1, never as an error.
 */
#include <stdbool.h>
#include <string.h>

#include "../common/ic_bytes.h"
#include "ic_exif.h"
#include "ic_png_chunks.h"

static uint32_t rd16(const uint8_t *p, bool le) { return le ? ic__le16(p) : ic__be16(p); }

static uint32_t rd32(const uint8_t *p, bool le) { return le ? ic__le32(p) : ic__be32(p); }

uint8_t ic__exif_orientation(const uint8_t *tiff, size_t size) {
    if (!tiff || size < 8) return 1;
    bool le;
    if (tiff[0] == 'I' && tiff[1] == 'I') {
        le = true;
    } else if (tiff[0] == 'M' && tiff[1] == 'M') {
        le = false;
    } else {
        return 1;
    }
    if (rd16(tiff + 2, le) != 42) return 1;
    uint32_t ifd = rd32(tiff + 4, le);
    if (ifd < 8 || ifd > size - 2) return 1;
    uint32_t count = rd16(tiff + ifd, le);
    const uint8_t *entry = tiff + ifd + 2;
    if (count > (size - ifd - 2) / 12) count = (uint32_t)((size - ifd - 2) / 12);
    for (uint32_t i = 0; i < count; i++, entry += 12) {
        if (rd16(entry, le) != 0x0112) continue;
        uint32_t type = rd16(entry + 2, le);
        uint32_t n = rd32(entry + 4, le);
        if (type != 3 || n < 1) return 1;  /* SHORT, stored inline */
        uint32_t v = rd16(entry + 8, le);
        return v >= 1 && v <= 8 ? (uint8_t)v : 1;
    }
    return 1;
}

/* An EXIF payload: a TIFF header, after "Exif\0\0" as some writers put it. */
static uint8_t payload_orientation(const uint8_t *p, size_t n) {
    if (n >= 6 && memcmp(p, "Exif\0\0", 6) == 0) {
        p += 6;
        n -= 6;
    }
    return ic__exif_orientation(p, n);
}

uint8_t ic__png_exif_orientation(const uint8_t *png, size_t size) {
    size_t pos = 8; /* after the signature */
    ic__png_chunk c;
    while (ic__png_next_chunk(png, size, &pos, &c)) {
        if (ic__png_chunk_is(&c, "IDAT") || ic__png_chunk_is(&c, "IEND") || !c.data_in) return 1;
        if (ic__png_chunk_is(&c, "eXIf")) return payload_orientation(c.data, c.length);
    }
    return 1;
}

uint8_t ic__webp_exif_orientation(const uint8_t *webp, size_t size) {
    /* RIFF header (12), then VP8X: header (8), flags (1); bit 3 announces EXIF. */
    if (size < 30 || memcmp(webp + 12, "VP8X", 4) != 0 || !(webp[20] & 0x08)) return 1;
    uint32_t riff = rd32(webp + 4, true);
    if (riff < size - 8) size = (size_t)riff + 8;
    size_t at = 12;
    while (size - at >= 8) {
        uint32_t len = rd32(webp + at + 4, true);
        if (len > size - at - 8) return 1;
        if (memcmp(webp + at, "EXIF", 4) == 0) return payload_orientation(webp + at + 8, len);
        at += 8 + (size_t)len + (len & 1);
        if (at > size) return 1;
    }
    return 1;
}
