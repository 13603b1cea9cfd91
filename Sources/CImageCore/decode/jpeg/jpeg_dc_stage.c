/*
 * jpeg_dc_stage.c — the stage where ImageKit's DC-only decoder (jpeg_dc.c) has a
 * progressive file decoded at 1/8: it is given the bytes after the first scan header
 * (held here for an incremental decode until its walk ends), and when it gives way,
 * libjpeg decodes the file from where its header read stopped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ic_jpeg_internal.h"

/* Most input bytes the DC decoder holds before the walk ends (incremental decodes): half
 * the coefficient memory libjpeg would take instead, 1 MiB at least. */
static size_t dc_hold_limit(const jpeg_ctx *c) {
    uint64_t limit = c->coef / 2;
    if (limit < (1u << 20)) limit = 1u << 20;
    return limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
}

ic_status ic__jpeg_dc_hold(jpeg_ctx *c, const uint8_t *data, size_t size) {
    if (size > c->dc_capacity - c->dc_len) {
        size_t capacity = c->dc_capacity ? c->dc_capacity : (64u << 10);
        while (capacity - c->dc_len < size) {
            if (capacity > SIZE_MAX / 2) capacity = SIZE_MAX;
            else capacity *= 2;
        }
        uint8_t *grown = realloc(c->dc_in, capacity);
        if (!grown) {
            return ic__set_error(c->d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot hold %zu input bytes",
                                c->dc_len + size);
        }
        c->dc_in = grown;
        c->dc_capacity = capacity;
    }
    memcpy(c->dc_in + c->dc_len, data, size);
    c->dc_len += size;
    return IC_OK;
}

void ic__jpeg_dc_release_input(jpeg_ctx *c) {
    free(c->dc_in);
    c->dc_in = NULL;
    c->dc_len = c->dc_capacity = 0;
}

/* The DC decoder gives way: libjpeg decodes the file from its first scan (its source is
 * where its header read stopped; an incremental decode's held bytes go back to it), with
 * the size check and reservation its decode always had. */
static ic_status dc_give_way(jpeg_ctx *c) {
    ic__decoder *d = c->d;
    const char *why = c->dc ? ic__jpeg_dc_why(c->dc) : NULL;
    if (d->jpeg_path == IC_JPEG_PATH_DC) {
        return ic__set_error(d->err, IC_ERR_UNSUPPORTED_FEATURE, "JPEG: the DC decoder gives way: %s",
                            why ? why : "unknown");
    }
    ic__jpeg_dc_free(c->dc);
    c->dc = NULL;
    c->dc_own = false;
    ic__dec_release(d, c->reserved);
    c->reserved = 0;
    ic_status st = ic__dec_check_size(d, c->cinfo.image_width, c->cinfo.image_height, 1, c->coef);
    if (st != IC_OK) return st;
    st = ic__dec_reserve(d, c->coef);
    if (st != IC_OK) return st;
    c->reserved = c->coef;
    ic__jpeg_libjpeg_setup(c);
    if (c->suspending) {
        c->src.next_input_byte = c->dc_in;
        c->src.bytes_in_buffer = c->dc_len;
    }
    return IC_OK;
}

ic_status ic__jpeg_dc_stage(jpeg_ctx *c) {
    ic__decoder *d = c->d;
    j_decompress_ptr cinfo = &c->cinfo;
    if (!c->dc) {
        c->dc = ic__jpeg_dc_new(d, cinfo);
        if (!c->dc) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot allocate the DC decoder");
        if (c->suspending && c->src.bytes_in_buffer) {
            ic_status st = ic__jpeg_dc_hold(c, c->src.next_input_byte, c->src.bytes_in_buffer);
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
    ic__jpeg_dc_step step = ic__jpeg_dc_walk(c->dc, data, size, !c->suspending || c->eof);
    if (step == IC_JPEG_DC_CANCELLED) return IC_ERR_CANCELLED;
    if (step == IC_JPEG_DC_MORE) {
        return c->dc_len > dc_hold_limit(c) ? dc_give_way(c) : IC_OK;
    }
    if (step == IC_JPEG_DC_READY) {
        bool gave_way = false;
        ic_status st = ic__jpeg_dc_run(c->dc, data, size, &gave_way);
        if (!gave_way) {
            if (st == IC_OK) {
                c->stage = STAGE_DONE;
                ic__jpeg_dc_free(c->dc);
                c->dc = NULL;
                ic__dec_release(d, c->reserved);
                c->reserved = 0;
            }
            return st;
        }
    }
    return dc_give_way(c);
}
