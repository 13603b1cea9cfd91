/*
 * ic_internal.h — helpers shared by the C core's source files. Not installed.
 */
#ifndef IC_INTERNAL_H
#define IC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_decode.h"
#include "ic_error.h"
#include "ic_format.h"
#include "ic_image.h"
#include "ic_pool.h"
#include "ic_resize.h"

#if defined(__GNUC__)
#define IC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define IC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define IC_PRINTF(f, a)
#define IC_UNLIKELY(x) (x)
#endif

/** Fills err (if non-NULL) with code and a formatted message; returns code. */
ic_status ic_set_error(ic_error *err, ic_status code, const char *fmt, ...) IC_PRINTF(3, 4);

/** Bytes as MiB, for messages. */
double ic_mib(uint64_t bytes);

/** Clears err to IC_OK with an empty message. */
void ic_clear_error(ic_error *err);

/* ---- Big buffers: anonymous mappings with huge pages above a threshold. ---- */

/**
 * Allocates at least `size` bytes aligned to 64. Large sizes are mapped, taken
 * from `pool` when it has a fitting idle buffer (pool may be NULL). Sets *kind
 * and *capacity for ic_buffer_free.
 */
void *ic_buffer_alloc(ic_pool *pool, size_t size, int *kind, size_t *capacity);
/** Frees a buffer from ic_buffer_alloc: back to `pool` if it came with one, else to the system. */
void ic_buffer_free(ic_pool *pool, void *p, size_t capacity, int kind);

/** Like ic_image_create, with the pixels from `pool` (may be NULL). */
ic_status ic_image_create_in(ic_pool *pool, uint32_t width, uint32_t height, uint32_t frame_count,
                             ic_image **out, ic_error *err);

/* Pool internals (pool.c). ic_pool_take adds a reference on success; ic_pool_put drops one. */
void *ic_pool_take(ic_pool *pool, size_t size, size_t *capacity);
void ic_pool_put(ic_pool *pool, void *p, size_t capacity);
void ic_pool_retain(ic_pool *pool);

/** Copies source format and size, orientation, loop count and frame delays from src to dst. */
void ic_image_copy_metadata(ic_image *dst, const ic_image *src);

/** Recomputes dst->is_opaque from its pixels. */
void ic_image_update_opacity(ic_image *img);

/** True if every one of `count` RGBA8 pixels has alpha 255. */
bool ic_pixels_opaque(const uint8_t *rgba, size_t count);

/** Row stride for a width: width * 4 rounded up to IC_ROW_ALIGNMENT; 0 on overflow. */
size_t ic_stride_for_width(uint32_t width);

/* ---- Resampling (resample.c) and sizing (resize.c). ---- */

/** A source rectangle in input pixel units (fractional). */
typedef struct ic_rect {
    double x, y, w, h;
} ic_rect;

/** Output size and the source rectangle that maps onto it. */
typedef struct ic_geometry {
    uint32_t out_w, out_h;
    ic_rect crop;
} ic_geometry;

/**
 * Sizes a source of src_w x src_h for the box (0 = unconstrained side) and
 * mode; never larger than the source unless `upscale`.
 */
void ic_plan_geometry(uint32_t src_w, uint32_t src_h, uint32_t box_w, uint32_t box_h,
                      ic_resize_mode mode, bool upscale, ic_geometry *g);

/** A streaming resampler from in_w x in_h rows (crop region) to out_w x out_h. */
typedef struct ic_scaler ic_scaler;

/** Bytes ic_scaler_create will allocate for this geometry (for limit checks). */
size_t ic_scaler_bytes(uint32_t in_w, uint32_t in_h, const ic_rect *crop, uint32_t out_w,
                       uint32_t out_h);
ic_status ic_scaler_create(uint32_t in_w, uint32_t in_h, const ic_rect *crop, uint32_t out_w,
                           uint32_t out_h, ic_scaler **out, ic_error *err);
void ic_scaler_free(ic_scaler *s);
/** Bytes the scaler holds. */
size_t ic_scaler_size(const ic_scaler *s);
/** Starts a frame whose output rows go to dst (premultiplied RGBA8, dst_stride apart). */
void ic_scaler_begin_frame(ic_scaler *s, uint8_t *dst, size_t dst_stride);
/** Feeds premultiplied input row y; rows must come in increasing order (others are ignored). */
void ic_scaler_push(ic_scaler *s, uint32_t y, const uint8_t *row);
/** True once every output row of the frame has been written. */
bool ic_scaler_done(const ic_scaler *s);
/** First and last input rows the output depends on. */
uint32_t ic_scaler_first_row(const ic_scaler *s);
uint32_t ic_scaler_last_row(const ic_scaler *s);

/* ---- One decode in progress. ---- */

/** Rows a decoder may have written but not yet reported in resampling mode. */
#define IC_SINK_ROWS 16

/** A large working buffer of a decode (mapped or pooled when big, counted against the limit). */
typedef struct ic_dec_buffer {
    uint8_t *p;
    size_t size;
    size_t capacity;
    int kind;
} ic_dec_buffer;

/**
 * State shared by the format decoders and the row sink.
 *
 * A decoder reads its header and calls ic_dec_check_size (which also plans
 * the output size: a thumbnail or the full image), optionally asks how far
 * its codec may shrink on load, then calls ic_dec_begin with the size its
 * codec will produce. It then hands over rows top to bottom, frame by frame:
 * either written in place where ic_dec_row says and reported with
 * ic_dec_rows_done, or copied from its own buffer with ic_dec_put_rows.
 *
 * When the codec's size is the output size ("direct" mode) rows land in the
 * output image itself and may be written in any order. Otherwise the sink
 * premultiplies each row and streams it through the resampler, keeping only
 * IC_SINK_ROWS rows: rows must then come strictly in order.
 */
