/*
 * ic_png_internal.h — the PNG fast path (png_fast.c) as png.c and the streamed
 * engine (png_stream.c) drive it. Not installed.
 *
 * png.c reads the chunks before the first IDAT with libpng (IHDR, PLTE, tRNS,
 * iCCP with libpng's own checks; ic__png_read_header), fills an ic__png_header,
 * and asks png_fast.c to inflate the whole IDAT stream at once with libdeflate.
 * When that works the pixels are unfiltered and expanded here, bit for bit as
 * png.c's libpng transforms would; when anything is unusual (see
 * ic__png_fast_inflate) png.c decodes the file with libpng instead, so errors
 * and lenient cases stay libpng's. The chunk walk (ic__png_walk) and the row
 * functions (ic__png_unfilter_row, ic__png_expand_row) are the same code for the
 * whole body and for the streamed engine, which applies the same rules to the
 * bytes as they arrive.
 */
#ifndef IC_PNG_INTERNAL_H
#define IC_PNG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ic_decoder.h"
#include "ic_png_chunks.h"

/**
 * The largest filtered image (inflated IDAT data) the fast path holds at once:
 * 64 MiB, e.g. 16 MP of 8-bit RGBA or 22 MP of 8-bit RGB. Larger PNGs go
 * through libpng, which streams rows and never holds them.
 */
#define IC_PNG_FAST_MAX_FILTERED_BYTES ((uint64_t)64 << 20)

/** What libpng read before the first IDAT. */
typedef struct ic__png_header {
    uint32_t width, height;
    uint8_t bit_depth, color_type, interlace;
    /** Palette (entries past num_palette stay black, as in libpng's own copy). */
    uint16_t num_palette;
    uint8_t palette[256][3];
    /** tRNS: palette alphas (num_trans of them) or the grey / RGB key. */
    bool has_trns;
    uint16_t num_trans;
    uint8_t trans_alpha[256];
    uint16_t trans_gray, trans_red, trans_green, trans_blue;
    /** Offset of the first IDAT chunk (its length field) in the file. */
    size_t idat_at;
} ic__png_header;

/** How the rows of `h` are laid out and expanded (ic__png_format_init). */
typedef struct ic__png_format {
    uint32_t bits_per_pixel;
    uint32_t filter_bpp;  /* bytes per pixel for the filters, at least 1 */
    bool has_alpha;       /* an alpha channel or tRNS */
    uint32_t palette[256]; /* RGBA8 entries, tRNS alphas applied */
    uint64_t filtered;    /* bytes of the filtered image (every pass, filter bytes included) */
} ic__png_format;

/** The inflated image between ic__png_fast_inflate and ic__png_fast_emit. */
typedef struct ic__png_fast {
    const ic__png_header *h;
    ic__dec_buffer filtered;
    ic__png_format fmt;
} ic__png_fast;

/**
 * Inflates the IDAT stream of `h` into f->filtered and checks every row's
 * filter type. Fails (error set, nothing kept) when the fast path should not
 * decode this file: over IC_PNG_FAST_MAX_FILTERED_BYTES or the memory limit,
 * an IDAT or a later chunk that libpng would treat in a way other than
 * silently reading it (bad CRC, over libpng's 16 MiB chunk limit, a critical
 * chunk after the IDATs, a stream whose declared window is smaller than the
 * image), any zlib or size mismatch, a bad filter type.
 */
ic_status ic__png_fast_inflate(ic__decoder *d, const ic__png_header *h, ic__png_fast *f);

/**
 * Starts the output (ic__dec_begin) and hands over every row as straight RGBA8
 * (rows with alpha premultiplied by the sink). Fails only on allocation or
 * cancellation. Frees f->filtered.
 */
ic_status ic__png_fast_emit(ic__decoder *d, ic__png_fast *f);

/** Frees what ic__png_fast_inflate kept; a zeroed ic__png_fast is allowed. */
void ic__png_fast_free(ic__decoder *d, ic__png_fast *f);

/**
 * libpng reads the chunks of src[0..size) before the first IDAT into *h
 * (IHDR, PLTE, tRNS, the first IDAT's offset), the size is checked against
 * the limits and the iCCP profile taken (ic__color_take_profile). On failure
 * *decline tells a failure of the data that libpng's full decode meets too
 * (libpng's own error, an unknown compression or filter method; nothing kept)
 * from a final one (a limit, memory).
 */
ic_status ic__png_read_header(ic__decoder *d, const uint8_t *src, size_t size, ic__png_header *h,
                             bool *decline);

/**
 * Fills *fmt for `h`; IC_ERR_CORRUPT (error set) for a colour type and bit
 * depth PNG does not define.
 */
ic_status ic__png_format_init(ic__decoder *d, const ic__png_header *h, ic__png_format *fmt);

/** Bytes of one filtered row of `width` pixels, without its filter byte. */
uint64_t ic__png_row_bytes(uint32_t width, uint32_t bits_per_pixel);

/**
 * False when zlib and libdeflate could disagree on a stream whose first byte
 * (CMF) is `cmf` inflating to `filtered` bytes: zlib refuses distances past
 * the declared window, libdeflate does not check, so only a full window, or
 * an image that fits in the declared one, is the same to both.
 */
bool ic__png_window_ok(uint8_t cmf, uint64_t filtered);

/**
 * Unfilters one row in place: `type` is its filter byte (0…4), `cur` its
 * `len` bytes, `prev` the previous unfiltered row of the pass (zeros for the
 * first), `bpp` ic__png_format.filter_bpp.
 */
void ic__png_unfilter_row(uint8_t type, uint8_t *cur, const uint8_t *prev, size_t len, size_t bpp);

/** Expands `width` pixels of an unfiltered row to straight RGBA8 at `dst`. */
void ic__png_expand_row(const ic__png_header *h, const ic__png_format *fmt, const uint8_t *src,
                       uint8_t *dst, uint32_t width);

#endif /* IC_PNG_INTERNAL_H */
