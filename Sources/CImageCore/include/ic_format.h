/*
 * ic_format.h — image container formats and content sniffing.
 *
 * ImageKit never trusts a file extension or a Content-Type: the format is
 * decided by the leading bytes alone.
 */
#ifndef IC_FORMAT_H
#define IC_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Image formats ImageKit can name. JPEG, PNG, GIF, WebP, AVIF, HEIC/HEIF and JPEG XL decode. */
typedef enum ic_format {
    IC_FORMAT_UNKNOWN = 0,
    IC_FORMAT_JPEG = 1,
    IC_FORMAT_PNG = 2,
    IC_FORMAT_GIF = 3,
    IC_FORMAT_WEBP = 4,
    IC_FORMAT_BMP = 5,
    IC_FORMAT_TIFF = 6,
    IC_FORMAT_HEIC = 7,
    IC_FORMAT_HEIF = 8,
    IC_FORMAT_AVIF = 9,
    IC_FORMAT_JXL = 10,
    IC_FORMAT_ICO = 11,
    IC_FORMAT_SVG = 12
} ic_format;

/**
 * Identifies the format from the first bytes of a file.
 * Reads at most 1024 bytes (SVG looks past an XML prolog). Returns
 * IC_FORMAT_UNKNOWN when no signature matches.
 */
ic_format ic_sniff(const uint8_t *data, size_t size);

/** Upper-case name of a format ("JPEG", "TIFF", …); "unknown" for IC_FORMAT_UNKNOWN. */
const char *ic_format_name(ic_format format);

/**
 * True for the formats ImageKit decodes: JPEG, PNG, GIF, WebP, AVIF, HEIC/HEIF and JPEG XL.
 * Answered without loading anything: AVIF, HEIF and JPEG XL decode through libraries opened on
 * first use, and should one be missing, decoding that format fails (IC_ERR_UNSUPPORTED_FORMAT).
 */
int ic_format_is_decodable(ic_format format);

#ifdef __cplusplus
}
#endif

#endif /* IC_FORMAT_H */
