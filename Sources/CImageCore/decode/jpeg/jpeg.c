/*
 * jpeg.c — JPEG decoding with libjpeg-turbo's libjpeg API: the stages of a decode.
 *
 * Default IDCT (JDCT_ISLOW) and fancy upsampling, so pixels are bit-exact with
 * libjpeg-turbo's djpeg. libjpeg's error_exit longjmps back here and never
 * further. Warnings that mean pixels are missing (premature end of file,
 * premature end of an entropy segment) are errors: a partial image is never
 * returned as a success.
 *
 * A progressive file decoded at 1/8 goes to ImageKit's DC-only decoder
 * (jpeg_dc.c) once libjpeg has read the header, when that decoder takes the
 * file; it gives the same rows without libjpeg's whole-image coefficient
 * buffer, and gives way to libjpeg (which then decodes from its first scan)
 * on anything it does not reproduce exactly.
 *
 * With use_helper_thread, a large sequential full-size decode runs on two
 * threads (jpeg_band.c). This file runs the stages; ic_jpeg_internal.h lists the
 * others' roles.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

#include "ic_jpeg_internal.h"

void ic__jpeg_libjpeg_setup(jpeg_ctx *c) {
    if (c->d->opts.limits.max_memory_bytes) {
        c->cinfo.mem->max_memory_to_use = (long)(c->coef + (8u << 20));
    }
    if (c->dc_only) c->cinfo.buffered_image = TRUE;
}

/* Reads the header's facts, checks the limits and sets up the decompression:
 * colour space, shrink on load, the DC-only path. */
static ic_status after_header(jpeg_ctx *c) {
    ic__decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    d->orientation = ic__jpeg_saved_orientation(cinfo);

    c->coef = ic__jpeg_coefficient_bytes(cinfo);
    /* The plan first (no codec memory counted): how far the IDCT shrinks decides the
     * decoder, and so the memory the limit check counts. A size that fails alone fails
     * with the coefficients too, with the message libjpeg's decode would get. */
    ic_status st = ic__dec_check_size(d, cinfo->image_width, cinfo->image_height, 1, 0);
    if (st != IC_OK) return ic__dec_check_size(d, cinfo->image_width, cinfo->image_height, 1, c->coef);

    c->cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = c->cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    /* Shrink on load: the IDCT scales by 1/2, 1/4 or 1/8. */
    cinfo->scale_num = 1;
    cinfo->scale_denom = ic__dec_shrink_denominator(d, 8);
    /* At 1/8 the luma IDCT reads only each block's DC coefficient, and a
     * progressive file sends DC first: decoding stops once every DC scan
     * (refinements included) is in. Subsampled chroma is scaled by a 2x2 IDCT
     * that also reads low AC coefficients, which libjpeg's block smoothing
     * estimates from the DC values where the scans so far have not sent them.
     * ImageKit's own decoder does this without libjpeg's whole-image
     * coefficient buffer, row for row the same. */
    c->dc_only = cinfo->scale_denom == 8 && cinfo->progressive_mode;
    uint64_t need = c->coef;
    if (c->dc_only && d->jpeg_path != IC_JPEG_PATH_LIBJPEG) {
        const char *why = NULL;
        uint64_t dc_need = 0;
        if (ic__jpeg_dc_takes(cinfo, &dc_need, &why)) {
            c->dc_own = true;
            need = dc_need;
        } else if (d->jpeg_path == IC_JPEG_PATH_DC) {
            return ic__set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                                "JPEG: the DC decoder does not take this file: %s", why);
        }
    } else if (d->jpeg_path == IC_JPEG_PATH_DC) {
        return ic__set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "JPEG: the DC decoder takes progressive decodes at 1/8 only");
    }
    st = ic__dec_check_size(d, cinfo->image_width, cinfo->image_height, 1, need);
    if (st != IC_OK) return st;
    /* The codec's large buffers (libjpeg's coefficients, or the DC decoder's block-row
     * windows) count against our limit. */
    st = ic__dec_reserve(d, need);
    if (st != IC_OK) return st;
    c->reserved = need;
    ic__jpeg_take_profile(d, cinfo);
    if (!c->dc_own) ic__jpeg_libjpeg_setup(c);
    return IC_OK;
}

/* Reads rows into the sink until the image is complete or the source suspends. */
static ic_status read_rows(jpeg_ctx *c) {
    ic__decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    bool inverted = cinfo->saw_Adobe_marker;
    JSAMPROW rows[IC_SINK_ROWS];
    uint32_t end = c->rows_end ? c->rows_end : cinfo->output_height;
    while (cinfo->output_scanline < end) {
        if (ic__dec_cancelled(d)) {
            c->glue.status = ic__dec_fail_cancelled(d);
            longjmp(c->glue.jump, 1);
        }
        uint32_t y = cinfo->output_scanline;
        uint32_t n = end - y;
        if (n > IC_SINK_ROWS) n = IC_SINK_ROWS;
        for (uint32_t i = 0; i < n; i++) rows[i] = ic__dec_row(d, 0, y + i);
        int Ss = cinfo->Ss;
        JDIMENSION got = jpeg_read_scanlines(cinfo, rows, n);
        if (got == 0) {
            if (c->suspending && !c->eof) {
                /* Block smoothing (buffered image, after the DC scans) reads on to the next
                 * scan's header and decides how far ahead of the output to read from Ss. A
                 * source that runs dry inside that SOS segment leaves the new Ss set; libjpeg
                 * reads the segment again from its start, but with that Ss its smoothing
                 * would stop reading and never meet what the whole file's decode meets there
                 * (a bad scan header). Ss stays the current scan's, as when the segment comes
                 * whole. */
                cinfo->Ss = Ss;
                return IC_OK;
            }
            c->glue.status = ic__set_error(d->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes",
                                     d->size);
            longjmp(c->glue.jump, 1);
        }
        if (c->cmyk && ic__color_converts_cmyk(&d->color)) {
            for (JDIMENSION i = 0; i < got; i++) {
                ic__color_convert_cmyk_row(&d->color, rows[i], cinfo->output_width);
            }
        } else if (c->cmyk) {
            for (JDIMENSION i = 0; i < got; i++) ic__jpeg_cmyk_to_rgba(rows[i], cinfo->output_width, inverted);
        }
        ic__dec_rows_done(d, 0, y, got, false);
    }
    c->stage = STAGE_DONE;
    return IC_OK;
}

