/*
 * ic_png_chunks.h — the one PNG chunk walker (png_chunks.c): a chunk's length, type
 * and CRC, read with one CRC function and one set of limits, for both PNG decoders
 * (png.c with libpng, png_fast.c and png_stream.c without; apng.c) and the header
 * readers (the probe, the EXIF orientation, the incremental header size). Not installed.
 *
 * Two ways through the same rules: over a whole buffer (ic__png_next_chunk, for the
 * chunks before the image data and APNG's), and fed the bytes in order (ic__png_walk,
 * from the first IDAT on, for the fast path and the streamed engine).
 *
 * CRCs are checked in every build, fuzzing builds included: a fuzz harness that wants
 * its mutations to reach the pixels repairs the CRCs itself (Fuzz/fuzz_png.c).
 */
#ifndef IC_PNG_CHUNKS_H
#define IC_PNG_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_decoder.h"

/** PNG's limit on any chunk's length (2^31 - 1), which libpng enforces too. */
#define IC_PNG_MAX_CHUNK_LENGTH 0x7FFFFFFFu

/**
 * libpng's limit on a chunk other than IDAT, as png.c configures it
 * (png_set_chunk_malloc_max): 16 MiB. The streamed walk declines a larger one.
 */
#define IC_PNG_CHUNK_LIMIT (16u << 20)

/** The CRC-32 of PNG (ISO 3309, the one zlib computes) of data[0..size), continuing `crc`. */
uint32_t ic__png_crc(uint32_t crc, const uint8_t *data, size_t size);

/** A chunk of a whole buffer, as ic__png_next_chunk reads it. */
typedef struct ic__png_chunk {
    /** Offset of its length field in the file. */
    size_t at;
    uint32_t length;
    /** Its 4 type bytes and its data, in the buffer. */
    const uint8_t *type;
    const uint8_t *data;
    /** Its data is in the buffer (and its length within IC_PNG_MAX_CHUNK_LENGTH). */
    bool data_in;
    /** Its data and CRC are in the buffer. */
    bool complete;
} ic__png_chunk;

/**
 * The chunk whose length field is at *pos of p[0..n); false when fewer than 8 bytes are
 * left there. Moves *pos past the chunk, or to n when it is not complete.
 */
bool ic__png_next_chunk(const uint8_t *p, size_t n, size_t *pos, ic__png_chunk *c);

/** Whether the chunk's type is `type` (4 characters). */
bool ic__png_chunk_is(const ic__png_chunk *c, const char *type);

/** Whether a complete chunk's CRC matches its type and data. */
bool ic__png_chunk_crc_ok(const ic__png_chunk *c);

/**
 * The chunk walk from the first IDAT on, fed the bytes in order (all at once
 * for the whole body, piece by piece when streaming). It accepts what libpng's
 * sequential reader silently reads once it has the pixels: IDAT chunks in one
 * run, each within IC_PNG_MAX_CHUNK_LENGTH, then ancillary chunks, each within
 * IC_PNG_CHUNK_LIMIT with its CRC checked, up to IEND (bytes after it are ignored)
 * or the end of the input (a cut in IEND or an ancillary chunk). It declines
 * (IC_ERR_CORRUPT, error set) an IDAT after other chunks, a chunk over those
 * limits, an invalid chunk type, a CRC mismatch, a critical chunk after the image
 * data, and an input that ends inside the IDATs.
 */
typedef struct ic__png_walk {
    uint64_t pos;       /* offset in the file of the next byte */
    uint64_t chunk_at;  /* offset of the current chunk */
    uint64_t left;      /* bytes of the current chunk's data still to come */
    uint32_t length;    /* the current chunk's data length */
    uint32_t crc;       /* CRC of its type and the data so far */
    uint8_t part;       /* header, data, CRC, or done (IEND read) */
    uint8_t have;       /* bytes of the header or CRC gathered */
    uint8_t head[8];
    uint8_t crc_bytes[4];
    bool in_idat;       /* no chunk but IDAT seen yet */
    bool idat;          /* the current chunk is an IDAT */
    uint64_t payload;   /* IDAT data bytes so far */
    uint64_t idat_end;  /* offset of the first chunk after the IDATs, once seen */
} ic__png_walk;

/** Starts a walk at `idat_at`, the first IDAT chunk's offset. */
void ic__png_walk_init(ic__png_walk *w, uint64_t idat_at);

/**
 * Walks the next bytes, data[0..size) at offset w->pos: consumes *used of
 * them (at least one when size > 0); *idat is true when those bytes are IDAT
 * data (the zlib stream, for the caller to inflate). Fails as the walk
 * declines the file.
 */
ic_status ic__png_walk_feed(ic__decoder *d, ic__png_walk *w, const uint8_t *data, size_t size,
                           size_t *used, bool *idat);

/** The input ends where the walk is: IC_OK, or the decline of a cut inside the IDATs. */
ic_status ic__png_walk_end(ic__decoder *d, const ic__png_walk *w);

#endif /* IC_PNG_CHUNKS_H */
