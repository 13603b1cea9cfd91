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

#if defined(__GNUC__)
#define IC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define IC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define IC_PRINTF(f, a)
#define IC_UNLIKELY(x) (x)
#endif

/** Fills err (if non-NULL) with code and a formatted message; returns code. */
ic_status ic_set_error(ic_error *err, ic_status code, const char *fmt, ...) IC_PRINTF(3, 4);

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

/** Row stride for a width: width * 4 rounded up to IC_ROW_ALIGNMENT; 0 on overflow. */
size_t ic_stride_for_width(uint32_t width);

/* ---- One decode in progress. ---- */

/**
 * State shared by the format decoders and the row sink. A decoder reads its
 * header, calls ic_dec_check_size, then ic_dec_begin with the size it will
 * produce, writes rows where ic_dec_row says, and reports them with
 * ic_dec_rows_done, which premultiplies them.
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
 * allocated: zero dimensions, max_pixels, max_frames and max_memory_bytes
 * (counting `extra_bytes` of codec working memory).
 */
ic_status ic_dec_check_size(ic_decoder *d, uint32_t width, uint32_t height, uint32_t frames,
                            uint64_t extra_bytes);

/** Counts `bytes` against max_memory_bytes; fails without side effects when over. */
ic_status ic_dec_reserve(ic_decoder *d, uint64_t bytes);
/** Returns bytes counted by ic_dec_reserve. */
void ic_dec_release(ic_decoder *d, uint64_t bytes);

/** malloc counted against the decode's memory limit; NULL with err set on failure. */
void *ic_dec_malloc(ic_decoder *d, size_t size);
/** Frees memory from ic_dec_malloc. */
void ic_dec_free(ic_decoder *d, void *p, size_t size);

/** Allocates the output image (frames of width x height). */
ic_status ic_dec_begin(ic_decoder *d, uint32_t width, uint32_t height, uint32_t frames);

/** Where the decoder writes straight-alpha RGBA8 row y of frame `frame`. */
static inline uint8_t *ic_dec_row(ic_decoder *d, uint32_t frame, uint32_t y) {
    return ic_image_frame(d->image, frame) + (size_t)y * d->image->stride;
}

/**
 * Reports rows [y, y + count) of `frame` as written. With `straight_alpha`
 * they are premultiplied in place (rows that are fully opaque are left
 * alone); otherwise they are final, and a decoder whose rows may hold
 * transparency says so with ic_dec_note_transparency.
 */
void ic_dec_rows_done(ic_decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                      bool straight_alpha);

/** Marks output as not opaque, for decoders that premultiply themselves. */
static inline void ic_dec_note_transparency(ic_decoder *d) { d->all_opaque = false; }

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
