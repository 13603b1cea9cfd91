/*
 * ic_decode_internal.h — one decode in progress (decode/): the state the
 * format decoders share with the row sink, the sink's interface, the format
 * decoders and EXIF. Not installed.
 */
#ifndef IC_DECODE_INTERNAL_H
#define IC_DECODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../color/ic_color_internal.h"
#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "../resize/ic_resize_internal.h"
#include "ic_decode.h"
#include "ic_format.h"
#include "ic_jpeg_testing.h"
#include "ic_png_testing.h"

/* ---- One decode in progress. ---- */

/** Rows a decoder may have written but not yet reported in resampling mode. */
#define IC_SINK_ROWS 16

/** Rows the colour helper thread converts at a time (see ic_decoder.helper). */
#define IC_HELPER_ROWS 32

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
 * output image itself and may be written in any order (each reported once). Otherwise the sink
 * streams each row through the resampler (which premultiplies straight rows as it reads
 * them), keeping only IC_SINK_ROWS rows: rows must then come strictly in order.
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

    /* The size stored in the file: written by ic_dec_check_size only. */
    uint32_t source_width;
    uint32_t source_height;

    /* Facts the format decoder found. */
    uint8_t orientation;
    /* The codec applied the orientation itself (libheif, libjxl): decode.c does not. */
    bool codec_oriented;
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

    /* Embedded profile and conversion (color/). */
    ic_color_state color;

    /* PNG decoder choice (tests only; ic_decode uses IC_PNG_PATH_AUTO). */
    ic_png_path png_path;
    /* JPEG decoder choice (tests only; ic_decode uses IC_JPEG_PATH_AUTO). */
    ic_jpeg_path jpeg_path;
    /* With use_helper_thread, in direct mode: a helper thread converts (and premultiplies)
     * the rows reported in order while the codec decodes the next ones; the caller joins in
     * for what is left at the end. Every row goes through the same code either way. */
    ic_range_helper *helper;
    bool helper_straight;   /* the handed-over rows need premultiplying */
    int helper_transparent; /* set (atomically) when such a row was not opaque */
    uint32_t helper_rows;   /* rows a second decompression decoded (jpeg.c's band) */
    /* A codec-size frame held until the decode ends (ic_dec_frame_alloc), and with
     * use_helper_thread, in resampling mode, the helper thread that feeds the rows of it
     * handed over in order to the resampler while the codec decodes on: the scaler, the
     * scratch rows and sink_frame are then the helper's alone until it is joined. */
    ic_dec_buffer frame;
    size_t frame_stride;
    ic_range_helper *resampler;
    bool resampler_straight; /* the handed-over rows need premultiplying */
    uint32_t resampled_rows; /* output rows the resampler has written (atomic) */
} ic_decoder;

/** True once the caller's cancellation flag is set. */
bool ic_dec_cancelled(const ic_decoder *d);

/** Fails with IC_ERR_CANCELLED and a message naming the format. */
ic_status ic_dec_fail_cancelled(ic_decoder *d);

/**
 * Checks a size read from a header against the limits, before anything is
 * allocated — zero dimensions, max_pixels, max_frames, and max_memory_bytes
 * for the planned output plus `extra_bytes` of codec working memory — then
 * records width x height as the source size and plans the output size
 * (thumbnail options, scale-down limit). Every decoder calls it before
 * ic_dec_begin; it is the only writer of the source size.
 */
ic_status ic_dec_check_size(ic_decoder *d, uint32_t width, uint32_t height, uint32_t frames,
                            uint64_t extra_bytes);

/** True if the plan needs a resampled output (a thumbnail or a scale-down). */
bool ic_dec_plans_resize(const ic_decoder *d);
/** True when a FILL thumbnail's window is cut after the decode (a gravity other than the
 *  centre, or smart): the plan then covers the box without cutting. */
bool ic_dec_cuts_window(const ic_decoder *d);

/**
 * The largest power-of-two reduction (1 ... max_denominator) a codec may apply
 * while decoding (sizes rounded up, as libjpeg and libwebp do), keeping the
 * planned region at least as large as the output. 1 when nothing is resized.
 */
