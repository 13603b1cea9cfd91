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
 *
 * What streams (decoded as the bytes arrive):
 *  - JPEG, every option: baseline rows go to the output (or the thumbnail's
 *    resampler) as their MCU rows arrive; a progressive file's scans are
 *    consumed into libjpeg's coefficient buffer as they arrive and output at
 *    the end. A 1/8 thumbnail of a progressive file is complete once its DC
 *    scans (refinements included) are in, as with ic_decode: ImageKit's
 *    DC-only decoder holds the bytes from the first scan until then (the
 *    compressed scans, far smaller than libjpeg's coefficient buffer; for
 *    libjpeg's usual progression, which refines the DC after most AC scans,
 *    about a quarter to half of the file), decodes them at once and reads
 *    nothing after; a file it gives way on goes to libjpeg with those bytes.
 *    The bytes up to the first scan (the header, with the EXIF and ICC
 *    segments) are kept until it is complete; the rest is released as it is
 *    consumed.
 *  - Non-interlaced PNG stills, and APNGs decoded without all_frames (their
 *    IDAT image): once the chunks before the first IDAT are in (eXIf and acTL
 *    are read from them), IDAT data is inflated with zlib as it arrives and
 *    each row goes to the output as it completes, with the whole-body fast
 *    path's chunk rules, CRC checks and row code. The body is kept to the
 *    end: should the stream meet anything the fast path would not decode
 *    itself (a CRC, a zlib error, a critical chunk after the image data, a
 *    cut in the IDATs, ...), ic_decode decodes the kept body at finish and
 *    its answer stands, so a malformed PNG gets exactly ic_decode's answer.
 *  - WebP stills, lossy and lossless: libwebp's incremental decoder with
 *    ic_decode's settings, once the chunks before the image data and its
 *    bitstream header are in; finished rows go to the output (or the
 *    thumbnail's resampler) as libwebp decodes them. Every byte is kept to the
 *    end: the EXIF chunk that usually follows the image data gives the
 *    orientation, and a body the whole decode would judge differently (a
 *    container claiming more bytes than it has, a decode libwebp does not
 *    finish) is handed to ic_decode at finish, whose answer stands.
 *  - GIF, stills and animations decoded without all_frames (their first
 *    frame): once the screen descriptor and the global colour table are in
 *    (the limits are checked there), the LZW data is decoded as it arrives by
 *    ic_decode's own block walk and LZW decoder, and each row goes to the
 *    output (or the thumbnail's resampler) as it completes; an interlaced
 *    image is decoded as it arrives too, but its rows count as done (and
 *    reach a thumbnail's resampler) only once it is complete. Every byte is
 *    kept to the end: ic_decode reads the whole file first (the loop count,
 *    and whether any image's data ends), and a body the stream fails on
 *    (corrupt or cut LZW data, a bad block) or that has no complete image is
 *    handed to ic_decode at finish, whose answer stands.
 * What is kept whole and decoded at finish: GIF with all_frames, animated
 * WebP, a WebP thumbnail in a box that is not square when the file announces
 * EXIF (its orientation turns the box, and comes after the image data), a
 * WebP with more than 16 chunks before its image data, APNG with all_frames,
 * Adam7 PNG and arithmetic-coded JPEG (decided once the header is in, after
 * the limits), any other format, a body of fewer than 64 bytes, and a PNG
 * whose chunks before IDAT cannot be walked.
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

/**
 * Bytes of the body the decode holds right now (input it has not consumed or
 * must keep). Streaming JPEG: the bytes libjpeg has not consumed yet (the
 * tail of an MCU row, or of a marker segment), plus the header until its
 * first scan; for a progressive 1/8 thumbnail, the bytes from the first scan
 * until its DC scans are in. Streaming PNG, WebP and GIF: every byte fed (the body is kept
 * in case ic_decode must decide; libwebp and the GIF walk read it in place;
 * the pixels decoded so far are not counted). Kept formats: every byte fed.
 */
uint64_t ic_incremental_buffered_bytes(const ic_incremental *inc);

/**
 * A copy of the image as far as it is decoded, at the output size (rows not
 * decoded yet are transparent). *out is NULL (and IC_OK returned) when nothing is decoded yet or the
 * format gives no partial images. Free a non-NULL *out with ic_image_free.
 * Baseline JPEG, non-interlaced PNG, streaming WebP and a GIF whose first
 * image is not interlaced give the rows decoded so far (for a thumbnail, the
 * output rows the resampler has written; WebP's rows advance when libwebp is
 * handed more input: every 16 KiB for lossy data, every eighth of the file and
 * at least 64 KiB for lossless; a GIF's are the screen rows above its first
 * image and that image's rows decoded so far). Progressive JPEG and an
 * interlaced GIF give nothing until their rows are complete at the end; kept
 * formats (Adam7 PNG included) give nothing.
 */
ic_status ic_incremental_partial(ic_incremental *inc, ic_image **out, ic_error *err);

/**
 * Ends the input and finishes the decode: *out and `stats` as ic_decode gives
 * them for the concatenated bytes, or the error it gives (a body that ends
 * early fails as ic_decode fails on the same bytes). A decode whose cancel
 * flag is set by then fails as cancelled, as ic_decode does when the flag is
 * set before it starts. `stats` may be NULL.
 */
ic_status ic_incremental_finish(ic_incremental *inc, ic_image **out, ic_decode_stats *stats,
                                ic_error *err);

/** Releases the decode and everything it holds. NULL is a no-op. */
void ic_incremental_free(ic_incremental *inc);

#ifdef __cplusplus
}
#endif

#endif /* IC_INCREMENTAL_H */
