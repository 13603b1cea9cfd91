/*
 * ic_decode.h — decoding JPEG, PNG (and APNG), GIF, WebP, AVIF (libavif: stills, grids and
 * sequences), HEIF/HEIC (libheif, primary image) and JPEG XL (libjxl) to premultiplied RGBA8.
 * SDR only: HDR transfer functions are not tone-mapped.
 *
 * Limits are checked from the header before any pixel memory is allocated,
 * so a file that claims 100000 x 100000 pixels costs microseconds and an
 * error naming the size and the limit. Codec errors never escape as
 * longjmp/abort: every failure is an ic_status with a sentence.
 */
#ifndef IC_DECODE_H
#define IC_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ic_color.h"
#include "ic_error.h"
#include "ic_format.h"
#include "ic_image.h"
#include "ic_pool.h"
#include "ic_resize.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Resource limits for one decode. A value of 0 means "no limit" for that field. */
typedef struct ic_limits {
    /** Largest source frame, in pixels (width * height as stored). Default 64 Mi. */
    uint64_t max_pixels;
    /** Most frames an animation may have. Default 1000. */
    uint32_t max_frames;
    /** Largest input, in bytes. Default 256 MiB. */
    uint64_t max_input_bytes;
    /**
     * Most memory one decode may hold: the output of every frame plus working
     * buffers (codec coefficient buffers and canvases included). Default 768 MiB.
     */
    uint64_t max_memory_bytes;
} ic_limits;

/** Default for ic_limits.max_pixels: 64 Mi pixels (256 MiB as RGBA8). */
#define IC_DEFAULT_MAX_PIXELS (64ull * 1024 * 1024)
/** Default for ic_limits.max_frames. */
#define IC_DEFAULT_MAX_FRAMES 1000u
/** Default for ic_limits.max_input_bytes: 256 MiB. */
#define IC_DEFAULT_MAX_INPUT_BYTES (256ull * 1024 * 1024)
/** Default for ic_limits.max_memory_bytes: 768 MiB. */
#define IC_DEFAULT_MAX_MEMORY_BYTES (768ull * 1024 * 1024)

/** Options for ic_decode. Initialise with ic_decode_options_init. */
typedef struct ic_decode_options {
    /** Resource limits. */
    ic_limits limits;
    /**
     * 0 (default): frame 0 only. 1: every frame of an animation (GIF, animated WebP,
     * APNG, AVIF sequence, JPEG XL), composited (an AVIF sequence's frames are whole pictures).
     * An APNG's frame 0 alone is its IDAT image; all its frames
     * are the fcTL frames (an IDAT image without an fcTL is not one of them).
     */
    int all_frames;
    /**
     * 0 (default): apply the EXIF orientation (JPEG APP1, PNG eXIf before IDAT, WebP EXIF),
     * AVIF irot/imir (mapped to the orientation they equal), a HEIF's irot/imir (applied by
     * libheif; EXIF in a HEIF is not applied on top) or a JPEG XL's orientation (applied by
     * libjxl). 1: return pixels as stored (HEIF: libheif's ignore_transformations, which leaves
     * out the clap crop too).
     */
    int keep_orientation;
    /**
     * Thumbnail box in pixels, after orientation: shrink on load so the output
     * fits, fills or matches (thumbnail_mode) thumbnail_width x thumbnail_height.
     * A side of 0 is unconstrained; both 0 (default) decodes at full size.
     */
    uint32_t thumbnail_width;
    uint32_t thumbnail_height;
    /**
     * IC_RESIZE_FIT (default): fit inside the box. IC_RESIZE_FILL: fill it exactly (scale to
     * cover, crop the centre). IC_RESIZE_STRETCH: scale each axis to the box.
     */
    ic_resize_mode thumbnail_mode;
    /**
     * With IC_RESIZE_FILL and both box sides: where the window is cut from the upright
     * picture (ic_gravity_place). The centre (the default, all zero) is cut in the source
     * before resampling; any other placement resamples to cover the box and then cuts the
     * window from that on whole pixels.
     */
    ic_gravity thumbnail_gravity;
    /** 1: with IC_RESIZE_FILL and both box sides, the window is chosen by
     *  ic_attention_window in the covering thumbnail instead of by thumbnail_gravity. */
    int thumbnail_smart;
    /** 1: a thumbnail may be larger than the source. Default 0: never upscale. */
    int allow_upscale;
    /**
     * If a decoded frame would exceed this many bytes (width * height * 4), scale
     * it down, keeping the aspect ratio, until it fits. 0 (default): no limit.
     */
    uint64_t scale_down_limit_bytes;
    /**
     * Optional cancellation flag: when another thread stores a non-zero value
     * (see ic_cancel_flag_set) the decode stops soon with IC_ERR_CANCELLED.
     */
    const int *cancel_flag;
    /** Optional pool the output's pixel buffer comes from and returns to (NULL: none). */
    ic_pool *pool;
    /**
     * 1: the decode may run part of its work on one helper thread of its own: lossy WebP
     * (libwebp's use_threads: loop filtering, scaling and colour conversion on a second
     * thread), and the conversion to sRGB of a full-size decode with an ICC profile (rows
     * converted on a second thread, 32 at a time, while the codec decodes the next ones;
     * the pixels are the same as on one thread), and a full-size decode of a large (2 MP or
     * more) sequential JPEG needing no conversion (its bottom third decoded by a second
     * decompression that skips the rows above: about a third more CPU time; same pixels,
     * same failures), and a thumbnail reading 1 MP or more (resampled in two bands of output
     * rows, or, for a WebP decoded in steps, row by row as libwebp finishes them; same
     * pixels). It cuts the latency of a lone decode for more CPU time; a caller whose cores
     * are all busy loses throughput to it. Default 0: the calling thread only.
     */
    int use_helper_thread;
    /**
     * Optional, with use_helper_thread: when another thread stores a non-zero value (see
     * ic_cancel_flag_set), helper work that repeats the caller's is given up — a JPEG's
     * helper that is still skipping the rows above its band stops (checked every few rows
     * of blocks), and the calling thread decodes those rows itself. Same pixels and
     * failures. For a caller whose other work may start during a decode (a worker pool
     * that gave a lone decode the helper): set it when a second job arrives.
     */
    const int *helper_yield_flag;
    /**
     * IC_COLOR_SRGB (default): convert images with an embedded ICC profile to sRGB.
     * IC_COLOR_RAW: keep the source's values. See ic_color.h for what is applied.
     */
    ic_color_mode color_mode;
} ic_decode_options;

