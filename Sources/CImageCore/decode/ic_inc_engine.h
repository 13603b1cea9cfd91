/*
 * ic_inc_engine.h — the incremental engines: the interface a format decoder offers
 * to consume its input piece by piece (driven by incremental.c), and each format's
 * constructor. Not installed.
 */
#ifndef IC_INC_ENGINE_H
#define IC_INC_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "ic_decoder.h"

/**
 * A format decoder that consumes its input piece by piece. The decoder `d`
 * it was made for has d->data NULL and d->size the bytes fed so far; the
 * engine writes rows into d's sink as they decode. Every call returns IC_OK
 * while the decode goes on or has finished, or the decode's final error.
 */
typedef enum ic__inc_phase {
    /** Still reading the header: the caller keeps a copy of the bytes fed so far. */
    IC_INC_HEADER,
    /** The header is in and the engine decodes the rest: bytes fed are released. */
    IC_INC_STREAMING,
    /**
     * The engine decodes the rest as it arrives, but the caller keeps every byte:
     * should the engine fail on the data (corrupt, truncated, unsupported), the
     * whole body goes to ic_decode at finish instead, so a malformed file gets
     * exactly ic_decode's answer even where the engine's reader is stricter.
     */
    IC_INC_STREAMING_KEPT,
    /** The engine cannot decode this file piece by piece: ic_decode on the whole body. */
    IC_INC_WHOLE_BODY,
} ic__inc_phase;

typedef struct ic__inc_engine {
    /** Consumes `size` more bytes (the engine keeps what it has not consumed). */
    ic_status (*feed)(void *state, const uint8_t *data, size_t size);
    /** The input is complete: decodes the rest, or fails as the whole-buffer decoder would. */
    ic_status (*end)(void *state);
    /** Where the engine is (see ic__inc_phase). */
    ic__inc_phase (*phase)(const void *state);
    /** Input bytes held right now. */
    uint64_t (*buffered)(const void *state);
    /** Codec rows of frame 0 delivered to the sink so far, top down (0 before ic__dec_begin). */
    uint32_t (*rows)(const void *state);
    /** Releases the codec (not d's output). */
    void (*free)(void *state);
} ic__inc_engine;

/** A JPEG engine for `d` (every option streams; arithmetic-coded files, which libjpeg cannot
 * suspend, ask for the whole body). */
ic_status ic__jpeg_inc_new(ic__decoder *d, const ic__inc_engine **engine, void **state);

/**
 * Bytes of a PNG up to and including the first IDAT chunk's length and type
 * (everything ic__png_decode reads before the pixels: eXIf, acTL), or 0 when
 * `size` bytes do not reach it yet. SIZE_MAX when the chunk walk cannot reach
 * an IDAT (a bad length, IEND first): the file is left to ic_decode.
 */
size_t ic__png_header_size(const uint8_t *data, size_t size);

/**
 * A PNG engine for `d` (png_stream.c): still PNGs and APNGs read as stills
 * (not all_frames with an acTL: the caller decides with ic__apng_frame_count on
 * the header). Its first feed must hold ic__png_header_size bytes at least;
 * it streams with the body kept (IC_INC_STREAMING_KEPT), Adam7 files ask for
 * the whole body. d->orientation must be set from the header already.
 */
ic_status ic__png_inc_new(ic__decoder *d, const ic__inc_engine **engine, void **state);

/**
 * Whether a WebP whose first `size` bytes are `data` streams: IC_INC_HEADER while
 * its headers (up to the image data's own) are not all in, IC_INC_STREAMING_KEPT
 * once they are and it is a still, IC_INC_WHOLE_BODY for an animation or headers
 * libwebp refuses (ic_decode then decides).
 */
ic__inc_phase ic__webp_inc_phase(const uint8_t *data, size_t size);

/**
 * A WebP engine for `d` (a still: ic__webp_inc_phase said so). It streams with the
 * body kept and reads that body, *body and *body_size, which the caller keeps up
 * to date before each feed and end (the buffer may move between calls).
 */
ic_status ic__webp_inc_new(ic__decoder *d, const uint8_t *const *body, const size_t *body_size,
                          const ic__inc_engine **engine, void **state);

/**
 * A GIF engine for `d` (gif_stream.c): the first frame (not all_frames: the
 * caller decides), decoded by ic__gif_decode's block walk and LZW decoder as the
 * bytes arrive. It waits for the screen descriptor and the global colour table
 * (IC_INC_HEADER), checks the limits as ic__gif_decode does, then streams with
 * the body kept and reads that body, *body and *body_size, which the caller
 * keeps up to date before each feed and end (the buffer may move between calls).
 */
ic_status ic__gif_inc_new(ic__decoder *d, const uint8_t *const *body, const size_t *body_size,
                         const ic__inc_engine **engine, void **state);

#endif /* IC_INC_ENGINE_H */
