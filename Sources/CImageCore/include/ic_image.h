/*
 * ic_image.h — the decoded bitmap: premultiplied RGBA8, 64-byte aligned rows.
 *
 * An ic_image owns one pixel allocation holding every frame back to back
 * (frame i starts at pixels + i * frame_size). Large buffers come from an
 * anonymous mapping with transparent huge pages, which costs a fraction of the
 * page faults a fresh malloc of the same size does. Free with ic_image_free.
 */
#ifndef IC_IMAGE_H
#define IC_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"
#include "ic_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Row alignment of every ic_image, in bytes. */
#define IC_ROW_ALIGNMENT 64

/** Pixel layouts. ImageKit produces only premultiplied RGBA, 8 bits a sample. */
typedef enum ic_pixel_format {
    /** R, G, B, A bytes in memory order; colour already multiplied by alpha: p = (c*a + 127) / 255. */
    IC_PIXEL_RGBA8_PREMULTIPLIED = 1
} ic_pixel_format;

/** A decoded image. Fields are read-only for callers. */
typedef struct ic_image {
    /** Width of every frame, in pixels. */
    uint32_t width;
    /** Height of every frame, in pixels. */
    uint32_t height;
    /** Bytes from one row to the next; a multiple of IC_ROW_ALIGNMENT. */
    size_t stride;
    /** Bytes from one frame to the next: stride * height. */
    size_t frame_size;
    /** Number of frames (1 for still images). */
    uint32_t frame_count;
    /** Layout of the pixels. */
    ic_pixel_format pixel_format;
    /** Format of the bytes this image was decoded from (IC_FORMAT_UNKNOWN if made in memory). */
    ic_format source_format;
    /** Width of the source as stored in the file, before orientation and scaling. */
    uint32_t source_width;
    /** Height of the source as stored in the file, before orientation and scaling. */
    uint32_t source_height;
    /** EXIF orientation found in the source (1…8; 1 when absent). */
    uint8_t orientation;
    /** 1 if the orientation has been applied to these pixels, 0 if they are as stored. */
    uint8_t orientation_applied;
    /** 1 if every pixel of every frame is fully opaque. */
    uint8_t is_opaque;
    /** Animation loop count from the file (0 = forever); 0 for still images. */
    uint32_t loop_count;
    /** Per-frame display durations in milliseconds (frame_count entries), or NULL for stills. */
    uint32_t *frame_delays_ms;
    /** First byte of frame 0. */
    uint8_t *pixels;
    /** The source's ICC profile (see ic_image_icc_profile in ic_color.h), or NULL. */
    uint8_t *icc_profile;
    /** Bytes of icc_profile. */
    size_t icc_profile_size;
    /** Colour space of the source's profile (an ic_color_space; 0: none). */
    uint8_t icc_space;
    /** 1 if the source had a profile that was not used (unreadable, wrong space, too large). */
    uint8_t icc_ignored;
    /** 1 if the pixels were converted from the source's profile to sRGB. */
    uint8_t color_converted;

    /* Private to ImageKit. */
    size_t ic_alloc_size;
    int ic_alloc_kind;
    struct ic_pool *ic_pool;
} ic_image;

/**
 * Allocates an image of the given size, uninitialised pixels, frame delays zeroed
 * when frame_count > 1. Fails with IC_ERR_LIMIT_EXCEEDED when the byte size
 * overflows, or IC_ERR_OUT_OF_MEMORY.
 */
ic_status ic_image_create(uint32_t width, uint32_t height, uint32_t frame_count,
                          ic_image **out, ic_error *err);

/** Frees an image and its pixels. NULL is allowed. */
void ic_image_free(ic_image *image);

/** First byte of frame `index` (no bounds check). */
static inline uint8_t *ic_image_frame(const ic_image *image, uint32_t index) {
    return image->pixels + (size_t)index * image->frame_size;
}

/** Bytes of every frame together, padding included: frame_size * frame_count. */
static inline size_t ic_image_byte_count(const ic_image *image) {
    return image->frame_size * image->frame_count;
}

/**
 * Premultiplies `count` straight-alpha RGBA8 pixels in place with
 * p = (c*a + 127) / 255. Returns 1 if every pixel was opaque (nothing changed).
 */
int ic_premultiply_row(uint8_t *rgba, size_t count);

/**
 * Reverses premultiplication for `count` pixels from `src` into `dst` (may alias):
 * c = min(255, (p*255 + a/2) / a); pixels with a = 0 become 0,0,0,0.
 */
void ic_unpremultiply_row(uint8_t *dst, const uint8_t *src, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* IC_IMAGE_H */
