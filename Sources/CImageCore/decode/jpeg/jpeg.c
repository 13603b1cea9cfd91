/*
 * jpeg.c — JPEG decoding with libjpeg-turbo's libjpeg API.
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
 * threads: the caller decodes the top rows while a helper thread runs a second
 * decompression of the same bytes that skips them (jpeg_skip_scanlines still
 * decodes their entropy-coded data, but not their IDCT, upsampling and colour
 * conversion) and decodes the bottom rows. The rows are those of one decode,
 * and so is the outcome: the first failure in the file is the caller's, or
 * else the helper's. The helper skips a few rows of blocks at a time, and when
 * the caller's helper_yield_flag is set before it has skipped them all (other
 * work arrived, to which the skip's repeated entropy decoding would be a loss)
 * it gives its rows back: the caller decodes them after its own.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "../ic_decode_internal.h"
#include "ic_jpeg_dc_internal.h"
#include "ic_thread.h"

/* Progressive files with more scans than this are refused: each scan walks
 * the whole coefficient buffer, so scan count is a CPU-time bomb. */
#define IC_JPEG_MAX_SCANS 500

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

typedef struct jpeg_ctx {
    struct jpeg_error_mgr pub;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    ic_decoder *d;
    ic_status status;  /* set before longjmp when not a libjpeg error */
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
    ic_jpeg_dc *dc;
    uint8_t *dc_in;
    size_t dc_len, dc_capacity;
    uint32_t rows_end;      /* read_rows stops here (0: at the last row) */
    struct jpeg_band *band; /* the helper's decode of the rows below rows_end */
    const int *stop;        /* the helper's: set when the caller gives up on it */

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

static void on_error_exit(j_common_ptr cinfo) {
    jpeg_ctx *c = (jpeg_ctx *)cinfo->err;
    longjmp(c->jump, 1);
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void on_emit_message(j_common_ptr cinfo, int level) {
    jpeg_ctx *c = (jpeg_ctx *)cinfo->err;
    if (level >= 0) return; /* trace messages */
    cinfo->err->num_warnings++;
    int code = cinfo->err->msg_code;
    if (code == JWRN_JPEG_EOF) {
        c->status = ic_set_error(c->d->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes",
                                 c->d->size);
        longjmp(c->jump, 1);
    }
    if (code == JWRN_HIT_MARKER) {
        c->status = ic_set_error(c->d->err, IC_ERR_CORRUPT,
                                 "JPEG: entropy-coded data ends early (corrupt or truncated)");
        longjmp(c->jump, 1);
    }
}

static void on_progress(j_common_ptr cinfo) {
    jpeg_ctx *c = (jpeg_ctx *)cinfo->err;
    if (ic_dec_cancelled(c->d) || (c->stop && __atomic_load_n(c->stop, __ATOMIC_ACQUIRE))) {
        c->status = ic_dec_fail_cancelled(c->d);
        longjmp(c->jump, 1);
    }
    if (cinfo->is_decompressor) {
        j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
        if (dinfo->input_scan_number > IC_JPEG_MAX_SCANS) {
            c->status = ic_set_error(c->d->err, IC_ERR_LIMIT_EXCEEDED,
                                     "JPEG: more than %d progressive scans", IC_JPEG_MAX_SCANS);
            longjmp(c->jump, 1);
        }
    }
}

/* Maps a libjpeg error (in cinfo->err) to a status and sentence. */
static ic_status libjpeg_failure(j_decompress_ptr cinfo, ic_decoder *d) {
    struct jpeg_error_mgr *e = cinfo->err;
    char text[JMSG_LENGTH_MAX];
    e->format_message((j_common_ptr)cinfo, text);
    switch (e->msg_code) {
    case JERR_BAD_PRECISION:
        return ic_set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "JPEG: %d-bit samples are not supported (8-bit only)",
                            e->msg_parm.i[0]);
    case JERR_SOF_UNSUPPORTED: {
        int marker = e->msg_parm.i[0];
        if (marker == 0xC3 || marker == 0xC7 || marker == 0xCB || marker == 0xCF) {
            return ic_set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                                "JPEG: lossless JPEG (SOF%d) is not supported", marker - 0xC0);
        }
        return ic_set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "JPEG: coding process SOF%d is not supported", marker - 0xC0);
    }
    case JERR_OUT_OF_MEMORY:
        return ic_set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: %s", text);
    case JERR_NO_BACKING_STORE:
        return ic_set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                            "JPEG: decoding needs more working memory than the limit of %.1f MiB",
                            (double)d->opts.limits.max_memory_bytes / (1024.0 * 1024.0));
    case JERR_IMAGE_TOO_BIG:
    case JERR_WIDTH_OVERFLOW:
        return ic_set_error(d->err, IC_ERR_LIMIT_EXCEEDED, "JPEG: %s", text);
    default:
        return ic_set_error(d->err, IC_ERR_CORRUPT, "JPEG: %s", text);
    }
}