/* libjpeg's errors longjmp back here, so this frame must be the one calling libjpeg each
 * time. */
ic_status ic__jpeg_run(jpeg_ctx *c) {
    ic__decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    if (setjmp(c->glue.jump)) {
        return c->glue.status != IC_OK ? c->glue.status : ic__jpeg_libjpeg_failure(cinfo);
    }
    ic_status st;
    switch (c->stage) {
    case STAGE_CREATE:
        jpeg_create_decompress(cinfo);
        c->created = true;
        cinfo->progress = &c->glue.progress;
        if (c->suspending) {
            ic__jpeg_use_suspending_source(c);
        } else {
            jpeg_mem_src(cinfo, d->data, (unsigned long)d->size);
        }
        jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
        jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF);
        c->stage = STAGE_HEADER;
        /* fall through */
    case STAGE_HEADER:
        if (jpeg_read_header(cinfo, TRUE) == JPEG_SUSPENDED) return IC_OK;
        /* libjpeg's arithmetic decoder cannot suspend: such a file is decoded whole. */
        if (c->suspending && cinfo->arith_code) {
            c->whole_body = true;
            return IC_OK;
        }
        st = after_header(c);
        if (st != IC_OK) return st;
        c->stage = STAGE_START;
        /* fall through */
    case STAGE_START:
    start:
        if (c->dc_own) {
            c->stage = STAGE_DC_OWN;
            st = ic__jpeg_dc_stage(c);
            if (st != IC_OK || c->dc_own) return st;
            c->stage = STAGE_START;
        }
        if (!jpeg_start_decompress(cinfo)) return IC_OK;
        c->stage = c->dc_only ? STAGE_DC_SCANS : STAGE_BEGIN;
        if (!c->dc_only) goto begin;
        /* fall through */
    case STAGE_DC_SCANS:
        for (;;) {
            if (ic__dec_cancelled(d)) {
                c->glue.status = ic__dec_fail_cancelled(d);
                longjmp(c->glue.jump, 1);
            }
            int r = jpeg_consume_input(cinfo);
            if (r == JPEG_SUSPENDED) return IC_OK;
            if (r == JPEG_REACHED_EOI || (r == JPEG_SCAN_COMPLETED && ic__jpeg_dc_scans_complete(cinfo))) break;
        }
        c->stage = STAGE_START_OUTPUT;
        /* fall through */
    case STAGE_START_OUTPUT:
        if (!jpeg_start_output(cinfo, cinfo->input_scan_number)) return IC_OK;
        c->stage = STAGE_BEGIN;
        /* fall through */
    case STAGE_BEGIN:
    begin:
        st = ic__dec_begin(d, cinfo->output_width, cinfo->output_height, 1);
        if (st != IC_OK) return st;
        ic__jpeg_band_start(c);
        c->stage = STAGE_ROWS;
        /* fall through */
    case STAGE_ROWS:
        return read_rows(c);
    case STAGE_DONE:
        return IC_OK;
    case STAGE_DC_OWN:
        st = ic__jpeg_dc_stage(c);
        if (st != IC_OK || c->dc_own) return st;
        /* Given way: libjpeg decodes the file. */
        c->stage = STAGE_START;
        goto start;
    }
    return IC_OK;
}

void ic__jpeg_ctx_init(jpeg_ctx *c, ic__decoder *d, bool suspending) {
    memset(c, 0, sizeof *c);
    c->d = d;
    c->suspending = suspending;
    ic__jpeg_glue_init(&c->glue, &c->cinfo, d->err, &d->size, d->opts.cancel_flag,
                      d->opts.limits.max_memory_bytes);
}

void ic__jpeg_ctx_end(jpeg_ctx *c) {
    if (c->created) jpeg_destroy_decompress(&c->cinfo);
    c->created = false;
    ic__jpeg_dc_free(c->dc);
    c->dc = NULL;
    ic__dec_release(c->d, c->reserved);
    c->reserved = 0;
}

ic_status ic__jpeg_decode(ic__decoder *d) {
    jpeg_ctx c;
    ic__jpeg_ctx_init(&c, d, false);
    ic_status st = ic__jpeg_band_end(&c, ic__jpeg_run(&c));
    ic__jpeg_ctx_end(&c);
    return st;
}
