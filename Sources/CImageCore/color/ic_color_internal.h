/*
 * ic_color_internal.h — colour management inside a decode (color/): finding
 * embedded profiles in the containers, the transform cache, and converting
 * rows. Not installed.
 */
#ifndef IC_COLOR_INTERNAL_H
#define IC_COLOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/ic_budget.h"
#include "ic_color.h"
#include "ic_decode.h"

struct ic__color_entry;

/** The pixels a profile is applied to, as the decoder delivers them. */
typedef enum ic_color_input {
    /** Straight RGBA8 rows (alpha kept). */
    IC_COLOR_INPUT_RGBA = 1,
    /** RGBA8 rows holding grey (R = G = B), alpha kept. */
    IC_COLOR_INPUT_GRAY = 2,
    /** CMYK8, plain inks (255 = full ink); written back as opaque RGBA8. */
    IC_COLOR_INPUT_CMYK = 3,
    /** CMYK8, inverted inks as Adobe writes them (255 = no ink). */
    IC_COLOR_INPUT_CMYK_INVERTED = 4
} ic_color_input;

/**
 * ImageKit's own conversion of an RGB matrix/shaper source to sRGB
 * (matrix_shaper.c): tone curves, a 3x3 matrix in linear light, sRGB's encoding.
 */
typedef struct ic__matrix_shaper {
    /** The curves as linear light in 0...16383 (the portable kernel's encoding-table index). */
    float linear[3][256];
    /** Source linear RGB to linear sRGB, row major. */
    float matrix[9];
    /** The curves as 16-bit linear light, low and high bytes (the AVX-512 kernel). */
    uint8_t lin_lo[3][256];
    uint8_t lin_hi[3][256];
    /** The curves as 15-bit linear light, low and high bytes (the planar AVX-512 kernel). */
    uint8_t lin15_lo[3][256];
    uint8_t lin15_hi[3][256];
    /** The matrix rows in 1/4096 as word pairs: (R, G) and (B, rounding) (the planar kernel). */
    int32_t pair_rg[3];
    int32_t pair_b[3];
    /** What source channel k adds to R, G, B of each of 4 pixels, with the 16-bit scale folded in. */
    float columns[3][16];
    /** The encoding as straight segments over sqrt(linear): 255 * sRGB ~ seg_a + seg_b * s. */
    float seg_a[32];
    float seg_b[32];
    /** The three curves are the same (one table lookup serves all channels). */
    bool same_curves;
} ic__matrix_shaper;

/** Builds the encoding tables and picks the kernel for this CPU; once, before the rest. */
void ic__ms_init(void);

/**
 * Fills `f` from each channel's curve sampled at the 256 levels (linear light, 0...1) and
 * the matrix from source linear RGB to linear sRGB; false when a coefficient is out of range.
 */
bool ic__ms_build(ic__matrix_shaper *f, const double linear[3][256], const double matrix[3][3]);

/** Converts one row of `width` RGBA8 pixels in place (alpha kept). */
void ic__ms_convert(const ic__matrix_shaper *f, uint8_t *row, uint32_t width);

/**
 * ic__ms_convert through one kernel (an ic_color_kernel other than IC_COLOR_KERNEL_LCMS), for
 * ic_color_convert_with; false when this CPU or build lacks it.
 */
bool ic__ms_convert_kernel(const ic__matrix_shaper *f, int kernel, uint8_t *row, uint32_t width);

/** A decode's colour state (one per decode; the decoder holds it). */
typedef struct ic__color_state {
    /** Profile bytes (counted against the decode's memory), or NULL. */
    uint8_t *icc;
    size_t icc_size;
    /** Space the profile's header declares. */
    ic_color_space space;
    /** A profile was present but is not used (see ic_color.h). */
    bool ignored;
    /** The cached transform the rows go through; NULL: the pixels stay. */
    struct ic__color_entry *entry;
    ic_color_input input;
} ic__color_state;

/** One APP2 "ICC_PROFILE" segment's payload and its place in the sequence. */
typedef struct ic__icc_chunk {
    const uint8_t *data;
    size_t size;
    uint8_t seq;
    uint8_t count;
} ic__icc_chunk;

