/* sniff.c — recognising image formats from their leading bytes. */
#include <stdbool.h>
#include <string.h>

#include "../common/ic_bytes.h"
#include "../common/ic_common_internal.h"
#include "ic_format.h"

static bool has_prefix(const uint8_t *d, size_t n, const char *sig, size_t len) {
    return n >= len && memcmp(d, sig, len) == 0;
}

/* ISO-BMFF brand → format, or UNKNOWN if the brand is not an image brand. */
static ic_format brand_format(const uint8_t *b) {
    static const struct { char brand[5]; ic_format format; } brands[] = {
        {"avif", IC_FORMAT_AVIF}, {"avis", IC_FORMAT_AVIF},
        {"heic", IC_FORMAT_HEIC}, {"heix", IC_FORMAT_HEIC}, {"hevc", IC_FORMAT_HEIC},
        {"hevx", IC_FORMAT_HEIC}, {"heim", IC_FORMAT_HEIC}, {"heis", IC_FORMAT_HEIC},
        {"mif1", IC_FORMAT_HEIF}, {"msf1", IC_FORMAT_HEIF}, {"mif2", IC_FORMAT_HEIF},
    };
    for (size_t i = 0; i < sizeof brands / sizeof brands[0]; i++) {
        if (memcmp(b, brands[i].brand, 4) == 0) return brands[i].format;
    }
    return IC_FORMAT_UNKNOWN;
}

/* "....ftyp" box: the major brand decides, else the first image brand among the
 * compatible ones; a generic HEIF major brand is refined by AVIF/HEIC compatibles. */
static ic_format sniff_ftyp(const uint8_t *d, size_t n) {
    if (n < 12 || memcmp(d + 4, "ftyp", 4) != 0) return IC_FORMAT_UNKNOWN;
    uint32_t box = ic__be32(d);
    if (box < 16 || box > 4096) return IC_FORMAT_UNKNOWN;
    size_t end = box < n ? box : n;
    ic_format major = brand_format(d + 8);
    if (major == IC_FORMAT_AVIF || major == IC_FORMAT_HEIC) return major;
    ic_format found = major;
    for (size_t off = 16; off + 4 <= end; off += 4) {
        ic_format f = brand_format(d + off);
        if (f == IC_FORMAT_AVIF || f == IC_FORMAT_HEIC) return f;
        if (found == IC_FORMAT_UNKNOWN) found = f;
    }
    return found;
}

/* An XML document whose first element is <svg. Skips a BOM, the XML
 * declaration, comments, processing instructions and a DOCTYPE. */
static bool sniff_svg(const uint8_t *d, size_t n) {
    if (n > 1024) n = 1024;
    size_t i = 0;
    if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF) i = 3;
    while (i < n) {
        while (i < n && ic__is_space(d[i])) i++;
        if (i >= n || d[i] != '<') return false;
        if (i + 4 <= n && memcmp(d + i, "<svg", 4) == 0) {
            return i + 4 == n || ic__is_space(d[i + 4]) || d[i + 4] == '>' || d[i + 4] == '/';
        }
        const char *close;
        if (i + 4 <= n && memcmp(d + i, "<!--", 4) == 0) {
            close = "-->";
        } else if (i + 2 <= n && (d[i + 1] == '?' || d[i + 1] == '!')) {
            close = ">";
        } else {
            return false;
        }
        size_t cl = strlen(close);
        size_t j = i + 2;
        while (j + cl <= n && memcmp(d + j, close, cl) != 0) j++;
        if (j + cl > n) return false;
        i = j + cl;
    }
    return false;
}

static bool sniff_bmp(const uint8_t *d, size_t n) {
    if (n < 18 || d[0] != 'B' || d[1] != 'M') return false;
    uint32_t dib = ic__le32(d + 14);
    return dib == 12 || dib == 16 || dib == 40 || dib == 52 || dib == 56 || dib == 64 ||
           dib == 108 || dib == 124;
}

static bool sniff_ico(const uint8_t *d, size_t n) {
    /* ICONDIR: reserved 0, type 1 (icon) or 2 (cursor), count > 0, then a
     * directory entry whose reserved byte is 0. */
    if (n < 22 || d[0] != 0 || d[1] != 0 || (d[2] != 1 && d[2] != 2) || d[3] != 0) return false;
    uint32_t count = (uint32_t)d[4] | (uint32_t)d[5] << 8;
    return count > 0 && d[9] == 0;
}

ic_format ic_sniff(const uint8_t *d, size_t n) {
    if (!d || n < 2) return IC_FORMAT_UNKNOWN;
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return IC_FORMAT_JPEG;
    if (has_prefix(d, n, "\x89PNG\r\n\x1a\n", 8)) return IC_FORMAT_PNG;
    if (has_prefix(d, n, "GIF87a", 6) || has_prefix(d, n, "GIF89a", 6)) return IC_FORMAT_GIF;
    if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0) {
        return IC_FORMAT_WEBP;
    }
    if (has_prefix(d, n, "II*\0", 4) || has_prefix(d, n, "MM\0*", 4) ||
        has_prefix(d, n, "II+\0", 4) || has_prefix(d, n, "MM\0+", 4)) {
        return IC_FORMAT_TIFF;
    }
    if (d[0] == 0xFF && d[1] == 0x0A) return IC_FORMAT_JXL;
    if (has_prefix(d, n, "\0\0\0\x0CJXL \r\n\x87\n", 12)) return IC_FORMAT_JXL;
    ic_format bmff = sniff_ftyp(d, n);
    if (bmff != IC_FORMAT_UNKNOWN) return bmff;
    if (sniff_bmp(d, n)) return IC_FORMAT_BMP;
    if (sniff_ico(d, n)) return IC_FORMAT_ICO;
    if (sniff_svg(d, n)) return IC_FORMAT_SVG;
    return IC_FORMAT_UNKNOWN;
}

const char *ic_format_name(ic_format format) {
    switch (format) {
    case IC_FORMAT_JPEG: return "JPEG";
    case IC_FORMAT_PNG: return "PNG";
    case IC_FORMAT_GIF: return "GIF";
    case IC_FORMAT_WEBP: return "WebP";
    case IC_FORMAT_BMP: return "BMP";
    case IC_FORMAT_TIFF: return "TIFF";
    case IC_FORMAT_HEIC: return "HEIC";
    case IC_FORMAT_HEIF: return "HEIF";
    case IC_FORMAT_AVIF: return "AVIF";
    case IC_FORMAT_JXL: return "JPEG XL";
    case IC_FORMAT_ICO: return "ICO";
    case IC_FORMAT_SVG: return "SVG";
    case IC_FORMAT_UNKNOWN: break;
    }
    return "unknown";
}

int ic_format_is_decodable(ic_format format) {
    return format == IC_FORMAT_JPEG || format == IC_FORMAT_PNG || format == IC_FORMAT_GIF ||
           format == IC_FORMAT_WEBP || format == IC_FORMAT_AVIF || format == IC_FORMAT_HEIC ||
           format == IC_FORMAT_HEIF || format == IC_FORMAT_JXL;
}