uint32_t ic_dec_shrink_denominator(const ic_decoder *d, uint32_t max_denominator);

/** Counts `bytes` against max_memory_bytes; fails without side effects when over. */
ic_status ic_dec_reserve(ic_decoder *d, uint64_t bytes);
/** ic_dec_reserve for memory the decode can do without: false, with no error set, when over. */
bool ic_dec_try_reserve(ic_decoder *d, uint64_t bytes);
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

/**
 * Hands over rows [y, y + count) of `frame` from the decoder's own buffer (only read). A
 * whole frame handed over at once (the only one, large enough, needing no colour
 * conversion) is resampled with use_helper_thread in two bands of output rows on two threads.
 */
void ic_dec_put_rows(ic_decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                     const uint8_t *src, size_t stride, bool straight_alpha);

/**
 * A whole codec-size frame, `height` rows `stride` apart from *rows, for a decoder that
 * decodes a picture into a buffer of its own before or while handing it over (a buffer
 * from ic_dec_buffer_alloc that the sink holds until the decode ends, ic_dec_finish or
 * ic_dec_sink_free, so its rows can still be read after the decoder returns).
 */
ic_status ic_dec_frame_alloc(ic_decoder *d, size_t stride, uint32_t height, uint8_t **rows);

/**
 * Hands over rows [y, y + count) of frame 0 from the frame of ic_dec_frame_alloc; the
 * decoder does not write them again (before ic_dec_frame_wait). As ic_dec_put_rows, except
 * that with use_helper_thread, when a large enough still is resampled and its rows come in
 * order from row 0 in more than one piece, a helper thread feeds them to the resampler as
 * they come (same pixels) while the decoder goes on; ic_dec_finish waits for it.
 */
void ic_dec_put_frame_rows(ic_decoder *d, uint32_t y, uint32_t count, bool straight_alpha);

/**
 * Waits until the rows handed over with ic_dec_put_frame_rows have been read (the helper
 * thread has fed them and ended; later rows are fed on the calling thread): before the
 * decoder writes the frame again.
 */
void ic_dec_frame_wait(ic_decoder *d);

/**
 * Output rows of frame 0 complete so far, top down, given the codec rows delivered (for
 * partial images): rows a helper thread is still converting or resampling are not.
 */
uint32_t ic_dec_rows_complete(const ic_decoder *d, uint32_t codec_rows);

/** Marks output as not opaque, for decoders whose final rows may hold transparency. */
static inline void ic_dec_note_transparency(ic_decoder *d) { d->all_opaque = false; }

/** Completes the output after the format decoder succeeded; frees the sink. */
ic_status ic_dec_finish(ic_decoder *d);

/** Frees whatever the sink holds (after a failure). */
void ic_dec_sink_free(ic_decoder *d);

/**
 * Undoes ic_dec_begin and the rows written since: frees the output, the resampler, the
 * frame of ic_dec_frame_alloc and any helper thread (its rows are dropped), so that another
 * decoder of the same file can begin again (jpeg.c, when its DC-only decoder gives way to
 * libjpeg mid-image).
 */
void ic_dec_unbegin(ic_decoder *d);

/** Starts `d` with `options` (NULL: the defaults), reporting failures to `err`. */
void ic_dec_init(ic_decoder *d, const ic_decode_options *options, ic_error *err);

/**
 * Ends a decode whose format decoder returned `st`: completes the sink, applies
 * the EXIF orientation and hands the image to *out with `stats` (may be NULL),
 * or frees everything and returns the error. ic_decode and the incremental
 * decode end here alike.
 */
ic_status ic_dec_complete(ic_decoder *d, ic_status st, ic_image **out, ic_decode_stats *stats);

/** Frees the output and colour state of a decode that will not complete. */
void ic_dec_abandon(ic_decoder *d);

/* ---- Format decoders (one file each). ---- */

ic_status ic_jpeg_decode(ic_decoder *d);
ic_status ic_png_decode(ic_decoder *d);
ic_status ic_gif_decode(ic_decoder *d);
ic_status ic_webp_decode(ic_decoder *d);
ic_status ic_avif_decode(ic_decoder *d);
ic_status ic_heif_decode(ic_decoder *d);
ic_status ic_jxl_decode(ic_decoder *d);

