/*
 * jpeg_glue.c — libjpeg's side of the JPEG decoder: its error, warning and progress
 * callbacks (errors longjmp back to the frame that called libjpeg, and never further;
 * warnings that mean pixels are missing are errors), the suspending source of
 * incremental decodes, and what libjpeg's header read leaves (orientation, ICC profile,
 * coefficient memory, CMYK).
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "ic_jpeg_internal.h"

/* ---- Errors, warnings and progress. ---- */

static void on_error_exit(j_common_ptr cinfo) {
    jpeg_glue *g = (jpeg_glue *)cinfo->err;
    longjmp(g->jump, 1);
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void on_emit_message(j_common_ptr cinfo, int level) {
    jpeg_glue *g = (jpeg_glue *)cinfo->err;
    if (level >= 0) return; /* trace messages */
    cinfo->err->num_warnings++;
    int code = cinfo->err->msg_code;
    if (code == JWRN_JPEG_EOF) {
        g->status = ic__set_error(g->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes", *g->size);
        longjmp(g->jump, 1);
    }
    if (code == JWRN_HIT_MARKER) {
        g->status = ic__set_error(g->err, IC_ERR_CORRUPT,
                                 "JPEG: entropy-coded data ends early (corrupt or truncated)");
        longjmp(g->jump, 1);
    }
}

static void on_progress(j_common_ptr cinfo) {
    jpeg_glue *g = (jpeg_glue *)cinfo->err;
    if ((g->cancel_flag && __atomic_load_n(g->cancel_flag, __ATOMIC_ACQUIRE)) ||
        (g->stop && __atomic_load_n(g->stop, __ATOMIC_ACQUIRE))) {
        g->status = ic__set_error(g->err, IC_ERR_CANCELLED, "JPEG: decode cancelled");
        longjmp(g->jump, 1);
    }
    if (cinfo->is_decompressor) {
        j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
        if (dinfo->input_scan_number > IC_JPEG_MAX_SCANS) {
            g->status = ic__set_error(g->err, IC_ERR_LIMIT_EXCEEDED,
                                     "JPEG: more than %d progressive scans", IC_JPEG_MAX_SCANS);
            longjmp(g->jump, 1);
        }
    }
}

void ic__jpeg_glue_init(jpeg_glue *g, j_decompress_ptr cinfo, ic_error *err, const size_t *size,
                       const int *cancel_flag, uint64_t max_memory) {
    g->status = IC_OK;
    g->err = err;
    g->size = size;
    g->cancel_flag = cancel_flag;
    g->max_memory = max_memory;
    cinfo->err = jpeg_std_error(&g->pub);
    g->pub.error_exit = on_error_exit;
    g->pub.emit_message = on_emit_message;
    g->pub.output_message = on_output_message;
    g->progress.progress_monitor = on_progress;
}

ic_status ic__jpeg_libjpeg_failure(j_decompress_ptr cinfo) {
    struct jpeg_error_mgr *e = cinfo->err;
    jpeg_glue *g = (jpeg_glue *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    e->format_message((j_common_ptr)cinfo, text);
    switch (e->msg_code) {
    case JERR_BAD_PRECISION:
        return ic__set_error(g->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "JPEG: %d-bit samples are not supported (8-bit only)",
                            e->msg_parm.i[0]);
    case JERR_SOF_UNSUPPORTED: {
        int marker = e->msg_parm.i[0];
        if (marker == 0xC3 || marker == 0xC7 || marker == 0xCB || marker == 0xCF) {
            return ic__set_error(g->err, IC_ERR_UNSUPPORTED_FEATURE,
                                "JPEG: lossless JPEG (SOF%d) is not supported", marker - 0xC0);
        }
        return ic__set_error(g->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "JPEG: coding process SOF%d is not supported", marker - 0xC0);
    }
    case JERR_OUT_OF_MEMORY:
        return ic__set_error(g->err, IC_ERR_OUT_OF_MEMORY, "JPEG: %s", text);
    case JERR_NO_BACKING_STORE:
        return ic__set_error(g->err, IC_ERR_LIMIT_EXCEEDED,
                            "JPEG: decoding needs more working memory than the limit of %.1f MiB",
                            (double)g->max_memory / (1024.0 * 1024.0));
    case JERR_IMAGE_TOO_BIG:
    case JERR_WIDTH_OVERFLOW:
        return ic__set_error(g->err, IC_ERR_LIMIT_EXCEEDED, "JPEG: %s", text);
    default:
        return ic__set_error(g->err, IC_ERR_CORRUPT, "JPEG: %s", text);
    }
}

/* ---- What the header tells. ---- */

uint8_t ic__jpeg_saved_orientation(j_decompress_ptr cinfo) {
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 &&
            memcmp(m->data, "Exif\0\0", 6) == 0) {
            return ic__exif_orientation(m->data + 6, m->data_length - 6);
        }
    }
    return 1;
}

void ic__jpeg_take_profile(ic__decoder *d, j_decompress_ptr cinfo) {
    ic__icc_chunk chunks[IC_ICC_MAX_CHUNKS];
    size_t n = 0;
    bool too_many = false;
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
        ic__icc_chunk c;
        if (m->marker != JPEG_APP0 + 2 || !ic__icc_jpeg_chunk(m->data, m->data_length, &c)) continue;
        if (n == IC_ICC_MAX_CHUNKS) {
            too_many = true;
            break;
        }
        chunks[n++] = c;
    }
    if (too_many) {
        ic__color_ignore(d);
    } else {
        ic__color_take_jpeg_chunks(d, chunks, n);
    }
    ic_color_input input = IC_COLOR_INPUT_RGBA;
    if (cinfo->jpeg_color_space == JCS_GRAYSCALE) input = IC_COLOR_INPUT_GRAY;
    if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) {
        input = cinfo->saw_Adobe_marker ? IC_COLOR_INPUT_CMYK_INVERTED : IC_COLOR_INPUT_CMYK;
    }
    ic__color_prepare(d, input);
}

