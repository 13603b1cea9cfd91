/*
 * ic_resize_internal.h — sizing a picture for a box (resize.c) and the
 * streaming resampler (resample.c), shared with the decoders' row sink
 * (resize/). Not installed.
 */
#ifndef IC_RESIZE_INTERNAL_H
#define IC_RESIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/ic_common_internal.h"
#include "ic_resize.h"

/** A source rectangle in input pixel units (fractional). */
typedef struct ic__rect {
    double x, y, w, h;
} ic__rect;

/** Output size and the source rectangle that maps onto it. */
typedef struct ic__geometry {
    uint32_t out_w, out_h;
    ic__rect crop;
} ic__geometry;

/**
 * Sizes a source of src_w x src_h for the box (0 = unconstrained side) and
 * mode; never larger than the source unless `upscale`.
 */
void ic__plan_geometry(uint32_t src_w, uint32_t src_h, uint32_t box_w, uint32_t box_h,
                      ic_resize_mode mode, bool upscale, ic__geometry *g);

/**
 * ic__plan_geometry with FILL's window placed by `gravity` (ic__plan_geometry: the centre);
 * with `gravity` NULL, FILL covers the box and cuts nothing.
 */
void ic__plan_geometry_placed(uint32_t src_w, uint32_t src_h, uint32_t box_w, uint32_t box_h,
                             ic_resize_mode mode, bool upscale, const ic_gravity *gravity, ic__geometry *g);

/** A streaming resampler from in_w x in_h rows (crop region) to out_w x out_h. */
typedef struct ic__scaler ic__scaler;

/** Bytes ic__scaler_create will allocate for this geometry (for limit checks). */
size_t ic__scaler_bytes(uint32_t in_w, uint32_t in_h, const ic__rect *crop, uint32_t out_w,
                       uint32_t out_h);
ic_status ic__scaler_create(uint32_t in_w, uint32_t in_h, const ic__rect *crop, uint32_t out_w,
                           uint32_t out_h, ic__scaler **out, ic_error *err);
void ic__scaler_free(ic__scaler *s);
/** Starts a frame whose output rows go to dst (premultiplied RGBA8, dst_stride apart). */
void ic__scaler_begin_frame(ic__scaler *s, uint8_t *dst, size_t dst_stride);
/** Feeds premultiplied input row y; rows must come in increasing order (others are ignored). */
void ic__scaler_push(ic__scaler *s, uint32_t y, const uint8_t *row);
/** ic__scaler_push for a straight-alpha row, premultiplied as it is read (ic__premultiply_to_float). */
void ic__scaler_push_straight(ic__scaler *s, uint32_t y, const uint8_t *row);
/** True once every output row of the frame has been written. */
bool ic__scaler_done(const ic__scaler *s);
/** Output rows of the frame written so far (top down; for partial images). */
uint32_t ic__scaler_rows_written(const ic__scaler *s);
/**
 * A second scaler for the same geometry that shares the banks of `s` (which must outlive
 * it) and has work rows of its own, so two threads can run bands of one frame at once.
 * Freed with ic__scaler_free.
 */
ic_status ic__scaler_fork(const ic__scaler *s, ic__scaler **out, ic_error *err);
/** Bytes ic__scaler_fork allocates for a fork of `s` (for limit checks). */
size_t ic__scaler_fork_bytes(const ic__scaler *s);
/**
 * Bands of output rows worth splitting a frame through `s` into for two threads
 * (ic__scaler_run_bands), or 0 when the frame is too small to pay for a thread's start.
 */
uint32_t ic__scaler_helper_bands(const ic__scaler *s);
/**
 * Writes a frame held whole in memory (src: input rows src_stride apart; with `straight`,
 * straight-alpha rows premultiplied as they are read, as ic__scaler_push_straight does) to
 * dst through `s` and `fork` (ic__scaler_fork of s), in `bands` bands of output rows of equal
 * height, each reading only the input rows it depends on. With `helper`, the calling thread
 * (through s) and one helper thread (through fork) claim the bands in turn; without, all run
 * on the calling thread, last band first, alternating between the two scalers (a testing
 * hook). Every row is bit-identical to the same frame's pushed whole, and s ends as after
 * that pass (ic__scaler_done). False, with nothing written, when no thread could be started.
 */
bool ic__scaler_run_bands(ic__scaler *s, ic__scaler *fork, const uint8_t *src, size_t src_stride,
                         bool straight, uint8_t *dst, size_t dst_stride, uint32_t bands, bool helper);
/** First and last input rows the output depends on. */
uint32_t ic__scaler_first_row(const ic__scaler *s);
uint32_t ic__scaler_last_row(const ic__scaler *s);

#endif /* IC_RESIZE_INTERNAL_H */