/* Orientation from the first APP1 "Exif" marker libjpeg saved. */
static uint8_t saved_orientation(j_decompress_ptr cinfo) {
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 &&
            memcmp(m->data, "Exif\0\0", 6) == 0) {
            return ic_exif_orientation(m->data + 6, m->data_length - 6);
        }
    }
    return 1;
}

/* The embedded ICC profile from the APP2 segments libjpeg saved (see ic_color.h). */
static void take_profile(ic_decoder *d, j_decompress_ptr cinfo) {
    ic_icc_chunk chunks[IC_ICC_MAX_CHUNKS];
    size_t n = 0;
    bool too_many = false;
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
        ic_icc_chunk c;
        if (m->marker != JPEG_APP0 + 2 || !ic_icc_jpeg_chunk(m->data, m->data_length, &c)) continue;
        if (n == IC_ICC_MAX_CHUNKS) {
            too_many = true;
            break;
        }
        chunks[n++] = c;
    }
    if (too_many) {
        ic_color_ignore(d);
    } else {
        ic_color_take_jpeg_chunks(d, chunks, n);
    }
    ic_color_input input = IC_COLOR_INPUT_RGBA;
    if (cinfo->jpeg_color_space == JCS_GRAYSCALE) input = IC_COLOR_INPUT_GRAY;
    if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) {
        input = cinfo->saw_Adobe_marker ? IC_COLOR_INPUT_CMYK_INVERTED : IC_COLOR_INPUT_CMYK;
    }
    ic_color_prepare(d, input);
}

/* CMYK (4 bytes a pixel) to opaque RGBA in place. Adobe files store inverted
 * inks (255 = no ink); others store plain inks. */
static void cmyk_to_rgba(uint8_t *row, uint32_t width, bool inverted) {
    for (uint32_t x = 0; x < width; x++, row += 4) {
        uint32_t c = row[0], m = row[1], y = row[2], k = row[3];
        if (!inverted) {
            c = 255 - c;
            m = 255 - m;
            y = 255 - y;
            k = 255 - k;
        }
        row[0] = (uint8_t)ic_mul255(c, k);
        row[1] = (uint8_t)ic_mul255(m, k);
        row[2] = (uint8_t)ic_mul255(y, k);
        row[3] = 255;
    }
}

/* True once every component's DC coefficients are complete (fully refined). */
static bool dc_complete(j_decompress_ptr cinfo) {
    if (!cinfo->coef_bits) return false;
    for (int ci = 0; ci < cinfo->num_components; ci++) {
        if (cinfo->coef_bits[ci][0] != 0) return false;
    }
    return true;
}