/** Most APP2 segments one profile can span (the sequence number is a byte). */
#define IC_ICC_MAX_CHUNKS 255

/**
 * If the APP2 segment payload `seg` (after the length) is an ICC_PROFILE chunk,
 * fills *chunk and returns true.
 */
bool ic__icc_jpeg_chunk(const uint8_t *seg, size_t size, ic__icc_chunk *chunk);

/**
 * Checks that chunks 1...count are each present once with one count, and
 * returns their total size (0 when they do not make one profile, or it is
 * over IC_ICC_MAX_BYTES).
 */
size_t ic__icc_jpeg_total(const ic__icc_chunk *chunks, size_t n);

/** Finds a WebP's ICCP chunk (VP8X files); false if there is none. */
bool ic__icc_webp_find(const uint8_t *data, size_t size, const uint8_t **icc, size_t *icc_size);

/** Space from a profile header's data colour space field; NONE when shorter than a header. */
ic_color_space ic__icc_header_space(const uint8_t *icc, size_t size);

/** Fills info->icc_* from a profile (or its first bytes) and its total size. */
void ic__icc_note_probe(ic_info *info, const uint8_t *head, size_t head_size, size_t total);

/*
 * A decode's colour steps. Each works on the decode's colour state and borrows its
 * memory budget for the profile's copy; none fails the decode (a profile the budget
 * cannot hold is ignored), so none reports an error.
 */

/**
 * Keeps a copy of the profile `icc` (charged to `budget`) for the decode and its output
 * image. A profile over IC_ICC_MAX_BYTES, or one the budget cannot hold, is ignored (not
 * kept).
 */
void ic__color_state_take_profile(ic__color_state *c, ic__budget *budget, const uint8_t *icc,
                                 size_t size);

/**
 * Takes the colour a picture signals by CICP code points (H.273; an AVIF's or HEIF's nclx
 * colour box) when no profile was taken or ignored before (an ICC profile wins): Display P3
 * (primaries 12, transfer 13) as the profile cicp.c builds, once per process, which the
 * output image then carries; nothing for any other pair (sRGB/BT.709 and unspecified need
 * nothing, BT.2020, PQ and HLG are left untouched). Call it after ic__color_state_take_profile.
 */
void ic__color_state_take_cicp(ic__color_state *c, ic__budget *budget, uint16_t primaries,
                              uint16_t transfer);

/** Reassembles and keeps a JPEG's profile from its chunks; a broken sequence is ignored. */
void ic__color_state_take_jpeg_chunks(ic__color_state *c, ic__budget *budget,
                                     const ic__icc_chunk *chunks, size_t n);

/** Marks a profile as present but unusable (e.g. a JPEG's broken chunk sequence). */
void ic__color_state_ignore(ic__color_state *c);

/**
 * Chooses what happens to the pixels, given how the decoder delivers them:
 * nothing (no profile, IC_COLOR_RAW, an sRGB profile) or a cached transform.
 * A profile lcms cannot use, or of another space than `input`, is ignored.
 */
void ic__color_state_prepare(ic__color_state *c, ic_color_mode mode, ic_color_input input);

/** True when the rows of this decode go through a transform in the sink. */
bool ic__color_sink_converts(const ic__color_state *c);

/** Converts one row of `width` pixels in place (RGBA or grey input; see ic_color_input). */
void ic__color_convert_row(const ic__color_state *c, uint8_t *row, uint32_t width);

/** True when the decoder converts CMYK rows itself with ic__color_convert_cmyk_row. */
bool ic__color_converts_cmyk(const ic__color_state *c);

/** CMYK8 row to opaque RGBA8 in sRGB in place through the profile. */
void ic__color_convert_cmyk_row(const ic__color_state *c, uint8_t *row, uint32_t width);

/**
 * Moves the profile (its bytes refunded to `budget`: the image owns them now) and the
 * colour facts onto the output image; releases the transform.
 */
void ic__color_state_finish(ic__color_state *c, ic__budget *budget, ic_image *image);

/** Releases whatever the state holds (after a failure), refunding `budget`. */
void ic__color_state_free(ic__color_state *c, ic__budget *budget);

#endif /* IC_COLOR_INTERNAL_H */