typedef struct ic_decoder {
    const uint8_t *data;
    size_t size;
    ic_decode_options opts;
    ic_error *err;
    ic_format format;

    /* Memory accounting of ImageKit's own buffers (and libpng's). */
    uint64_t mem_current;
    uint64_t mem_peak;

    /* Facts the format decoder found. */
    uint32_t source_width;
    uint32_t source_height;
    uint8_t orientation;
    uint32_t loop_count;

    /* The plan: output size and the source region it shows (stored orientation). */
    ic_geometry plan;

    /* The sink. */
    uint32_t codec_width;
    uint32_t codec_height;
    ic_scaler *scaler;
    uint64_t scaler_bytes;
    ic_dec_buffer scratch;
    size_t scratch_stride;
    uint32_t sink_frame; /* frame the scaler is filling, +1 (0: none yet) */

    /* Output. */
    ic_image *image;
    bool all_opaque;
} ic_decoder;

/** True once the caller's cancellation flag is set. */
bool ic_dec_cancelled(const ic_decoder *d);

/** Fails with IC_ERR_CANCELLED and a message naming the format. */
ic_status ic_dec_fail_cancelled(ic_decoder *d);

/**
 * Checks a size read from a header against the limits, before anything is
 * allocated — zero dimensions, max_pixels, max_frames, and max_memory_bytes
 * for the planned output plus `extra_bytes` of codec working memory — and
 * plans the output size (thumbnail options, scale-down limit).
 */
ic_status ic_dec_check_size(ic_decoder *d, uint32_t width, uint32_t height, uint32_t frames,
                            uint64_t extra_bytes);

/** True if the plan needs a resampled output (a thumbnail or a scale-down). */
bool ic_dec_plans_resize(const ic_decoder *d);

/**
 * The largest power-of-two reduction (1 ... max_denominator) a codec may apply
 * while decoding (sizes rounded up, as libjpeg and libwebp do), keeping the
 * planned region at least as large as the output. 1 when nothing is resized.
 */
uint32_t ic_dec_shrink_denominator(const ic_decoder *d, uint32_t max_denominator);

/** Counts `bytes` against max_memory_bytes; fails without side effects when over. */
ic_status ic_dec_reserve(ic_decoder *d, uint64_t bytes);
/** Returns bytes counted by ic_dec_reserve. */
void ic_dec_release(ic_decoder *d, uint64_t bytes);

/** malloc counted against the decode's memory limit; NULL with err set on failure. */
void *ic_dec_malloc(ic_decoder *d, size_t size);
/** Frees memory from ic_dec_malloc. */
void ic_dec_free(ic_decoder *d, void *p, size_t size);

/** A big working buffer (from the decode's pool when it has one), counted against the limit. */
ic_status ic_dec_buffer_alloc(ic_decoder *d, size_t size, ic_dec_buffer *buf);
/** Frees a buffer from ic_dec_buffer_alloc; a zeroed handle is allowed. */
void ic_dec_buffer_free(ic_decoder *d, ic_dec_buffer *buf);

/**
 * Starts the output: the codec will produce frames of width x height. Sets up
 * direct mode or the resampler, and allocates the output image.
 */
ic_status ic_dec_begin(ic_decoder *d, uint32_t width, uint32_t height, uint32_t frames);

/** True when rows land in the output image itself (no resampling). */
static inline bool ic_dec_is_direct(const ic_decoder *d) { return d->scaler == NULL; }

/** Where the decoder writes RGBA8 row y of frame `frame` (codec size). */
static inline uint8_t *ic_dec_row(ic_decoder *d, uint32_t frame, uint32_t y) {
    if (d->scaler) return d->scratch.p + (size_t)(y % IC_SINK_ROWS) * d->scratch_stride;
    return ic_image_frame(d->image, frame) + (size_t)y * d->image->stride;
}

/**
 * Reports rows [y, y + count) of `frame`, written at ic_dec_row. With
 * `straight_alpha` they are premultiplied first (fully opaque rows are left
 * alone). Without it they are final; a decoder whose final rows may hold
 * transparency says so with ic_dec_note_transparency.
 */
void ic_dec_rows_done(ic_decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                      bool straight_alpha);

/** Hands over rows [y, y + count) of `frame` from the decoder's own buffer. */
void ic_dec_put_rows(ic_decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                     const uint8_t *src, size_t stride, bool straight_alpha);

/** Marks output as not opaque, for decoders whose final rows may hold transparency. */
static inline void ic_dec_note_transparency(ic_decoder *d) { d->all_opaque = false; }

/** Completes the output after the format decoder succeeded; frees the sink. */
ic_status ic_dec_finish(ic_decoder *d);

/** Frees whatever the sink holds (after a failure). */
void ic_dec_sink_free(ic_decoder *d);

/* ---- Format decoders (one file each). ---- */

ic_status ic_jpeg_decode(ic_decoder *d);
ic_status ic_png_decode(ic_decoder *d);
ic_status ic_gif_decode(ic_decoder *d);
ic_status ic_webp_decode(ic_decoder *d);

ic_status ic_jpeg_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_png_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_gif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_webp_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);

/* ---- EXIF and orientation. ---- */

/** Orientation (1…8) from an EXIF TIFF block (the bytes after "Exif\0\0"); 1 if absent or bad. */
uint8_t ic_exif_orientation(const uint8_t *tiff, size_t size);

/** Replaces d->image by a copy with EXIF orientation `orientation` applied. */
ic_status ic_dec_apply_orientation(ic_decoder *d, uint8_t orientation);

#endif /* IC_INTERNAL_H */
