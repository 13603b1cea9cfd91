/*
 * ic_gif_internal.h — GIF's block walk (gif.c) as ic__gif_decode and the
 * incremental engine (gif_stream.c) drive it. Not installed.
 *
 * The walk decodes the frames from the bytes of the file so far and pauses
 * where they end; called again with more of them (the buffer may have moved)
 * it goes on exactly as one call with every byte would have. ic__gif_decode
 * runs it once over the whole file; the engine at every piece.
 */
#ifndef IC_GIF_INTERNAL_H
#define IC_GIF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_decoder.h"

/** The screen descriptor and the global colour table. */
typedef struct ic__gif_header {
    uint32_t width, height;
    /** Offset after the global colour table: the first block. */
    size_t first_block;
    /** Entries of the global colour table (at offset 13); 0 without one. */
    uint32_t colors;
} ic__gif_header;

/** What a walk over the blocks of a whole file finds (ic__gif_scan_blocks). */
typedef struct ic__gif_scan {
    /** Images whose data ends (their block terminator is in). */
    uint32_t images;
    bool interlaced;
    /** From a NETSCAPE2.0 or ANIMEXTS1.0 extension; 0 without one. */
    uint32_t loop_count;
    /** The data ends before the trailer. */
    bool truncated;
} ic__gif_scan;

/** A decode of a GIF's frames in progress (gif.c). */
typedef struct ic__gif_walk ic__gif_walk;

/** Reads the screen descriptor and the global colour table; IC_ERR_TRUNCATED before they are in. */
ic_status ic__gif_read_header(const uint8_t *data, size_t size, ic__gif_header *header, ic_error *err);

/** Counts the images and reads the loop count, walking the blocks from `first_block`. */
void ic__gif_scan_blocks(const uint8_t *data, size_t size, size_t first_block, ic__gif_scan *scan);

/**
 * Checks the screen and the first frame's working memory against d's limits
 * (ic__dec_check_size, which also plans the output): from the header alone,
 * before the file's images are counted.
 */
ic_status ic__gif_check_screen(ic__decoder *d, const ic__gif_header *header);

/**
 * Starts the output (`frames` frames of the screen) and a walk over them, its
 * state counted against the memory limit. The limits are checked already.
 */
ic_status ic__gif_walk_begin(ic__decoder *d, const ic__gif_header *header, uint32_t frames,
                            ic__gif_walk **out);

/**
 * Decodes from the file's first `size` bytes, `data`, as far as they go:
 * IC_OK once every frame is decoded or — when more may come (not `final`) —
 * where the bytes end; or the decode's error, which is final. With `final`
 * the bytes are the whole file and the walk ends, as ic__gif_decode ends.
 */
ic_status ic__gif_walk_run(ic__gif_walk *walk, const uint8_t *data, size_t size, bool final);

/**
 * Screen rows of frame 0 final so far, top down: the rows handed to a
 * thumbnail's resampler or, at full size, the rows above the first image and
 * its rows drawn so far; an interlaced image's once it is complete.
 */
uint32_t ic__gif_walk_rows(const ic__gif_walk *walk);

/** Frees a walk and its buffers (not the output). */
void ic__gif_walk_free(ic__gif_walk *walk);

#endif /* IC_GIF_INTERNAL_H */
