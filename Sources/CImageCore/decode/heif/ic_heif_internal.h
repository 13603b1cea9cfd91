/*
 * ic_heif_internal.h — the HEIF stack's shared parts (decode/heif/): reading the
 * boxes libheif would trip on, the HEVC SPS, and the HEVC decoder it registers.
 * See README.md here for the libheif version it mirrors. Not installed.
 */
#ifndef IC_HEIF_INTERNAL_H
#define IC_HEIF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"

/**
 * Orientation (1…8) of a HEIF file's primary item from its irot and imir properties
 * (heif_boxes.c); 1 when it has none or the boxes cannot be read.
 */
uint8_t ic__heif_orientation(const uint8_t *data, size_t size);

/**
 * Loads libde265 and registers ImageKit's HEVC decoder with libheif (heif_hevc.c: libde265,
 * refusing pictures it reports damaged), once per process; after ic__heif_load. IC_OK, or
 * IC_ERR_UNSUPPORTED_FORMAT with the reason.
 */
ic_status ic__heif_hevc_load(const char *format, ic_error *err);

/** How many items (infe entries of version 2 or 3) a HEIF file's iinf lists. */
uint64_t ic__heif_item_count(const uint8_t *data, size_t size);

/** The picture size and chroma format (0 4:0:0, 1 4:2:0, 2 4:2:2, 3 4:4:4) an HEVC SPS
 *  declares, and the size of what a decoder puts out (less the conformance window; 0 when
 *  the window's offsets reach past the picture). */
typedef struct ic__hevc_picture {
    uint32_t width;
    uint32_t height;
    uint32_t visible_width;
    uint32_t visible_height;
    uint8_t chroma_format;
} ic__hevc_picture;

/** Bytes of an SPS NAL unit ic__hevc_sps_picture reads at most. */
#define IC_HEVC_SPS_BYTES 256

/**
 * The picture an HEVC SPS NAL unit (with its 2-byte header) declares, read as libde265
 * reads it (hevc_sps.c); false when `nal` is not an SPS or libde265 would refuse it.
 */
bool ic__hevc_sps_picture(const uint8_t *nal, size_t size, ic__hevc_picture *out);

/** How deep images may derive from derived images, or carry auxiliary images (an alpha) that
 *  do: libheif follows both without looking for a cycle (a grid that is its own tile, or
 *  two images each the other's alpha, recurse until the stack overflows); a real file goes two
 *  or three deep (an identity over a grid whose alpha is a grid of tiles). */
#define IC_HEIF_MAX_DERIVATION_DEPTH 4

/** Images ic__heif_scan_items visits in all: far above a real file's (a grid has at most
 *  256 x 256 tiles), and a bound on the scan's own time. */
#define IC_HEIF_MAX_DERIVATION_VISITS (1u << 18)

/** What ic__heif_scan_items found. */
typedef enum ic__heif_derived_status {
    IC_HEIF_DERIVED_OK,
    /** The primary item is a grid or overlay whose data cannot be read. */
    IC_HEIF_DERIVED_UNREADABLE,
    /** Images derive or carry auxiliary images deeper than IC_HEIF_MAX_DERIVATION_DEPTH (a cycle). */
    IC_HEIF_DERIVED_TOO_DEEP,
    /** The derived images refer to more than IC_HEIF_MAX_DERIVATION_VISITS images in all. */
    IC_HEIF_DERIVED_TOO_MANY,
    /** A grid's tiles (an overlay's inputs) decode far more pixels than its canvas shows. */
    IC_HEIF_DERIVED_OVERDRAWN,
    /** A grid's tiles would not write every pixel of its canvas (heif_boxes.c, grid_covered). */
    IC_HEIF_DERIVED_UNCOVERED,
    /** No memory for the tables of items the scan sorts. */
    IC_HEIF_DERIVED_NO_MEMORY,
} ic__heif_derived_status;

/** The derived images of a HEIF file, as ic__heif_scan_items reads them. */
typedef struct ic__heif_derived {
    /** The largest canvas a grid or overlay declares (0 x 0 when none does). */
    uint32_t largest_width;
    uint32_t largest_height;
    /** For TOO_DEEP, OVERDRAWN and UNCOVERED: the item; for OVERDRAWN also its inputs and the
     *  pixels they decode; for both its canvas. */
    uint32_t item;
    uint32_t inputs;
    uint64_t decoded_pixels;
    uint32_t canvas_width;
    uint32_t canvas_height;
} ic__heif_derived;

/** What ic__heif_scan_items reads of a HEIF file's items. */
typedef struct ic__heif_scan {
    /** An item is AV1-coded (an iinf entry of type av01). */
    bool has_av1;
    /** The largest picture (in samples) any HEVC SPS in the file declares, in an hvcC property
     *  or in an hvc1 item's data, when has_picture: libde265 allocates each picture it decodes
     *  at its SPS's size, whatever the item's ispe says. */
    bool has_picture;
    ic__hevc_picture picture;
    /** The derived images. */
    ic__heif_derived derived;
} ic__heif_scan;

/**
 * Reads a HEIF file's items once (heif_boxes.c), indexed by id: whether one is AV1-coded,
 * the largest HEVC picture, and every derived image (grid, overlay 'iovl', identity 'iden'):
 * the largest canvas one declares, which libheif allocates before it checks it against
 * the item's ispe (an overlay can be the primary image's alpha), and, in the pixels libde265
 * decodes (each input's SPS picture), what decoding each costs. libheif follows
 * derivations without a cycle check and decodes every tile a grid lists: the statuses say
 * what must not reach it (has_av1 and the picture are read whatever the status, but for
 * IC_HEIF_DERIVED_NO_MEMORY).
 */
ic__heif_derived_status ic__heif_scan_items(const uint8_t *data, size_t size, ic__heif_scan *out);

/** How many file-level (top-level) meta boxes a HEIF file has, up to where its boxes end or break. */
unsigned ic__heif_meta_boxes(const uint8_t *data, size_t size);

#endif /* IC_HEIF_INTERNAL_H */
