/*
 * ic_incremental.h — decoding while the bytes arrive.
 *
 * An incremental decode is fed the body of an image in pieces, in order, as
 * they come off the network, and decodes as far as the bytes so far allow;
 * ic_incremental_finish then returns exactly what ic_decode returns for the
 * whole body — the same pixels, bit for bit, or the same error. Limits are
 * checked as soon as the header is in; the cancellation flag is honoured
 * between and within feeds.
 *
 * One incremental decode is used by one thread at a time (calls may come
 * from different threads when each happens after the last). Formats without
 * an incremental decoder keep the bytes and decode them at finish.
 */
#ifndef IC_INCREMENTAL_H
#define IC_INCREMENTAL_H

#include <stddef.h>
#include <stdint.h>

#include "ic_decode.h"
#include "ic_error.h"
#include "ic_format.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One decode in progress, fed piece by piece. */
typedef struct ic_incremental ic_incremental;

/**
 * Starts an incremental decode with `options` (copied; NULL for the defaults;
 * a cancel_flag or pool it names must outlive the decode). On success *out
 * owns the decode (free with ic_incremental_free).
 */
ic_status ic_incremental_new(const ic_decode_options *options, ic_incremental **out, ic_error *err);

/**
 * Feeds the next `size` bytes of the body and decodes as far as they allow.
 * A failure (corrupt data, a limit exceeded, cancellation) is final: later
 * feeds and ic_incremental_finish return the same error.
 */
ic_status ic_incremental_feed(ic_incremental *inc, const uint8_t *data, size_t size,
                              ic_error *err);

/** The format, once enough bytes are in to tell (IC_FORMAT_UNKNOWN before). */
ic_format ic_incremental_format(const ic_incremental *inc);

/**
 * 1 when this decode consumes the bytes as they arrive (its format has an
 * incremental decoder), 0 while the format is not known yet or when the bytes
 * are kept and decoded at finish.
 */
int ic_incremental_is_streaming(const ic_incremental *inc);

/** Bytes of the body the decode holds right now (input it has not consumed or must keep). */
uint64_t ic_incremental_buffered_bytes(const ic_incremental *inc);

/**
 * A copy of the image as far as it is decoded, at the output size (rows not
 * decoded yet are transparent; a progressive image shows its last complete
 * pass). *out is NULL (and IC_OK returned) when nothing is decoded yet or the
 * format gives no partial images. Free a non-NULL *out with ic_image_free.
 */
ic_status ic_incremental_partial(ic_incremental *inc, ic_image **out, ic_error *err);

/**
 * Ends the input and finishes the decode: *out and `stats` as ic_decode gives
 * them for the concatenated bytes, or the error it gives (a body that ends
 * early fails as ic_decode fails on the same bytes). `stats` may be NULL.
 */
ic_status ic_incremental_finish(ic_incremental *inc, ic_image **out, ic_decode_stats *stats,
                                ic_error *err);

/** Releases the decode and everything it holds. NULL is a no-op. */
void ic_incremental_free(ic_incremental *inc);

#ifdef __cplusplus
}
#endif

#endif /* IC_INCREMENTAL_H */
