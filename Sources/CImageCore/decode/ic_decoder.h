/*
 * ic_decoder.h — one decode in progress (decode/): the state the format decoders
 * share with the row sink, its limits, its memory budget and cancellation, and its
 * start and end. The sink's interface is ic_sink.h. Not installed.
 */
#ifndef IC_DECODER_H
#define IC_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../color/ic_color_internal.h"
#include "../common/ic_budget.h"
#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "../resize/ic_resize_internal.h"
#include "ic_decode.h"
#include "ic_format.h"
#include "ic_jpeg_testing.h"
#include "ic_png_testing.h"

/** A large working buffer of a decode (mapped or pooled when big, counted against the limit). */
typedef struct ic__dec_buffer {
    uint8_t *p;
    size_t size;
    size_t capacity;
    int kind;
} ic__dec_buffer;

/**
 * State shared by the format decoders and the row sink.
 *
 * A decoder reads its header and calls ic__dec_check_size (which also plans
 * the output size: a thumbnail or the full image), optionally asks how far
 * its codec may shrink on load, then calls ic__dec_begin with the size its
 * codec will produce. It then hands over rows top to bottom, frame by frame:
 * either written in place where ic__dec_row says and reported with
 * ic__dec_rows_done, or copied from its own buffer with ic__dec_put_rows.
 *
 * When the codec's size is the output size ("direct" mode) rows land in the
 * output image itself and may be written in any order (each reported once). Otherwise the sink
 * streams each row through the resampler (which premultiplies straight rows as it reads
 * them), keeping only IC_SINK_ROWS rows: rows must then come strictly in order.
 */
typedef struct ic__decoder {
    const uint8_t *data;
    size_t size;
    ic_decode_options opts;
    ic_error *err;
    ic_format format;

    /* Memory accounting of ImageKit's own buffers (and libpng's), and the cancel flag:
     * limit and flag from opts (ic__dec_init). color/ borrows it, never the decoder. */
    ic__budget budget;

    /* The size stored in the file: written by ic__dec_check_size only. */
    uint32_t source_width;
    uint32_t source_height;

    /* Facts the format decoder found. */
    uint8_t orientation;
    /* The codec applied the orientation itself (libheif, libjxl): decode.c does not. */
    bool codec_oriented;
    uint32_t loop_count;

    /* The plan: output size and the source region it shows (stored orientation). */
    ic__geometry plan;

    /* The sink. */
    uint32_t codec_width;
    uint32_t codec_height;
    ic__scaler *scaler;
    uint64_t scaler_bytes;
    ic__dec_buffer scratch;
    size_t scratch_stride;
    uint32_t sink_frame; /* frame the scaler is filling, +1 (0: none yet) */

    /* Output. */
    ic_image *image;
    bool all_opaque;

    /* Embedded profile and conversion (color/). */
    ic__color_state color;

    /* PNG decoder choice (tests only; ic_decode uses IC_PNG_PATH_AUTO). */
    ic_png_path png_path;
    /* JPEG decoder choice (tests only; ic_decode uses IC_JPEG_PATH_AUTO). */
    ic_jpeg_path jpeg_path;
    /* With use_helper_thread, in direct mode: a helper thread converts (and premultiplies)
     * the rows reported in order while the codec decodes the next ones; the caller joins in
     * for what is left at the end. Every row goes through the same code either way. */
    ic__range_helper *helper;
    bool helper_straight;   /* the handed-over rows need premultiplying */
    int helper_transparent; /* set (atomically) when such a row was not opaque */
    uint32_t helper_rows;   /* rows a second decompression decoded (jpeg/jpeg_band.c) */
    /* A codec-size frame held until the decode ends (ic__dec_frame_alloc), and with
     * use_helper_thread, in resampling mode, the helper thread that feeds the rows of it
     * handed over in order to the resampler while the codec decodes on: the scaler, the
     * scratch rows and sink_frame are then the helper's alone until it is joined. */
    ic__dec_buffer frame;
    size_t frame_stride;
    ic__range_helper *resampler;
    bool resampler_straight; /* the handed-over rows need premultiplying */
    uint32_t resampled_rows; /* output rows the resampler has written (atomic) */
} ic__decoder;

/** True once the caller's cancellation flag is set. */
bool ic__dec_cancelled(const ic__decoder *d);

/** Fails with IC_ERR_CANCELLED and a message naming the format. */
ic_status ic__dec_fail_cancelled(ic__decoder *d);

/**
 * Checks a size read from a header against the limits, before anything is
 * allocated — zero dimensions, max_pixels, max_frames, and max_memory_bytes
 * for the planned output plus `extra_bytes` of codec working memory — then
 * records width x height as the source size and plans the output size
 * (thumbnail options, scale-down limit). Every decoder calls it before
 * ic__dec_begin; it is the only writer of the source size.
 */
ic_status ic__dec_check_size(ic__decoder *d, uint32_t width, uint32_t height, uint32_t frames,
                            uint64_t extra_bytes);

/** True if the plan needs a resampled output (a thumbnail or a scale-down). */
bool ic__dec_plans_resize(const ic__decoder *d);
/** True when a FILL thumbnail's window is cut after the decode (a gravity other than the
 *  centre, or smart): the plan then covers the box without cutting. */
bool ic__dec_cuts_window(const ic__decoder *d);

/**
 * The largest power-of-two reduction (1 ... max_denominator) a codec may apply
 * while decoding (sizes rounded up, as libjpeg and libwebp do), keeping the
 * planned region at least as large as the output. 1 when nothing is resized.
 */
uint32_t ic__dec_shrink_denominator(const ic__decoder *d, uint32_t max_denominator);

/** Counts `bytes` against max_memory_bytes; fails without side effects when over. */
ic_status ic__dec_reserve(ic__decoder *d, uint64_t bytes);
/** ic__dec_reserve for memory the decode can do without: false, with no error set, when over. */
bool ic__dec_try_reserve(ic__decoder *d, uint64_t bytes);
/** Returns bytes counted by ic__dec_reserve. */
void ic__dec_release(ic__decoder *d, uint64_t bytes);

/** malloc counted against the decode's memory limit; NULL with err set on failure. */
void *ic__dec_malloc(ic__decoder *d, size_t size);
/** Frees memory from ic__dec_malloc. */
void ic__dec_free(ic__decoder *d, void *p, size_t size);

/** A big working buffer (from the decode's pool when it has one), counted against the limit. */
ic_status ic__dec_buffer_alloc(ic__decoder *d, size_t size, ic__dec_buffer *buf);
/** Frees a buffer from ic__dec_buffer_alloc; a zeroed handle is allowed. */
void ic__dec_buffer_free(ic__decoder *d, ic__dec_buffer *buf);

/** Starts `d` with `options` (NULL: the defaults), reporting failures to `err`. */
void ic__dec_init(ic__decoder *d, const ic_decode_options *options, ic_error *err);

/**
 * Ends a decode whose format decoder returned `st`: completes the sink, applies
 * the EXIF orientation and hands the image to *out with `stats` (may be NULL),
 * or frees everything and returns the error. ic_decode and the incremental
 * decode end here alike.
 */
ic_status ic__dec_complete(ic__decoder *d, ic_status st, ic_image **out, ic_decode_stats *stats);

/** Frees the output and colour state of a decode that will not complete. */
void ic__dec_abandon(ic__decoder *d);

#endif /* IC_DECODER_H */
