/*
 * ic_jpeg_internal.h — what the JPEG decoder's files share. Not installed.
 *
 * jpeg.c runs a decode through its stages (header, start, rows) with libjpeg;
 * jpeg_glue.c holds libjpeg's callbacks (errors, progress, the suspending source) and
 * what the header tells; jpeg_dc_stage.c hands a progressive file at 1/8 to ImageKit's
 * DC-only decoder (jpeg_dc.c and its layers); jpeg_band.c decodes the bottom rows of a
 * lone large decode on a helper thread; jpeg_incremental.c feeds a decode piece by
 * piece; jpeg_probe.c reads a header without libjpeg.
 */
#ifndef IC_JPEG_INTERNAL_H
#define IC_JPEG_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>

#include "../ic_decode_internal.h"
#include "ic_jpeg_dc_internal.h"

/* Progressive files with more scans than this are refused: each scan walks
 * the whole coefficient buffer, so scan count is a CPU-time bomb. */
#define IC_JPEG_MAX_SCANS 500

/*
 * What libjpeg's error and progress callbacks (jpeg_glue.c) report to: the first member
 * of a decompression's context, so that cinfo->err points at it. Errors longjmp to
 * `jump`; cancellation is read from `cancel_flag` (and `stop`, when set) at each
 * progress call.
 */
typedef struct jpeg_glue {
    struct jpeg_error_mgr pub;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    ic_status status;       /* set before longjmp when not a libjpeg error */
    ic_error *err;          /* where failures are described (may be NULL) */
    const size_t *size;     /* the input's length so far (for "truncated after") */
    const int *cancel_flag; /* the decode's (may be NULL) */
    const int *stop;        /* a helper's: set when its caller gives up on it (may be NULL) */
    uint64_t max_memory;    /* the decode's memory limit (0: none), for messages */
} jpeg_glue;

/* Where a decode is: each stage may suspend (a suspending source ran dry) and resume. */
typedef enum jpeg_stage {
    STAGE_CREATE,
    STAGE_HEADER,
    STAGE_START,
    STAGE_DC_OWN, /* ImageKit's DC-only decoder (jpeg_dc.c) */
    STAGE_DC_SCANS,
    STAGE_START_OUTPUT,
    STAGE_BEGIN,
    STAGE_ROWS,
    STAGE_DONE,
} jpeg_stage;

/* A decode of `d`'s bytes: libjpeg's, or the DC decoder's, and the suspending source. */
typedef struct jpeg_ctx {
    jpeg_glue glue; /* first: cinfo.err points here */
    ic__decoder *d;
    struct jpeg_decompress_struct cinfo;
    jpeg_stage stage;
    bool created;
    uint64_t reserved; /* coefficient bytes counted against the limit */
    bool cmyk;
    bool dc_only;
    uint64_t coef;     /* the coefficient bytes libjpeg's decode needs */
    /* ImageKit's DC-only decoder has the file (from the first scan on); the bytes it
     * holds (incremental decodes: from the first scan to where its walk is). */
    bool dc_own;
    ic__jpeg_dc *dc;
    uint8_t *dc_in;
    size_t dc_len, dc_capacity;
    uint32_t rows_end;      /* read_rows stops here (0: at the last row) */
    struct jpeg_band *band; /* the helper's decode of the rows below rows_end */

    /* The suspending source (incremental decodes): the unconsumed bytes, and
     * the bytes libjpeg asked to skip beyond them. */
    bool suspending;
    bool whole_body;   /* arithmetic coding: the caller decodes the whole body instead */
    bool eof;          /* no more input will come */
    struct jpeg_source_mgr src;
    uint8_t *held;
    size_t held_capacity;
    size_t skip;
} jpeg_ctx;

/* ---- jpeg.c: the stages. ---- */

/* A context for a decode of d (suspending: fed piece by piece through c->src). */
void ic__jpeg_ctx_init(jpeg_ctx *c, ic__decoder *d, bool suspending);

/* Releases libjpeg, the DC decoder and the coefficient reservation. */
void ic__jpeg_ctx_end(jpeg_ctx *c);

/*
 * Runs the decode from its current stage as far as the input allows: to the
 * end with the memory source, or until the suspending source runs dry (the
 * stage is kept and the next call resumes there).
 */
ic_status ic__jpeg_run(jpeg_ctx *c);

/* What libjpeg's decode of the file needs besides the header: its coefficient memory
 * under the limit, and buffered-image mode for the DC-only stop. */
void ic__jpeg_libjpeg_setup(jpeg_ctx *c);

/* ---- jpeg_glue.c: libjpeg's callbacks and the header's facts. ---- */

/* Points cinfo->err at g (libjpeg's standard manager with our callbacks; after
 * jpeg_create_decompress, cinfo->progress goes to &g->progress), with the reporting fields
 * as given and no `stop`. */
void ic__jpeg_glue_init(jpeg_glue *g, j_decompress_ptr cinfo, ic_error *err, const size_t *size,
                       const int *cancel_flag, uint64_t max_memory);

/* Maps a libjpeg error (in cinfo->err, a jpeg_glue) to a status and sentence. */
ic_status ic__jpeg_libjpeg_failure(j_decompress_ptr cinfo);

/* Orientation from the first APP1 "Exif" marker libjpeg saved. */
uint8_t ic__jpeg_saved_orientation(j_decompress_ptr cinfo);

/* The embedded ICC profile from the APP2 segments libjpeg saved (see ic_color.h). */
void ic__jpeg_take_profile(ic__decoder *d, j_decompress_ptr cinfo);

/* CMYK (4 bytes a pixel) to opaque RGBA in place. Adobe files store inverted
 * inks (255 = no ink); others store plain inks. */
void ic__jpeg_cmyk_to_rgba(uint8_t *row, uint32_t width, bool inverted);

/* True once every component's DC coefficients are complete (fully refined). */
bool ic__jpeg_dc_scans_complete(j_decompress_ptr cinfo);

/* Coefficient memory a full decode may need, for the limit check. */
uint64_t ic__jpeg_coefficient_bytes(j_decompress_ptr cinfo);

/* Makes c->src the suspending source of c's decompression. */
void ic__jpeg_use_suspending_source(jpeg_ctx *c);

/* ---- jpeg_dc_stage.c: the DC-only decoder's stage. ---- */

/* Runs the DC decoder as far as the input allows: done (STAGE_DONE), waiting for more
 * input (incremental decodes), or given way to libjpeg (c->dc_own cleared). */
ic_status ic__jpeg_dc_stage(jpeg_ctx *c);

/* Appends input to the bytes the DC decoder holds. */
ic_status ic__jpeg_dc_hold(jpeg_ctx *c, const uint8_t *data, size_t size);

/* Frees the bytes the DC decoder holds. */
void ic__jpeg_dc_release_input(jpeg_ctx *c);

/* ---- jpeg_band.c: the bottom rows of a lone large decode on a helper thread. ---- */

/* After ic__dec_begin: may hand the bottom rows to a helper (c->rows_end is then set). */
void ic__jpeg_band_start(jpeg_ctx *c);

/* Waits for the helper, if any; the decode's outcome given the caller's `st`. */
ic_status ic__jpeg_band_end(jpeg_ctx *c, ic_status st);

#endif /* IC_JPEG_INTERNAL_H */