/* Coefficient memory a full decode may need, for the limit check. */
static uint64_t coefficient_bytes(j_decompress_ptr cinfo) {
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

/* What libjpeg's decode of the file needs besides the header: its coefficient memory
 * under the limit, and buffered-image mode for the DC-only stop. */
static void libjpeg_setup(jpeg_ctx *c) {
    if (c->d->opts.limits.max_memory_bytes) {
        c->cinfo.mem->max_memory_to_use = (long)(c->coef + (8u << 20));
    }
    if (c->dc_only) c->cinfo.buffered_image = TRUE;
}

/* Reads the header's facts, checks the limits and sets up the decompression:
 * colour space, shrink on load, the DC-only path. */
static ic_status after_header(jpeg_ctx *c) {
    ic_decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    d->orientation = saved_orientation(cinfo);

    c->coef = coefficient_bytes(cinfo);
    /* The plan first (no codec memory counted): how far the IDCT shrinks decides the
     * decoder, and so the memory the limit check counts. A size that fails alone fails
     * with the coefficients too, with the message libjpeg's decode would get. */
    ic_status st = ic_dec_check_size(d, cinfo->image_width, cinfo->image_height, 1, 0);
    if (st != IC_OK) return ic_dec_check_size(d, cinfo->image_width, cinfo->image_height, 1, c->coef);

    c->cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = c->cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    /* Shrink on load: the IDCT scales by 1/2, 1/4 or 1/8. */
    cinfo->scale_num = 1;
    cinfo->scale_denom = ic_dec_shrink_denominator(d, 8);
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
        if (ic_jpeg_dc_takes(cinfo, &dc_need, &why)) {
            c->dc_own = true;
            need = dc_need;
        } else if (d->jpeg_path == IC_JPEG_PATH_DC) {
            return ic_set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                                "JPEG: the DC decoder does not take this file: %s", why);
        }
    } else if (d->jpeg_path == IC_JPEG_PATH_DC) {
        return ic_set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE,
                            "JPEG: the DC decoder takes progressive decodes at 1/8 only");
    }
    st = ic_dec_check_size(d, cinfo->image_width, cinfo->image_height, 1, need);
    if (st != IC_OK) return st;
    /* The codec's large buffers (libjpeg's coefficients, or the DC decoder's block-row
     * windows) count against our limit. */
    st = ic_dec_reserve(d, need);
    if (st != IC_OK) return st;
    c->reserved = need;
    take_profile(d, cinfo);
    if (!c->dc_own) libjpeg_setup(c);
    return IC_OK;
}

/* ---- ImageKit's DC-only decoder (jpeg_dc.c). ---- */

/* Most input bytes the DC decoder holds before the walk ends (incremental decodes): half
 * the coefficient memory libjpeg would take instead, 1 MiB at least. */
static size_t dc_hold_limit(const jpeg_ctx *c) {
    uint64_t limit = c->coef / 2;
    if (limit < (1u << 20)) limit = 1u << 20;
    return limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
}

/* Appends input to the bytes the DC decoder holds. */
static ic_status dc_hold(jpeg_ctx *c, const uint8_t *data, size_t size) {
    if (size > c->dc_capacity - c->dc_len) {
        size_t capacity = c->dc_capacity ? c->dc_capacity : (64u << 10);
        while (capacity - c->dc_len < size) {
            if (capacity > SIZE_MAX / 2) capacity = SIZE_MAX;
            else capacity *= 2;
        }
        uint8_t *grown = realloc(c->dc_in, capacity);
        if (!grown) {
            return ic_set_error(c->d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot hold %zu input bytes",
                                c->dc_len + size);
        }
        c->dc_in = grown;
        c->dc_capacity = capacity;
    }
    memcpy(c->dc_in + c->dc_len, data, size);
    c->dc_len += size;
    return IC_OK;
}

static void dc_release_input(jpeg_ctx *c) {
    free(c->dc_in);
    c->dc_in = NULL;
    c->dc_len = c->dc_capacity = 0;
}

/* The DC decoder gives way: libjpeg decodes the file from its first scan (its source is
 * where its header read stopped; an incremental decode's held bytes go back to it), with
 * the size check and reservation its decode always had. */
static ic_status dc_give_way(jpeg_ctx *c) {
    ic_decoder *d = c->d;
    const char *why = c->dc ? ic_jpeg_dc_why(c->dc) : NULL;
    if (d->jpeg_path == IC_JPEG_PATH_DC) {
        return ic_set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE, "JPEG: the DC decoder gives way: %s",
                            why ? why : "unknown");
    }
    ic_jpeg_dc_free(c->dc);
    c->dc = NULL;
    c->dc_own = false;
    ic_dec_release(d, c->reserved);
    c->reserved = 0;
    ic_status st = ic_dec_check_size(d, c->cinfo.image_width, c->cinfo.image_height, 1, c->coef);
    if (st != IC_OK) return st;
    st = ic_dec_reserve(d, c->coef);
    if (st != IC_OK) return st;
    c->reserved = c->coef;
    libjpeg_setup(c);
    if (c->suspending) {
        c->src.next_input_byte = c->dc_in;
        c->src.bytes_in_buffer = c->dc_len;
    }
    return IC_OK;
}