ic_status ic_jpeg_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_png_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_gif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_webp_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_avif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_heif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_jxl_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);

/* ---- Incremental engines (the format files; driven by incremental.c). ---- */

/**
 * A format decoder that consumes its input piece by piece. The decoder `d`
 * it was made for has d->data NULL and d->size the bytes fed so far; the
 * engine writes rows into d's sink as they decode. Every call returns IC_OK
 * while the decode goes on or has finished, or the decode's final error.
 */
typedef enum ic_inc_phase {
    /** Still reading the header: the caller keeps a copy of the bytes fed so far. */
    IC_INC_HEADER,
    /** The header is in and the engine decodes the rest: bytes fed are released. */
    IC_INC_STREAMING,
    /**
     * The engine decodes the rest as it arrives, but the caller keeps every byte:
     * should the engine fail on the data (corrupt, truncated, unsupported), the
     * whole body goes to ic_decode at finish instead, so a malformed file gets
     * exactly ic_decode's answer even where the engine's reader is stricter.
     */
    IC_INC_STREAMING_KEPT,
    /** The engine cannot decode this file piece by piece: ic_decode on the whole body. */
    IC_INC_WHOLE_BODY,
} ic_inc_phase;

typedef struct ic_inc_engine {
    /** Consumes `size` more bytes (the engine keeps what it has not consumed). */
    ic_status (*feed)(void *state, const uint8_t *data, size_t size);
    /** The input is complete: decodes the rest, or fails as the whole-buffer decoder would. */
    ic_status (*end)(void *state);
    /** Where the engine is (see ic_inc_phase). */
    ic_inc_phase (*phase)(const void *state);
    /** Input bytes held right now. */
    uint64_t (*buffered)(const void *state);
    /** Codec rows of frame 0 delivered to the sink so far, top down (0 before ic_dec_begin). */
    uint32_t (*rows)(const void *state);
    /** Releases the codec (not d's output). */
    void (*free)(void *state);
} ic_inc_engine;

/** A JPEG engine for `d` (every option streams; arithmetic-coded files, which libjpeg cannot
 * suspend, ask for the whole body). */
ic_status ic_jpeg_inc_new(ic_decoder *d, const ic_inc_engine **engine, void **state);

/**
 * Bytes of a PNG up to and including the first IDAT chunk's length and type
 * (everything ic_png_decode reads before the pixels: eXIf, acTL), or 0 when
 * `size` bytes do not reach it yet. SIZE_MAX when the chunk walk cannot reach
 * an IDAT (a bad length, IEND first): the file is left to ic_decode.
 */
size_t ic_png_header_size(const uint8_t *data, size_t size);

/**
 * A PNG engine for `d` (png_stream.c): still PNGs and APNGs read as stills
 * (not all_frames with an acTL: the caller decides with ic_apng_frame_count on
 * the header). Its first feed must hold ic_png_header_size bytes at least;
 * it streams with the body kept (IC_INC_STREAMING_KEPT), Adam7 files ask for
 * the whole body. d->orientation must be set from the header already.
 */
ic_status ic_png_inc_new(ic_decoder *d, const ic_inc_engine **engine, void **state);

/**
 * Whether a WebP whose first `size` bytes are `data` streams: IC_INC_HEADER while
 * its headers (up to the image data's own) are not all in, IC_INC_STREAMING_KEPT
 * once they are and it is a still, IC_INC_WHOLE_BODY for an animation or headers
 * libwebp refuses (ic_decode then decides).
 */
ic_inc_phase ic_webp_inc_phase(const uint8_t *data, size_t size);

/**
 * A WebP engine for `d` (a still: ic_webp_inc_phase said so). It streams with the
 * body kept and reads that body, *body and *body_size, which the caller keeps up
 * to date before each feed and end (the buffer may move between calls).
 */
ic_status ic_webp_inc_new(ic_decoder *d, const uint8_t *const *body, const size_t *body_size,
                          const ic_inc_engine **engine, void **state);

