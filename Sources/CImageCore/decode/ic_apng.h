/*
 * ic_apng.h — APNG (apng.c), on png.c's reader. Not installed.
 */
#ifndef IC_APNG_H
#define IC_APNG_H

#include <stddef.h>
#include <stdint.h>

#include "ic_decoder.h"

/**
 * The number of frames an APNG's acTL announces, or 0 when the file is a still
 * PNG to ImageKit: no acTL before the first IDAT, more than one, or one that
 * announces 0 or more than 2^31 frames (Pillow reads those files as stills too).
 * Reads chunk headers only.
 */
uint32_t ic__apng_frame_count(const uint8_t *data, size_t size);

/**
 * Decodes every frame of an APNG (ic__apng_frame_count > 0) composited on the
 * canvas; ic__png_decode calls it when all_frames is set.
 */
ic_status ic__apng_decode(ic__decoder *d);

/**
 * Decodes a complete PNG held in memory (an APNG frame re-wrapped by apng.c),
 * `width` x `height` pixels, to straight RGBA8 rows `stride` bytes apart at
 * `out`, with ic__png_decode's transforms. Chunk CRCs are not checked (apng.c
 * checks the originals). Looks at the cancel flag every 64 rows.
 */
ic_status ic__png_decode_rgba(ic__decoder *d, const uint8_t *png_data, size_t size, uint8_t *out,
                             size_t stride, uint32_t width, uint32_t height);

#endif /* IC_APNG_H */