/* Runs the DC decoder as far as the input allows: done (STAGE_DONE), waiting for more
 * input (incremental decodes), or given way to libjpeg (c->dc_own cleared). */
static ic_status dc_step(jpeg_ctx *c) {
    ic_decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    if (!c->dc) {
        c->dc = ic_jpeg_dc_new(d, cinfo);
        if (!c->dc) return ic_set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot allocate the DC decoder");
        if (c->suspending && c->src.bytes_in_buffer) {
            ic_status st = dc_hold(c, c->src.next_input_byte, c->src.bytes_in_buffer);
            if (st != IC_OK) return st;
            c->src.next_input_byte += c->src.bytes_in_buffer;
            c->src.bytes_in_buffer = 0;
        }
    }
    const uint8_t *data;
    size_t size;
    if (c->suspending) {
        data = c->dc_in;
        size = c->dc_len;
    } else {
        size = cinfo->src->bytes_in_buffer;
        data = d->data + (d->size - size);
    }
    ic_jpeg_dc_step step = ic_jpeg_dc_walk(c->dc, data, size, !c->suspending || c->eof);
    if (step == IC_JPEG_DC_CANCELLED) return IC_ERR_CANCELLED;
    if (step == IC_JPEG_DC_MORE) {
        return c->dc_len > dc_hold_limit(c) ? dc_give_way(c) : IC_OK;
    }
    if (step == IC_JPEG_DC_READY) {
        bool gave_way = false;
        ic_status st = ic_jpeg_dc_run(c->dc, data, size, &gave_way);
        if (!gave_way) {
            if (st == IC_OK) {
                c->stage = STAGE_DONE;
                ic_jpeg_dc_free(c->dc);
                c->dc = NULL;
                ic_dec_release(d, c->reserved);
                c->reserved = 0;
            }
            return st;
        }
    }
    return dc_give_way(c);
}

/* Reads rows into the sink until the image is complete or the source suspends. */
static ic_status read_rows(jpeg_ctx *c) {
    ic_decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    bool inverted = cinfo->saw_Adobe_marker;
    JSAMPROW rows[IC_SINK_ROWS];
    uint32_t end = c->rows_end ? c->rows_end : cinfo->output_height;
    while (cinfo->output_scanline < end) {
        if (ic_dec_cancelled(d)) {
            c->status = ic_dec_fail_cancelled(d);
            longjmp(c->jump, 1);
        }
        uint32_t y = cinfo->output_scanline;
        uint32_t n = end - y;
        if (n > IC_SINK_ROWS) n = IC_SINK_ROWS;
        for (uint32_t i = 0; i < n; i++) rows[i] = ic_dec_row(d, 0, y + i);
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
            c->status = ic_set_error(d->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes",
                                     d->size);
            longjmp(c->jump, 1);
        }
        if (c->cmyk && ic_color_converts_cmyk(&d->color)) {
            for (JDIMENSION i = 0; i < got; i++) {
                ic_color_convert_cmyk_row(&d->color, rows[i], cinfo->output_width);
            }
        } else if (c->cmyk) {
            for (JDIMENSION i = 0; i < got; i++) cmyk_to_rgba(rows[i], cinfo->output_width, inverted);
        }
        ic_dec_rows_done(d, 0, y, got, false);
    }
    c->stage = STAGE_DONE;
    return IC_OK;
}

/* ---- A lone full decode on two threads. ---- */

/* Smallest image (pixels) whose decode gets a helper thread: its start and its second
 * header read cost tens of microseconds. */
#define BAND_MIN_PIXELS IC_HELPER_MIN_PIXELS(1u << 21)

static void ctx_init(jpeg_ctx *c, ic_decoder *d, bool suspending);
static void ctx_end(jpeg_ctx *c);
static ic_status run(jpeg_ctx *c);