/**
 * A GIF engine for `d` (gif_stream.c): the first frame (not all_frames: the
 * caller decides), decoded by ic_gif_decode's block walk and LZW decoder as the
 * bytes arrive. It waits for the screen descriptor and the global colour table
 * (IC_INC_HEADER), checks the limits as ic_gif_decode does, then streams with
 * the body kept and reads that body, *body and *body_size, which the caller
 * keeps up to date before each feed and end (the buffer may move between calls).
 */
ic_status ic_gif_inc_new(ic_decoder *d, const uint8_t *const *body, const size_t *body_size,
                         const ic_inc_engine **engine, void **state);

/* ---- APNG (apng.c, on png.c's reader). ---- */

/**
 * The number of frames an APNG's acTL announces, or 0 when the file is a still
 * PNG to ImageKit: no acTL before the first IDAT, more than one, or one that
 * announces 0 or more than 2^31 frames (Pillow reads those files as stills too).
 * Reads chunk headers only.
 */
uint32_t ic_apng_frame_count(const uint8_t *data, size_t size);

/**
 * Decodes every frame of an APNG (ic_apng_frame_count > 0) composited on the
 * canvas; ic_png_decode calls it when all_frames is set.
 */
ic_status ic_apng_decode(ic_decoder *d);

/**
 * Decodes a complete PNG held in memory (an APNG frame re-wrapped by apng.c),
 * `width` x `height` pixels, to straight RGBA8 rows `stride` bytes apart at
 * `out`, with ic_png_decode's transforms. Chunk CRCs are not checked (apng.c
 * checks the originals). Looks at the cancel flag every 64 rows.
 */
ic_status ic_png_decode_rgba(ic_decoder *d, const uint8_t *png_data, size_t size, uint8_t *out,
                             size_t stride, uint32_t width, uint32_t height);

/* ---- EXIF (exif.c). ---- */

/** Orientation (1…8) from an EXIF TIFF block (the bytes after "Exif\0\0"); 1 if absent or bad. */
uint8_t ic_exif_orientation(const uint8_t *tiff, size_t size);

/**
 * Orientation (1…8) from a PNG's eXIf chunk, if one comes before the first
 * IDAT (it must be known before the pixels, to plan a thumbnail); 1 otherwise.
 */
uint8_t ic_png_exif_orientation(const uint8_t *png, size_t size);

/**
 * Orientation (1…8) of a HEIF file's primary item from its irot and imir properties
 * (heif_boxes.c); 1 when it has none or the boxes cannot be read.
 */
uint8_t ic_heif_orientation(const uint8_t *data, size_t size);

/**
 * Loads libde265 and registers ImageKit's HEVC decoder with libheif (heif_hevc.c: libde265,
 * refusing pictures it reports damaged), once per process; after ic_heif_load. IC_OK, or
 * IC_ERR_UNSUPPORTED_FORMAT with the reason.
 */
ic_status ic_heif_hevc_load(const char *format, ic_error *err);

/** How many items (infe entries of version 2 or 3) a HEIF file's iinf lists. */
uint64_t ic_heif_item_count(const uint8_t *data, size_t size);

/** The picture size and chroma format (0 4:0:0, 1 4:2:0, 2 4:2:2, 3 4:4:4) an HEVC SPS
 *  declares, and the size of what a decoder puts out (less the conformance window; 0 when
 *  the window's offsets reach past the picture). */
typedef struct ic_hevc_picture {
    uint32_t width;
    uint32_t height;
    uint32_t visible_width;
    uint32_t visible_height;
    uint8_t chroma_format;
} ic_hevc_picture;

/** Bytes of an SPS NAL unit ic_hevc_sps_picture reads at most. */
#define IC_HEVC_SPS_BYTES 256

/**
 * The picture an HEVC SPS NAL unit (with its 2-byte header) declares, read as libde265
 * reads it (hevc_sps.c); false when `nal` is not an SPS or libde265 would refuse it.
 */
bool ic_hevc_sps_picture(const uint8_t *nal, size_t size, ic_hevc_picture *out);

