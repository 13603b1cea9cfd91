/* exif.c — the orientation tag from an EXIF (TIFF) block. */
#include "ic_decode_internal.h"

static uint32_t rd16(const uint8_t *p, bool le) {
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 : (uint32_t)p[0] << 8 | p[1];
}

static uint32_t rd32(const uint8_t *p, bool le) {
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint8_t ic_exif_orientation(const uint8_t *tiff, size_t size) {
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
