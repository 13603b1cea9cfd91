/*
 * jpeg_band.c — a lone full decode on two threads.
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
 *
 * The helper holds only what its decompression needs (the bytes, where its rows go,
 * the flags it reads, an error of its own), never a copy of the caller's decoder.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "ic_jpeg_internal.h"
#include "ic_thread.h"

/* Smallest image (pixels) whose decode gets a helper thread: its start and its second
 * header read cost tens of microseconds. */
#define BAND_MIN_PIXELS IC_HELPER_MIN_PIXELS(1u << 21)

/* iMCU rows the helper skips between two looks at helper_yield_flag: few at first, doubling
 * up to the last. Another job most often arrives within a few milliseconds of a lone one
 * (two streams of loads finishing together), so early looks bound the skip thrown away then;
 * each look costs a row of blocks decoded rather than skipped where upsampling needs context
 * rows (libjpeg reads the last skipped row group), so later ones are few: about 2 % of the
 * skip in all. */
#define BAND_SKIP_FIRST_IMCU_ROWS 4
#define BAND_SKIP_MAX_IMCU_ROWS 64

/* The helper's decode: rows [split, height) of its own decompression of the same bytes. */
typedef struct jpeg_band {
    jpeg_glue glue; /* first: cinfo.err points here */
    struct jpeg_decompress_struct cinfo;
    bool created;
    pthread_t thread;
    const uint8_t *data; /* the caller's bytes (whole: not an incremental decode) */
    size_t size;
    uint8_t *pixels;     /* row 0 of the output image (direct mode: rows land there) */
    size_t stride;
    bool limited;        /* the decode has a memory limit */
    const int *yield_flag;
    ic_error err;
    uint32_t split;
    int stop; /* set (atomically) when the caller failed: the helper stops at its next row */
    ic_status status;
    bool yielded; /* gave its rows back before writing any (helper_yield_flag) */
} jpeg_band;

/* True when the caller asked helpers to give way to other work. */
static bool band_asked_to_yield(const jpeg_band *b) {
    return b->yield_flag && __atomic_load_n(b->yield_flag, __ATOMIC_ACQUIRE) != 0;
}

/* The helper's work; libjpeg's errors longjmp back here. */
static ic_status band_run(jpeg_band *b) {
    jpeg_glue *g = &b->glue;
    j_decompress_ptr cinfo = &b->cinfo;
    if (setjmp(g->jump)) {
        return g->status != IC_OK ? g->status : ic__jpeg_libjpeg_failure(cinfo);
    }
    jpeg_create_decompress(cinfo);
    b->created = true;
    cinfo->progress = &g->progress;
    jpeg_mem_src(cinfo, b->data, (unsigned long)b->size);
    jpeg_read_header(cinfo, TRUE);
    if (b->limited) cinfo->mem->max_memory_to_use = 8 << 20;
    cinfo->out_color_space = JCS_EXT_RGBA;
    jpeg_start_decompress(cinfo);
    /* Full size (ic__jpeg_band_start): an iMCU row is max_v_samp_factor rows of 8-pixel blocks. */
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
            g->status = ic__set_error(&b->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes", b->size);
            longjmp(g->jump, 1);
        }
    }
    JSAMPROW rows[IC_SINK_ROWS];
    while (cinfo->output_scanline < cinfo->output_height) {
        if ((g->cancel_flag && __atomic_load_n(g->cancel_flag, __ATOMIC_ACQUIRE)) ||
            __atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
            g->status = ic__set_error(&b->err, IC_ERR_CANCELLED, "JPEG: decode cancelled");
            longjmp(g->jump, 1);
        }
        uint32_t y = cinfo->output_scanline;
        uint32_t n = cinfo->output_height - y;
        if (n > IC_SINK_ROWS) n = IC_SINK_ROWS;
        for (uint32_t i = 0; i < n; i++) rows[i] = b->pixels + (size_t)(y + i) * b->stride;
        if (jpeg_read_scanlines(cinfo, rows, n) == 0) {
            g->status = ic__set_error(&b->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes",
                                     b->size);
            longjmp(g->jump, 1);
        }
    }
    return IC_OK;
}

static void *band_main(void *arg) {
    jpeg_band *b = arg;
    ic_thread_set_name("imagekit-help");
    b->status = band_run(b);
    if (b->created) jpeg_destroy_decompress(&b->cinfo);
    b->created = false;
    return NULL;
}

/* Hands the bottom third of a large sequential full-size decode whose rows need no further
 * work to a helper thread (the caller then stops above it). The helper's skip decodes the
 * entropy-coded data above its rows again (about half the cost of decoding them), so a
 * third balances the two threads. Without a thread, nothing changes. */
void ic__jpeg_band_start(jpeg_ctx *c) {
    ic__decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    uint32_t h = cinfo->output_height;
    if (!d->opts.use_helper_thread || c->suspending || c->cmyk || cinfo->progressive_mode ||
        cinfo->buffered_image || cinfo->comps_in_scan != cinfo->num_components ||
        cinfo->scale_denom != 1 || !ic__dec_is_direct(d) || ic__color_sink_converts(&d->color) ||
        (uint64_t)cinfo->output_width * h < BAND_MIN_PIXELS) {
        return;
    }
    jpeg_band *b = calloc(1, sizeof *b);
    if (!b) return;
    b->data = d->data;
    b->size = d->size;
    b->pixels = ic__dec_row(d, 0, 0);
    b->stride = d->image->stride;
    b->limited = d->opts.limits.max_memory_bytes != 0;
    b->yield_flag = d->opts.helper_yield_flag;
    b->split = h - h / 3;
    ic__jpeg_glue_init(&b->glue, &b->cinfo, &b->err, &b->size, d->opts.cancel_flag,
                      d->opts.limits.max_memory_bytes);
    b->glue.stop = &b->stop;
    if (pthread_create(&b->thread, NULL, band_main, b) != 0) {
        free(b);
        return;
    }
    c->band = b;
    c->rows_end = b->split;
}

/* Tells the helper to stop when the caller failed (`st`); the outcome: the caller's failure,
 * else the helper's (its error copied to the caller's), else IC_OK. When the helper gave its
 * rows back (yielded), the caller decodes them: rows_end is cleared and the decode goes on
 * from the caller's last row. */
ic_status ic__jpeg_band_end(jpeg_ctx *c, ic_status st) {
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
        st = ic__jpeg_run(c);
    }
    return st;
}
