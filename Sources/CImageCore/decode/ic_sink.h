/*
 * ic_sink.h — the row sink (sink.c): where a format decoder's rows go, in the
 * output image itself or through the resampler, and how a decode's output begins
 * and ends. Not installed.
 */
#ifndef IC_SINK_H
#define IC_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_decoder.h"

/** Rows a decoder may have written but not yet reported in resampling mode. */
#define IC_SINK_ROWS 16

/** Rows the colour helper thread converts at a time (see ic__decoder.helper). */
#define IC_HELPER_ROWS 32

/**
 * Starts the output: the codec will produce frames of width x height. Sets up
 * direct mode or the resampler, and allocates the output image.
 */
ic_status ic__dec_begin(ic__decoder *d, uint32_t width, uint32_t height, uint32_t frames);

/** True when rows land in the output image itself (no resampling). */
static inline bool ic__dec_is_direct(const ic__decoder *d) { return d->scaler == NULL; }

/** Where the decoder writes RGBA8 row y of frame `frame` (codec size). */
static inline uint8_t *ic__dec_row(ic__decoder *d, uint32_t frame, uint32_t y) {
    if (d->scaler) return d->scratch.p + (size_t)(y % IC_SINK_ROWS) * d->scratch_stride;
    return ic_image_frame(d->image, frame) + (size_t)y * d->image->stride;
}

/**
 * Reports rows [y, y + count) of `frame`, written at ic__dec_row. With
 * `straight_alpha` they are premultiplied first (fully opaque rows are left
 * alone). Without it they are final; a decoder whose final rows may hold
 * transparency says so with ic__dec_note_transparency.
 */
void ic__dec_rows_done(ic__decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                      bool straight_alpha);

/**
 * Hands over rows [y, y + count) of `frame` from the decoder's own buffer (only read). A
 * whole frame handed over at once (the only one, large enough, needing no colour
 * conversion) is resampled with use_helper_thread in two bands of output rows on two threads.
 */
void ic__dec_put_rows(ic__decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                     const uint8_t *src, size_t stride, bool straight_alpha);

/**
 * A whole codec-size frame, `height` rows `stride` apart from *rows, for a decoder that
 * decodes a picture into a buffer of its own before or while handing it over (a buffer
 * from ic__dec_buffer_alloc that the sink holds until the decode ends, ic__dec_finish or
 * ic__dec_sink_free, so its rows can still be read after the decoder returns).
 */
ic_status ic__dec_frame_alloc(ic__decoder *d, size_t stride, uint32_t height, uint8_t **rows);

/**
 * Hands over rows [y, y + count) of frame 0 from the frame of ic__dec_frame_alloc; the
 * decoder does not write them again (before ic__dec_frame_wait). As ic__dec_put_rows, except
 * that with use_helper_thread, when a large enough still is resampled and its rows come in
 * order from row 0 in more than one piece, a helper thread feeds them to the resampler as
 * they come (same pixels) while the decoder goes on; ic__dec_finish waits for it.
 */
void ic__dec_put_frame_rows(ic__decoder *d, uint32_t y, uint32_t count, bool straight_alpha);

/**
 * Waits until the rows handed over with ic__dec_put_frame_rows have been read (the helper
 * thread has fed them and ended; later rows are fed on the calling thread): before the
 * decoder writes the frame again.
 */
void ic__dec_frame_wait(ic__decoder *d);

/**
 * Output rows of frame 0 complete so far, top down, given the codec rows delivered (for
 * partial images): rows a helper thread is still converting or resampling are not.
 */
uint32_t ic__dec_rows_complete(const ic__decoder *d, uint32_t codec_rows);

/** Marks output as not opaque, for decoders whose final rows may hold transparency. */
static inline void ic__dec_note_transparency(ic__decoder *d) { d->all_opaque = false; }

/** Completes the output after the format decoder succeeded; frees the sink. */
ic_status ic__dec_finish(ic__decoder *d);

/** Frees whatever the sink holds (after a failure). */
void ic__dec_sink_free(ic__decoder *d);

/**
 * Undoes ic__dec_begin and the rows written since: frees the output, the resampler, the
 * frame of ic__dec_frame_alloc and any helper thread (its rows are dropped), so that another
 * decoder of the same file can begin again (jpeg.c, when its DC-only decoder gives way to
 * libjpeg mid-image).
 */
void ic__dec_unbegin(ic__decoder *d);

#endif /* IC_SINK_H */
