/*
 * ic_image_internal.h — bitmaps and their buffers (image/): big-buffer
 * allocation, the pool's internals, image metadata and opacity. Not installed.
 */
#ifndef IC_IMAGE_INTERNAL_H
#define IC_IMAGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/ic_common_internal.h"
#include "ic_image.h"
#include "ic_pool.h"

/* ---- Big buffers: anonymous mappings with huge pages above a threshold (image.c). ---- */

/**
 * Allocates at least `size` bytes aligned to 64. Large sizes are mapped, taken
 * from `pool` when it has a fitting idle buffer (pool may be NULL). Sets *kind
 * and *capacity for ic__buffer_free.
 */
void *ic__buffer_alloc(ic_pool *pool, size_t size, int *kind, size_t *capacity);
/** Frees a buffer from ic__buffer_alloc: back to `pool` if it came with one, else to the system. */
void ic__buffer_free(ic_pool *pool, void *p, size_t capacity, int kind);

/** Row stride for a width: width * 4 rounded up to IC_ROW_ALIGNMENT; 0 on overflow. */
size_t ic__stride_for_width(uint32_t width);

/** Like ic_image_create, with the pixels from `pool` (may be NULL). */
ic_status ic__image_create_in(ic_pool *pool, uint32_t width, uint32_t height, uint32_t frame_count,
                             ic_image **out, ic_error *err);

/** Copies source format and size, orientation, loop count and frame delays from src to dst. */
void ic__image_copy_metadata(ic_image *dst, const ic_image *src);

/** Recomputes img->is_opaque from its pixels. */
void ic__image_update_opacity(ic_image *img);

/* ---- Pool internals (pool.c). ic__pool_take adds a reference on success; ic__pool_put drops one. ---- */

void *ic__pool_take(ic_pool *pool, size_t size, size_t *capacity);
void ic__pool_put(ic_pool *pool, void *p, size_t capacity);
void ic__pool_retain(ic_pool *pool);

/* ---- Pixels (premul.c). ---- */

/** c * a / 255 rounded to nearest, exact for c, a in 0...255 (the premultiply formula). */
static inline uint32_t ic__mul255(uint32_t c, uint32_t a) {
    uint32_t t = c * a + 128u;
    return (t + (t >> 8)) >> 8;
}

/** True if every one of `count` RGBA8 pixels has alpha 255. */
bool ic__pixels_opaque(const uint8_t *rgba, size_t count);

/**
 * Premultiplies `count` straight RGBA8 pixels into floats, four a pixel: the values
 * ic_premultiply_row would write, for the resampler. `rgba` is not changed.
 */
void ic__premultiply_to_float(const uint8_t *rgba, float *out, size_t count);

#endif /* IC_IMAGE_INTERNAL_H */