void ic__jpeg_cmyk_to_rgba(uint8_t *row, uint32_t width, bool inverted) {
    for (uint32_t x = 0; x < width; x++, row += 4) {
        uint32_t c = row[0], m = row[1], y = row[2], k = row[3];
        if (!inverted) {
            c = 255 - c;
            m = 255 - m;
            y = 255 - y;
            k = 255 - k;
        }
        row[0] = (uint8_t)ic__mul255(c, k);
        row[1] = (uint8_t)ic__mul255(m, k);
        row[2] = (uint8_t)ic__mul255(y, k);
        row[3] = 255;
    }
}

bool ic__jpeg_dc_scans_complete(j_decompress_ptr cinfo) {
    if (!cinfo->coef_bits) return false;
    for (int ci = 0; ci < cinfo->num_components; ci++) {
        if (cinfo->coef_bits[ci][0] != 0) return false;
    }
    return true;
}

uint64_t ic__jpeg_coefficient_bytes(j_decompress_ptr cinfo) {
    if (!cinfo->progressive_mode && !cinfo->buffered_image) return 0;
    uint64_t total = 0;
    for (int i = 0; i < cinfo->num_components; i++) {
        jpeg_component_info *comp = &cinfo->comp_info[i];
        uint64_t bw = ((uint64_t)cinfo->image_width * comp->h_samp_factor +
                       (uint64_t)cinfo->max_h_samp_factor * DCTSIZE - 1) /
                      ((uint64_t)cinfo->max_h_samp_factor * DCTSIZE);
        uint64_t bh = ((uint64_t)cinfo->image_height * comp->v_samp_factor +
                       (uint64_t)cinfo->max_v_samp_factor * DCTSIZE - 1) /
                      ((uint64_t)cinfo->max_v_samp_factor * DCTSIZE);
        total += (bw + comp->h_samp_factor) * (bh + comp->v_samp_factor) * DCTSIZE2 *
                 sizeof(JCOEF);
    }
    return total;
}

/* ---- The suspending source. ---- */

/* The suspending source: out of bytes, it suspends; once the input has ended it
 * does what jpeg_mem_src does at the end of its buffer (warn, then a fake EOI),
 * so an incremental decode fails exactly where a whole-buffer one does. */
static void src_init(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean src_fill(j_decompress_ptr cinfo) {
    static const JOCTET eoi[2] = {0xFF, JPEG_EOI};
    jpeg_ctx *c = (jpeg_ctx *)cinfo->err;
    if (!c->eof) return FALSE;
    WARNMS(cinfo, JWRN_JPEG_EOF);
    c->src.next_input_byte = eoi;
    c->src.bytes_in_buffer = 2;
    return TRUE;
}

static void src_skip(j_decompress_ptr cinfo, long count) {
    jpeg_ctx *c = (jpeg_ctx *)cinfo->err;
    if (count <= 0) return;
    if ((size_t)count <= c->src.bytes_in_buffer) {
        c->src.next_input_byte += count;
        c->src.bytes_in_buffer -= (size_t)count;
        return;
    }
    c->skip += (size_t)count - c->src.bytes_in_buffer;
    c->src.next_input_byte += c->src.bytes_in_buffer;
    c->src.bytes_in_buffer = 0;
    if (c->eof) src_fill(cinfo);
}

static void src_term(j_decompress_ptr cinfo) { (void)cinfo; }

void ic__jpeg_use_suspending_source(jpeg_ctx *c) {
    c->src.init_source = src_init;
    c->src.fill_input_buffer = src_fill;
    c->src.skip_input_data = src_skip;
    c->src.resync_to_restart = jpeg_resync_to_restart;
    c->src.term_source = src_term;
    c->cinfo.src = &c->src;
}
