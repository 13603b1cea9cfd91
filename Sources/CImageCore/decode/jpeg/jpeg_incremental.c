/*
 * jpeg_incremental.c — the JPEG decoder's incremental engine: ic__jpeg_run on the
 * suspending source, fed piece by piece. libjpeg reads a piece where the caller's
 * buffer is; what it has not consumed when the piece ends is kept here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ic_jpeg_internal.h"

/* Keeps the unconsumed bytes libjpeg points at (in `held` or in the caller's
 * piece) at the start of `held`, with room for `extra` more. */
static ic_status hold_tail(jpeg_ctx *c, size_t extra) {
    size_t tail = c->src.bytes_in_buffer;
    size_t need = tail + extra;
    if (need > c->held_capacity || (c->held_capacity > 2 * need && c->held_capacity > (64u << 10))) {
        size_t capacity = need < (64u << 10) ? (64u << 10) : need;
        uint8_t *fresh = malloc(capacity);
        if (!fresh) {
            return ic__set_error(c->d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot hold %zu input bytes",
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
    if (c->dc_in && (!c->dc_own || c->stage == STAGE_DONE || st != IC_OK)) ic__jpeg_dc_release_input(c);
    return st;
}

static ic_status inc_feed(void *state, const uint8_t *data, size_t size) {
    jpeg_ctx *c = state;
    if (c->stage == STAGE_DONE || c->whole_body) return IC_OK;
    if (c->stage == STAGE_DC_OWN) {
        /* The DC decoder holds every byte until its walk is done. */
        ic_status st = ic__jpeg_dc_hold(c, data, size);
        if (st != IC_OK) return st;
        return settle_input(c, ic__jpeg_run(c));
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
    return settle_input(c, ic__jpeg_run(c));
}

static ic_status inc_end(void *state) {
    jpeg_ctx *c = state;
    if (c->stage == STAGE_DONE) return IC_OK;
    c->eof = true;
    ic_status st = ic__jpeg_run(c);
    if (st == IC_OK && c->stage != STAGE_DONE) {
        st = ic__set_error(c->d->err, IC_ERR_TRUNCATED, "JPEG: truncated after %zu bytes",
                          c->d->size);
    }
    return st;
}

static ic__inc_phase inc_phase(const void *state) {
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
    ic__jpeg_ctx_end(c);
    free(c->held);
    ic__jpeg_dc_release_input(c);
    free(c);
}

static const ic__inc_engine jpeg_engine = {inc_feed, inc_end, inc_phase, inc_buffered, inc_rows,
                                          inc_free};

ic_status ic__jpeg_inc_new(ic__decoder *d, const ic__inc_engine **engine, void **state) {
    jpeg_ctx *c = malloc(sizeof *c);
    if (!c) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot allocate a decoder");
    ic__jpeg_ctx_init(c, d, true);
    *engine = &jpeg_engine;
    *state = c;
    return IC_OK;
}
