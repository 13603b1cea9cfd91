/*
 * gif_stream.c — the incremental GIF engine: ic__gif_decode's walk (gif.c) run
 * over the bytes as they arrive, for first-frame decodes (all_frames is left
 * to ic_decode on the whole body).
 *
 * The engine waits for the screen descriptor and the global colour table
 * (IC_INC_HEADER), checks the limits as ic__gif_decode does (the screen, then
 * the first frame's working memory: a limit fails there and then), starts the
 * output and streams with the body kept (IC_INC_STREAMING_KEPT): at each piece
 * the walk goes on over the body incremental.c keeps, and rows go to the
 * output, or to a thumbnail's resampler, as the LZW data arrives (an
 * interlaced image's at its end).
 *
 * ic__gif_decode reads the whole file before it decodes: the loop count, and
 * whether any image's data ends (if none does it fails, whatever the first
 * image's pixels). The engine reads them at the end, on the whole body, and
 * fails as a data failure when no image's data ends. Every data failure
 * (corrupt, truncated) hands the kept body to ic_decode, whose answer stands;
 * limits, memory and cancellation fail as they are met and are final. The
 * walk reports a failure met as an image starts (its pixel limit, its
 * buffers) once that image's data has ended, when ic__gif_decode, which counts
 * the complete images first, would reach it too. So a body the engine
 * finishes gets ic_decode's pixels, size, frame count, delay, loop count and
 * opacity, and any other body ic_decode's answer.
 */
#include <stdlib.h>

#include "ic_gif_internal.h"
#include "ic_inc_engine.h"

typedef struct gif_stream {
    ic__decoder *d;
    const uint8_t *const *body; /* incremental.c's kept body and its size */
    const size_t *body_size;
    ic__gif_header header;
    ic__gif_walk *walk;          /* once the header is in */
} gif_stream;

static ic_status stream_feed(void *state, const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    gif_stream *g = state;
    ic__decoder *d = g->d;
    const uint8_t *p = *g->body;
    size_t n = *g->body_size;
    if (!g->walk) {
        if (ic__gif_read_header(p, n, &g->header, NULL) != IC_OK) return IC_OK; /* not all in yet */
        ic_status st = ic__gif_check_screen(d, &g->header);
        if (st != IC_OK) return st;
        st = ic__gif_walk_begin(d, &g->header, 1, &g->walk);
        if (st != IC_OK) return st;
    }
    return ic__gif_walk_run(g->walk, p, n, false);
}

static ic_status stream_end(void *state) {
    gif_stream *g = state;
    ic__decoder *d = g->d;
    const uint8_t *p = *g->body;
    size_t n = *g->body_size;
    /* Still in the header: ic__gif_decode's error on the same bytes. */
    if (!g->walk) return ic__gif_read_header(p, n, &g->header, d->err);
    ic_status st = ic__gif_walk_run(g->walk, p, n, true);
    if (st != IC_OK) return st;
    ic__gif_scan scan;
    ic__gif_scan_blocks(p, n, g->header.first_block, &scan);
    d->loop_count = scan.loop_count;
    if (scan.images == 0) {
        return ic__set_error(d->err, IC_ERR_CORRUPT, "GIF: no image's data ends in the whole file");
    }
    return IC_OK;
}

static ic__inc_phase stream_phase(const void *state) {
    const gif_stream *g = state;
    return g->walk ? IC_INC_STREAMING_KEPT : IC_INC_HEADER;
}

static uint64_t stream_buffered(const void *state) {
    (void)state;
    return 0; /* the walk reads the body incremental.c keeps, and counts */
}

static uint32_t stream_rows(const void *state) {
    const gif_stream *g = state;
    return g->walk ? ic__gif_walk_rows(g->walk) : 0;
}

static void stream_free(void *state) {
    gif_stream *g = state;
    if (g->walk) ic__gif_walk_free(g->walk);
    free(g);
}

static const ic__inc_engine gif_engine = {stream_feed, stream_end, stream_phase, stream_buffered,
                                         stream_rows, stream_free};

ic_status ic__gif_inc_new(ic__decoder *d, const uint8_t *const *body, const size_t *body_size,
                         const ic__inc_engine **engine, void **state) {
    gif_stream *g = calloc(1, sizeof *g);
    if (!g) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "GIF: cannot allocate a decoder");
    g->d = d;
    g->body = body;
    g->body_size = body_size;
    *engine = &gif_engine;
    *state = g;
    return IC_OK;
}