/* The helper's decode: rows [split, height) of its own decompression of the same bytes. */
typedef struct jpeg_band {
    pthread_t thread;
    ic_decoder d; /* a copy of the caller's, with an error of its own */
    ic_error err;
    jpeg_ctx c;
    uint32_t split;
    int stop; /* set (atomically) when the caller failed: the helper stops at its next row */
    ic_status status;
    bool yielded; /* gave its rows back before writing any (helper_yield_flag) */
} jpeg_band;

/* iMCU rows the helper skips between two looks at helper_yield_flag: few at first, doubling
 * up to the last. Another job most often arrives within a few milliseconds of a lone one
 * (two streams of loads finishing together), so early looks bound the skip thrown away then;
 * each look costs a row of blocks decoded rather than skipped where upsampling needs context
 * rows (libjpeg reads the last skipped row group), so later ones are few: about 2 % of the
 * skip in all. */
#define BAND_SKIP_FIRST_IMCU_ROWS 4
#define BAND_SKIP_MAX_IMCU_ROWS 64

/* True when the caller asked helpers to give way to other work. */
static bool band_asked_to_yield(const jpeg_band *b) {
    const int *flag = b->d.opts.helper_yield_flag;
    return flag && __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
}

/* The helper's work; libjpeg's errors longjmp back here. */
static ic_status band_run(jpeg_band *b) {
    jpeg_ctx *c = &b->c;
    j_decompress_ptr cinfo = &c->cinfo;
    if (setjmp(c->jump)) {
        return c->status != IC_OK ? c->status : libjpeg_failure(cinfo, c->d);
    }
    jpeg_create_decompress(cinfo);
    c->created = true;
    cinfo->progress = &c->progress;
    jpeg_mem_src(cinfo, b->d.data, (unsigned long)b->d.size);
    jpeg_read_header(cinfo, TRUE);
    if (b->d.opts.limits.max_memory_bytes) cinfo->mem->max_memory_to_use = 8 << 20;
    cinfo->out_color_space = JCS_EXT_RGBA;
    jpeg_start_decompress(cinfo);
    /* Full size (band_start): an iMCU row is max_v_samp_factor rows of 8-pixel blocks. */
    uint32_t imcu = (uint32_t)cinfo->max_v_samp_factor * DCTSIZE;
    uint32_t step = imcu * BAND_SKIP_FIRST_IMCU_ROWS;
    while (cinfo->output_scanline < b->split) {
        if (band_asked_to_yield(b)) {
            b->yielded = true;
            return IC_OK;
        }
        uint32_t n = b->split - cinfo->output_scanline;
        if (n > step) n = step;
        if (step < imcu * BAND_SKIP_MAX_IMCU_ROWS) step *= 2;
        if (jpeg_skip_scanlines(cinfo, n) != n) {
            c->status = ic_set_error(&b->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes", b->d.size);
            longjmp(c->jump, 1);
        }
    }
    JSAMPROW rows[IC_SINK_ROWS];
    while (cinfo->output_scanline < cinfo->output_height) {
        if (ic_dec_cancelled(&b->d) || __atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
            c->status = ic_dec_fail_cancelled(&b->d);
            longjmp(c->jump, 1);
        }
        uint32_t y = cinfo->output_scanline;
        uint32_t n = cinfo->output_height - y;
        if (n > IC_SINK_ROWS) n = IC_SINK_ROWS;
        for (uint32_t i = 0; i < n; i++) rows[i] = ic_dec_row(&b->d, 0, y + i);
        if (jpeg_read_scanlines(cinfo, rows, n) == 0) {
            c->status = ic_set_error(&b->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes",
                                     b->d.size);
            longjmp(c->jump, 1);
        }
    }
    return IC_OK;
}

static void *band_main(void *arg) {
    jpeg_band *b = arg;
    ic_thread_set_name("imagekit-help");
    b->status = band_run(b);
    ctx_end(&b->c);
    return NULL;
}

/* After ic_dec_begin: hands the bottom third of a large sequential full-size decode whose
 * rows need no further work to a helper thread (the caller then stops above it). The
 * helper's skip decodes the entropy-coded data above its rows again (about half the cost of
 * decoding them), so a third balances the two threads. Without a thread, nothing changes. */
static void band_start(jpeg_ctx *c) {
    ic_decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    uint32_t h = cinfo->output_height;
    if (!d->opts.use_helper_thread || c->suspending || c->cmyk || cinfo->progressive_mode ||
        cinfo->buffered_image || cinfo->comps_in_scan != cinfo->num_components ||
        cinfo->scale_denom != 1 || !ic_dec_is_direct(d) || ic_color_sink_converts(&d->color) ||
        (uint64_t)cinfo->output_width * h < BAND_MIN_PIXELS) {
        return;
    }
    jpeg_band *b = calloc(1, sizeof *b);
    if (!b) return;
    b->d = *d;
    b->d.err = &b->err;
    b->split = h - h / 3;
    ctx_init(&b->c, &b->d, false);
    b->c.stop = &b->stop;
    if (pthread_create(&b->thread, NULL, band_main, b) != 0) {
        free(b);
        return;
    }
    c->band = b;
    c->rows_end = b->split;
}

/* Waits for the helper, telling it to stop when the caller failed (`st`); the outcome: the
 * caller's failure, else the helper's (its error copied to the caller's), else IC_OK. When
 * the helper gave its rows back (yielded), the caller decodes them: rows_end is cleared and
 * the decode goes on from the caller's last row. */
static ic_status band_end(jpeg_ctx *c, ic_status st) {
    jpeg_band *b = c->band;
    if (!b) return st;
    if (st != IC_OK) __atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
    pthread_join(b->thread, NULL);
    bool yielded = b->yielded;
    if (st == IC_OK && b->status != IC_OK) {
        st = b->status;
        if (c->d->err) *c->d->err = b->err;
    }
    if (st == IC_OK && !yielded) c->d->helper_rows = c->cinfo.output_height - b->split;
    free(b);
    c->band = NULL;
    if (st == IC_OK && yielded) {
        c->rows_end = 0;
        c->stage = STAGE_ROWS;
        st = run(c);
    }
    return st;
}

/*
 * Runs the decode from its current stage as far as the input allows: to the
 * end with the memory source, or until the suspending source runs dry (the
 * stage is kept and the next call resumes there). libjpeg's errors longjmp
 * back here, so this frame must be the one calling libjpeg each time.
 */
static ic_status run(jpeg_ctx *c) {
    ic_decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    if (setjmp(c->jump)) {
        return c->status != IC_OK ? c->status : libjpeg_failure(cinfo, d);
    }
    ic_status st;
    switch (c->stage) {
    case STAGE_CREATE:
        jpeg_create_decompress(cinfo);
        c->created = true;
        cinfo->progress = &c->progress;
        if (c->suspending) {
            c->src.init_source = src_init;
            c->src.fill_input_buffer = src_fill;
            c->src.skip_input_data = src_skip;
            c->src.resync_to_restart = jpeg_resync_to_restart;
            c->src.term_source = src_term;
            cinfo->src = &c->src;
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
            st = dc_step(c);
            if (st != IC_OK || c->dc_own) return st;
            c->stage = STAGE_START;
        }
        if (!jpeg_start_decompress(cinfo)) return IC_OK;
        c->stage = c->dc_only ? STAGE_DC_SCANS : STAGE_BEGIN;
        if (!c->dc_only) goto begin;
        /* fall through */
    case STAGE_DC_SCANS:
        for (;;) {
            if (ic_dec_cancelled(d)) {
                c->status = ic_dec_fail_cancelled(d);
                longjmp(c->jump, 1);
            }
            int r = jpeg_consume_input(cinfo);
            if (r == JPEG_SUSPENDED) return IC_OK;
            if (r == JPEG_REACHED_EOI || (r == JPEG_SCAN_COMPLETED && dc_complete(cinfo))) break;
        }
        c->stage = STAGE_START_OUTPUT;
        /* fall through */
    case STAGE_START_OUTPUT:
        if (!jpeg_start_output(cinfo, cinfo->input_scan_number)) return IC_OK;
        c->stage = STAGE_BEGIN;
        /* fall through */
    case STAGE_BEGIN:
    begin:
        st = ic_dec_begin(d, cinfo->output_width, cinfo->output_height, 1);
        if (st != IC_OK) return st;
        band_start(c);
        c->stage = STAGE_ROWS;
        /* fall through */
    case STAGE_ROWS:
        return read_rows(c);
    case STAGE_DONE:
        return IC_OK;
    case STAGE_DC_OWN:
        st = dc_step(c);
        if (st != IC_OK || c->dc_own) return st;
        /* Given way: libjpeg decodes the file. */
        c->stage = STAGE_START;
        goto start;
    }
    return IC_OK;
}

static void ctx_init(jpeg_ctx *c, ic_decoder *d, bool suspending) {
    memset(c, 0, sizeof *c);
    c->d = d;
    c->status = IC_OK;
    c->suspending = suspending;
    c->cinfo.err = jpeg_std_error(&c->pub);
    c->pub.error_exit = on_error_exit;
    c->pub.emit_message = on_emit_message;
    c->pub.output_message = on_output_message;
    c->progress.progress_monitor = on_progress;
}

/* Releases libjpeg, the DC decoder and the coefficient reservation. */
static void ctx_end(jpeg_ctx *c) {
    if (c->created) jpeg_destroy_decompress(&c->cinfo);
    c->created = false;
    ic_jpeg_dc_free(c->dc);
    c->dc = NULL;
    ic_dec_release(c->d, c->reserved);
    c->reserved = 0;
}

ic_status ic_jpeg_decode(ic_decoder *d) {
    jpeg_ctx c;
    ctx_init(&c, d, false);
    ic_status st = band_end(&c, run(&c));
    ctx_end(&c);
    return st;
}

/* ---- The incremental engine: run() on the suspending source. ---- */

/* Keeps the unconsumed bytes libjpeg points at (in `held` or in the caller's
 * piece) at the start of `held`, with room for `extra` more. */
static ic_status hold_tail(jpeg_ctx *c, size_t extra) {
    size_t tail = c->src.bytes_in_buffer;
    size_t need = tail + extra;
    if (need > c->held_capacity || (c->held_capacity > 2 * need && c->held_capacity > (64u << 10))) {
        size_t capacity = need < (64u << 10) ? (64u << 10) : need;
        uint8_t *fresh = malloc(capacity);
        if (!fresh) {
            return ic_set_error(c->d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot hold %zu input bytes",
                                need);
        }
        if (tail) memcpy(fresh, c->src.next_input_byte, tail);
        free(c->held);
        c->held = fresh;
        c->held_capacity = capacity;
    } else if (tail) {
        memmove(c->held, c->src.next_input_byte, tail);
    }
    c->src.next_input_byte = c->held;
    return IC_OK;
}

/* After run() on a piece: keeps what libjpeg has not consumed (the caller's piece goes away
 * after this call) and drops the DC decoder's held bytes once it is done with them. */
static ic_status settle_input(jpeg_ctx *c, ic_status st) {
    if (st == IC_OK && c->stage != STAGE_DONE && c->src.bytes_in_buffer != 0) {
        bool in_held = c->held && c->src.next_input_byte >= c->held &&
                       c->src.next_input_byte < c->held + c->held_capacity;
        if (!in_held) st = hold_tail(c, 0);
    }
    if (c->dc_in && (!c->dc_own || c->stage == STAGE_DONE || st != IC_OK)) dc_release_input(c);
    return st;
}

static ic_status inc_feed(void *state, const uint8_t *data, size_t size) {
    jpeg_ctx *c = state;
    if (c->stage == STAGE_DONE || c->whole_body) return IC_OK;
    if (c->stage == STAGE_DC_OWN) {
        /* The DC decoder holds every byte until its walk is done. */
        ic_status st = dc_hold(c, data, size);
        if (st != IC_OK) return st;
        return settle_input(c, run(c));
    }
    size_t skipped = c->skip < size ? c->skip : size;
    c->skip -= skipped;
    data += skipped;
    size -= skipped;
    if (size == 0) return IC_OK;
    if (c->src.bytes_in_buffer == 0) {
        /* Nothing left over: libjpeg reads the caller's piece where it is. */
        c->src.next_input_byte = data;
        c->src.bytes_in_buffer = size;
    } else {
        ic_status st = hold_tail(c, size);
        if (st != IC_OK) return st;
        memcpy(c->held + c->src.bytes_in_buffer, data, size);
        c->src.bytes_in_buffer += size;
    }
    return settle_input(c, run(c));
}

static ic_status inc_end(void *state) {
    jpeg_ctx *c = state;
    if (c->stage == STAGE_DONE) return IC_OK;
    c->eof = true;
    ic_status st = run(c);
    if (st == IC_OK && c->stage != STAGE_DONE) {
        st = ic_set_error(c->d->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes",
                          c->d->size);
    }
    return st;
}

static ic_inc_phase inc_phase(const void *state) {
    const jpeg_ctx *c = state;
    if (c->whole_body) return IC_INC_WHOLE_BODY;
    return c->stage > STAGE_HEADER ? IC_INC_STREAMING : IC_INC_HEADER;
}

static uint64_t inc_buffered(const void *state) {
    const jpeg_ctx *c = state;
    return c->stage == STAGE_DONE ? 0 : c->src.bytes_in_buffer + c->dc_len;
}

static uint32_t inc_rows(const void *state) {
    const jpeg_ctx *c = state;
    if (c->dc_own) return c->stage == STAGE_DONE ? c->cinfo.output_height : 0;
    return c->stage >= STAGE_ROWS ? c->cinfo.output_scanline : 0;
}

static void inc_free(void *state) {
    jpeg_ctx *c = state;
    ctx_end(c);
    free(c->held);
    dc_release_input(c);
    free(c);
}

static const ic_inc_engine jpeg_engine = {inc_feed, inc_end, inc_phase, inc_buffered, inc_rows,
                                          inc_free};

ic_status ic_jpeg_inc_new(ic_decoder *d, const ic_inc_engine **engine, void **state) {
    jpeg_ctx *c = malloc(sizeof *c);
    if (!c) return ic_set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot allocate a decoder");
    ctx_init(c, d, true);
    *engine = &jpeg_engine;
    *state = c;
    return IC_OK;
}

/* ---- Probe: walk the marker segments up to the first SOS. ---- */

ic_status ic_jpeg_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    size_t i = 2;
    bool have_sof = false;
    ic_icc_chunk chunks[IC_ICC_MAX_CHUNKS];
    size_t icc_chunks = 0;
    while (i + 4 <= n) {
        if (p[i] != 0xFF) {
            return ic_set_error(err, IC_ERR_CORRUPT, "JPEG: expected a marker at byte %zu", i);
        }
        uint8_t marker = p[i + 1];
        if (marker == 0xFF) { /* fill byte */
            i++;
            continue;
        }
        if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
            i += 2;
            continue;
        }
        if (marker == 0xD9 || marker == 0xDA) break;
        size_t len = (size_t)p[i + 2] << 8 | p[i + 3];
        if (len < 2 || i + 2 + len > n) break;
        const uint8_t *seg = p + i + 4;
        size_t seg_len = len - 2;
        if (marker == 0xE1 && seg_len > 6 && memcmp(seg, "Exif\0\0", 6) == 0 &&
            info->orientation == 1) {
            info->orientation = ic_exif_orientation(seg + 6, seg_len - 6);
        }
        if (marker == 0xE2 && icc_chunks < IC_ICC_MAX_CHUNKS &&
            ic_icc_jpeg_chunk(seg, seg_len, &chunks[icc_chunks])) {
            icc_chunks++;
        }
        bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
                   marker != 0xCC;
        if (sof && !have_sof && seg_len >= 6) {
            have_sof = true;
            info->bit_depth = seg[0];
            info->height = (uint32_t)seg[1] << 8 | seg[2];
            info->width = (uint32_t)seg[3] << 8 | seg[4];
            info->is_progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA ||
                                   marker == 0xCE;
        }
        i += 2 + len;
    }
    if (!have_sof) {
        return ic_set_error(err, IC_ERR_CORRUPT, "JPEG: no frame header (SOF) before the scan data");
    }
    info->has_alpha = 0;
    info->frame_count = 1;
    size_t icc_total = ic_icc_jpeg_total(chunks, icc_chunks);
    if (icc_total) {
        /* The header is in the first chunk when that chunk holds 20 bytes or more. */
        for (size_t c = 0; c < icc_chunks; c++) {
            if (chunks[c].seq == 1) ic_icc_note_probe(info, chunks[c].data, chunks[c].size, icc_total);
        }
    }
    return IC_OK;
}
