/*
 * ic_yuv_internal.h — YUV pictures to the sink, shared by the AVIF and HEIF decoders.
 *
 * Pictures are avifImage values (libavif's layout: planes, row bytes, depth, subsampling,
 * range and matrix); HEIF's planes from libheif are wrapped in one without a copy. The
 * conversion to RGBA8 is libavif's avifImageYUVToRGB (libyuv where it has a kernel). libavif is
 * loaded on first use (codecs/ic_avif_lib.h): callers have had ic__avif_load return IC_OK.
 */
#ifndef IC_YUV_INTERNAL_H
#define IC_YUV_INTERNAL_H

#include "../codecs/ic_avif_lib.h"

#include "ic_decoder.h"

/** A box-averaged copy of a picture for a thumbnail (see ic__yuv_shrink_begin). */
typedef struct ic__yuv_shrink {
    /** The box size: 1 (no averaging), 2, 4 or 8. */
    uint32_t den;
    /** The averaged picture, 4:4:4 (4:0:0 for monochrome), or NULL when den is 1. */
    avifImage *small;
    /** Column sums of one plane row. */
    uint16_t *sums;
    /** Bytes of `sums`. */
    size_t sums_size;
    /** Bytes reserved against the decoder's memory limit for `small`. */
    uint64_t small_bytes;
} ic__yuv_shrink;

/**
 * Plans the box average of an opaque `width` x `height` picture like `like` (depth, layout,
 * range and code points): the largest power of two up to 8 that leaves the planned region
 * at least twice the output size, and when that is more than 1, the 4:4:4 picture it is
 * averaged into, its memory reserved. `s` is always set; release it with ic__yuv_shrink_end.
 */
ic_status ic__yuv_shrink_begin(ic__decoder *d, const avifImage *like, ic__yuv_shrink *s);

/** Box-averages `img` (the size given to ic__yuv_shrink_begin) into s->small. */
void ic__yuv_shrink_run(const avifImage *img, const ic__yuv_shrink *s);

/** Frees and releases what ic__yuv_shrink_begin took. */
void ic__yuv_shrink_end(ic__decoder *d, ic__yuv_shrink *s);

/**
 * Converts `img` to RGBA8 into frame `f` of the sink: in place in direct mode, else in strips
 * of IC_SINK_ROWS rows through `view` (an empty avifImage the strips are set on). With
 * `alpha`, straight alpha is premultiplied by the sink; alpha flagged premultiplied is kept
 * (colour clamped to alpha) unless colour is converted.
 */
ic_status ic__yuv_convert(ic__decoder *d, const avifImage *img, avifImage *view, uint32_t f, bool alpha);

#endif