/** What a decode cost, for tests and metrics. */
typedef struct ic_decode_stats {
    /** Peak bytes held by ImageKit's own buffers during the decode (output included). */
    uint64_t peak_bytes;
    /** Width the codec produced before any resampling. */
    uint32_t codec_width;
    /** Height the codec produced before any resampling. */
    uint32_t codec_height;
    /**
     * Rows a second decompression on the helper thread decoded (a JPEG's bottom band,
     * use_helper_thread); 0 when there was none or it gave its rows back (helper_yield_flag).
     */
    uint32_t helper_rows;
} ic_decode_stats;

/** Facts read from the headers alone (no pixel decoding). */
typedef struct ic_info {
    /** Detected format. */
    ic_format format;
    /** Width as stored (for animations: the canvas). */
    uint32_t width;
    /** Height as stored (for animations: the canvas). */
    uint32_t height;
    /** Frame count (1 for stills). */
    uint32_t frame_count;
    /** EXIF orientation (1…8; 1 when absent; AVIF: irot/imir as an orientation). */
    uint8_t orientation;
    /** 1 if the format declares an alpha channel or a transparent colour. */
    uint8_t has_alpha;
    /** Bits per sample as stored (8 for GIF and WebP). */
    uint8_t bit_depth;
    /** 1 for progressive JPEG, interlaced PNG or GIF (any frame), layered (progressive) AVIF. */
    uint8_t is_progressive;
    /** 1 if the file embeds an ICC profile (JPEG APP2, PNG iCCP, WebP ICCP, AVIF or HEIF colr). */
    uint8_t has_icc_profile;
    /** The profile's colour space (an ic_color_space; IC_COLOR_SPACE_NONE without one). */
    uint8_t icc_space;
    /** The profile's size in bytes (0 without one). */
    uint32_t icc_size;
} ic_info;

/** Fills `limits` with the defaults. */
void ic_limits_init(ic_limits *limits);

/** Fills `options` with the defaults (default limits, first frame, orientation applied). */
void ic_decode_options_init(ic_decode_options *options);

/**
 * Decodes `data` to a premultiplied RGBA8 image.
 * `options` may be NULL for the defaults; `stats` may be NULL.
 * On success *out owns a new image (free with ic_image_free); on failure *out is NULL.
 */
ic_status ic_decode(const uint8_t *data, size_t size, const ic_decode_options *options,
                    ic_image **out, ic_decode_stats *stats, ic_error *err);

/**
 * Reads format, size, frames and orientation from the headers, decoding no pixels.
 * The size of an image beyond the decode limits is read, but a HEIF file with more items than
 * an image within the default limits needs fails with IC_ERR_LIMIT_EXCEEDED, as its decode
 * would (libheif reads items in time that grows with their square).
 */
ic_status ic_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);

/** Sets a cancellation flag with release ordering (for ic_decode_options.cancel_flag). */
void ic_cancel_flag_set(int *flag, int value);

/** Reads a cancellation flag with acquire ordering, as the decoders do. */
int ic_cancel_flag_get(const int *flag);

#ifdef __cplusplus
}
#endif

#endif /* IC_DECODE_H */
