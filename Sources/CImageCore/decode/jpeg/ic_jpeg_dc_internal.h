/*
 * ic_jpeg_dc_internal.h — ImageKit's DC-only decoder for progressive JPEG
 * thumbnails at 1/8 scale (jpeg_dc.c and its layers, dc_*.c), driven by jpeg.c. Not installed.
 *
 * jpeg.c reads the header with libjpeg (its checks, its EXIF and ICC segments, its
 * colour-space decision), sets scale 1/8 and asks ic__jpeg_dc_takes; if the DC decoder
 * takes the file, jpeg.c hands it the bytes after the first SOS header (the whole rest of
 * the file, or what has arrived so far) instead of calling jpeg_start_decompress. The
 * walk finds the scans up to the one that completes every component's DC (and the marker
 * segments libjpeg would read after it); the run decodes them and writes the output
 * through the decode's sink. Either may give way: the DC decoder then leaves no output
 * behind and libjpeg decodes the file from where its header read stopped.
 */
#ifndef IC_JPEG_DC_INTERNAL_H
#define IC_JPEG_DC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>

#include "../ic_decode_internal.h"

typedef struct ic__jpeg_dc ic__jpeg_dc;

/**
 * Whether the DC decoder takes a file whose header libjpeg has read (`cinfo` after
 * jpeg_read_header, scale 1/8 and RGBA output set; this calls
 * jpeg_calc_output_dimensions). On true, *need is the memory its decode will hold (for
 * the limit check: its block-row windows and one iMCU row of samples); on false, *why says what it does not
 * take.
 */
bool ic__jpeg_dc_takes(j_decompress_ptr cinfo, uint64_t *need, const char **why);

/** A DC decode for `d` of the file `cinfo` describes (ic__jpeg_dc_takes said yes); NULL
 * when out of memory. Copies what it needs from `cinfo` (tables, the first scan). */
ic__jpeg_dc *ic__jpeg_dc_new(ic__decoder *d, j_decompress_ptr cinfo);

void ic__jpeg_dc_free(ic__jpeg_dc *dc);

typedef enum ic__jpeg_dc_step {
    /** The bytes so far end before the walk does: call again with more. */
    IC_JPEG_DC_MORE,
    /** Every scan the decode reads is in: ic__jpeg_dc_run may go. */
    IC_JPEG_DC_READY,
    /** The file is not one the DC decoder takes after all (see ic__jpeg_dc_why). */
    IC_JPEG_DC_GIVE_WAY,
    /** The decode was cancelled (d's error is set). */
    IC_JPEG_DC_CANCELLED,
} ic__jpeg_dc_step;

/**
 * Walks the bytes after the first SOS header: `data` holds `size` of them so far (the
 * same bytes again, and more, on the next call; the buffer may move). `eof`: no more
 * will come. Reads marker segments and finds where each scan's entropy-coded data ends,
 * decoding nothing.
 */
ic__jpeg_dc_step ic__jpeg_dc_walk(ic__jpeg_dc *dc, const uint8_t *data, size_t size, bool eof);

/**
 * After IC_JPEG_DC_READY: decodes the scans (the same `data`) and writes the output rows
 * through the sink as they are final (ic__dec_begin included). When the entropy-coded data
 * holds something the decoder does not reproduce exactly, *gave_way is set and the sink is
 * undone (ic__dec_unbegin: no row stays); otherwise the result is IC_OK or a failure
 * (cancelled, out of memory, a limit at ic__dec_begin).
 */
ic_status ic__jpeg_dc_run(ic__jpeg_dc *dc, const uint8_t *data, size_t size, bool *gave_way);

/** Why the decoder gave way (a fixed sentence), or NULL. */
const char *ic__jpeg_dc_why(const ic__jpeg_dc *dc);

#endif /* IC_JPEG_DC_INTERNAL_H */