/** How deep images may derive from derived images, or carry auxiliary images (an alpha) that
 *  do: libheif 1.15 follows both without looking for a cycle (a grid that is its own tile, or
 *  two images each the other's alpha, recurse until the stack overflows); a real file goes two
 *  or three deep (an identity over a grid whose alpha is a grid of tiles). */
#define IC_HEIF_MAX_DERIVATION_DEPTH 4

/** Images ic_heif_scan_items visits in all: far above a real file's (a grid has at most
 *  256 x 256 tiles), and a bound on the scan's own time. */
#define IC_HEIF_MAX_DERIVATION_VISITS (1u << 18)

/** What ic_heif_scan_items found. */
typedef enum ic_heif_derived_status {
    IC_HEIF_DERIVED_OK,
    /** The primary item is a grid or overlay whose data cannot be read. */
    IC_HEIF_DERIVED_UNREADABLE,
    /** Images derive or carry auxiliary images deeper than IC_HEIF_MAX_DERIVATION_DEPTH (a cycle). */
    IC_HEIF_DERIVED_TOO_DEEP,
    /** The derived images refer to more than IC_HEIF_MAX_DERIVATION_VISITS images in all. */
    IC_HEIF_DERIVED_TOO_MANY,
    /** A grid's tiles (an overlay's inputs) decode far more pixels than its canvas shows. */
    IC_HEIF_DERIVED_OVERDRAWN,
    /** A grid's tiles would not write every pixel of its canvas (heif_boxes.c, grid_covered). */
    IC_HEIF_DERIVED_UNCOVERED,
    /** No memory for the tables of items the scan sorts. */
    IC_HEIF_DERIVED_NO_MEMORY,
} ic_heif_derived_status;

/** The derived images of a HEIF file, as ic_heif_scan_items reads them. */
typedef struct ic_heif_derived {
    /** The largest canvas a grid or overlay declares (0 x 0 when none does). */
    uint32_t largest_width;
    uint32_t largest_height;
    /** For TOO_DEEP, OVERDRAWN and UNCOVERED: the item; for OVERDRAWN also its inputs and the
     *  pixels they decode; for both its canvas. */
    uint32_t item;
    uint32_t inputs;
    uint64_t decoded_pixels;
    uint32_t canvas_width;
    uint32_t canvas_height;
} ic_heif_derived;

/** What ic_heif_scan_items reads of a HEIF file's items. */
typedef struct ic_heif_scan {
    /** An item is AV1-coded (an iinf entry of type av01). */
    bool has_av1;
    /** The largest picture (in samples) any HEVC SPS in the file declares, in an hvcC property
     *  or in an hvc1 item's data, when has_picture: libde265 allocates each picture it decodes
     *  at its SPS's size, whatever the item's ispe says. */
    bool has_picture;
    ic_hevc_picture picture;
    /** The derived images. */
    ic_heif_derived derived;
} ic_heif_scan;

/**
 * Reads a HEIF file's items once (heif_boxes.c), indexed by id: whether one is AV1-coded,
 * the largest HEVC picture, and every derived image (grid, overlay 'iovl', identity 'iden'):
 * the largest canvas one declares, which libheif 1.15 allocates before it checks it against
 * the item's ispe (an overlay can be the primary image's alpha), and, in the pixels libde265
 * decodes (each input's SPS picture), what decoding each costs. libheif 1.15 follows
 * derivations without a cycle check and decodes every tile a grid lists: the statuses say
 * what must not reach it (has_av1 and the picture are read whatever the status, but for
 * IC_HEIF_DERIVED_NO_MEMORY).
 */
ic_heif_derived_status ic_heif_scan_items(const uint8_t *data, size_t size, ic_heif_scan *out);

/** How many file-level (top-level) meta boxes a HEIF file has, up to where its boxes end or break. */
unsigned ic_heif_meta_boxes(const uint8_t *data, size_t size);

/** Orientation (1…8) from a WebP's EXIF chunk, if its VP8X header announces one; 1 otherwise. */
uint8_t ic_webp_exif_orientation(const uint8_t *webp, size_t size);

#endif /* IC_DECODE_INTERNAL_H */
