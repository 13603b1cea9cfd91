/*
 * ic_png_internal.h — the PNG fast path (png_fast.c) as png.c drives it. Not
 * installed.
 *
 * png.c reads the chunks before the first IDAT with libpng (IHDR, PLTE, tRNS,
 * iCCP with libpng's own checks), fills an ic_png_header, and asks png_fast.c
 * to inflate the whole IDAT stream at once with libdeflate. When that works
 * the pixels are unfiltered and expanded here, bit for bit as png.c's libpng
 * transforms would; when anything is unusual (see ic_png_fast_inflate) png.c
 * decodes the file with libpng instead, so errors and lenient cases stay
 * libpng's.
 */
#ifndef IC_PNG_INTERNAL_H
#define IC_PNG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ic_decode_internal.h"

/**
 * The largest filtered image (inflated IDAT data) the fast path holds at once:
 * 64 MiB, e.g. 16 MP of 8-bit RGBA or 22 MP of 8-bit RGB. Larger PNGs go
 * through libpng, which streams rows and never holds them.
 */
#define IC_PNG_FAST_MAX_FILTERED_BYTES ((uint64_t)64 << 20)

/** What libpng read before the first IDAT. */
typedef struct ic_png_header {
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
    /** Offset of the first IDAT chunk (its length field) in d->data. */
    size_t idat_at;
} ic_png_header;

/** The inflated image between ic_png_fast_inflate and ic_png_fast_emit. */
typedef struct ic_png_fast {
    const ic_png_header *h;
    ic_dec_buffer filtered;
    uint32_t bits_per_pixel;
    uint32_t filter_bpp; /* bytes per pixel for the filters, at least 1 */
} ic_png_fast;

/**
 * Inflates the IDAT stream of `h` into f->filtered and checks every row's
 * filter type. Fails (error set, nothing kept) when the fast path should not
 * decode this file: over IC_PNG_FAST_MAX_FILTERED_BYTES or the memory limit,
 * an IDAT or a later chunk that libpng would treat in a way other than
 * silently reading it (bad CRC, over libpng's 16 MiB chunk limit, a critical
 * chunk after the IDATs, a stream whose declared window is smaller than the
 * image), any zlib or size mismatch, a bad filter type.
 */
ic_status ic_png_fast_inflate(ic_decoder *d, const ic_png_header *h, ic_png_fast *f);

/**
 * Starts the output (ic_dec_begin) and hands over every row as straight RGBA8
 * (rows with alpha premultiplied by the sink). Fails only on allocation or
 * cancellation. Frees f->filtered.
 */
ic_status ic_png_fast_emit(ic_decoder *d, ic_png_fast *f);

/** Frees what ic_png_fast_inflate kept; a zeroed ic_png_fast is allowed. */
void ic_png_fast_free(ic_decoder *d, ic_png_fast *f);

#endif /* IC_PNG_INTERNAL_H */
