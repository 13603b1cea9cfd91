/*
 * png_chunks.c — the one PNG chunk walker (ic_png_chunks.h): over a whole buffer and
 * fed in order, with one CRC function (libdeflate's, the same values as zlib's crc32
 * and faster) and one set of limits.
 */
#include <string.h>

#include <libdeflate.h>

#include "../common/ic_bytes.h"
#include "ic_png_chunks.h"

uint32_t ic__png_crc(uint32_t crc, const uint8_t *data, size_t size) {
    return (uint32_t)libdeflate_crc32(crc, data, size);
}

/* ---- A whole buffer. ---- */

bool ic__png_next_chunk(const uint8_t *p, size_t n, size_t *pos, ic__png_chunk *c) {
    size_t i = *pos;
    if (i > n || n - i < 8) return false;
    c->at = i;
    c->length = ic__be32(p + i);
    c->type = p + i + 4;
    c->data = p + i + 8;
    c->data_in = c->length <= IC_PNG_MAX_CHUNK_LENGTH && c->length <= n - i - 8;
    c->complete = c->data_in && (size_t)c->length + 4 <= n - i - 8;
    *pos = c->complete ? i + 12 + (size_t)c->length : n;
    return true;
}

bool ic__png_chunk_is(const ic__png_chunk *c, const char *type) { return memcmp(c->type, type, 4) == 0; }

bool ic__png_chunk_crc_ok(const ic__png_chunk *c) {
    return ic__png_crc(0, c->type, 4 + (size_t)c->length) == ic__be32(c->data + c->length);
}

/* ---- Fed in order, from the first IDAT on. ---- */

static ic_status unusual(ic__decoder *d, const char *what, size_t at) {
    return ic__set_error(d->err, IC_ERR_CORRUPT, "PNG: %s (chunk at byte %zu)", what, at);
}

static bool is_letter(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

enum { WALK_HEAD, WALK_DATA, WALK_CRC, WALK_DONE };

void ic__png_walk_init(ic__png_walk *w, uint64_t idat_at) {
    memset(w, 0, sizeof *w);
    w->pos = w->chunk_at = idat_at;
    w->in_idat = true;
}

/* The rules on a chunk's length and type, once its header is in (libpng checks them before
 * it reads the data). */
static ic_status walk_head(ic__decoder *d, ic__png_walk *w) {
    const uint8_t *type = w->head + 4;
    size_t at = (size_t)w->chunk_at;
    w->length = ic__be32(w->head);
    w->idat = memcmp(type, "IDAT", 4) == 0;
    if (!w->idat && w->in_idat) {
        w->in_idat = false;
        w->idat_end = w->chunk_at;
    }
    if (w->idat && !w->in_idat) return unusual(d, "IDAT after other chunks", at);
    /* libpng refuses other chunks over IC_PNG_CHUNK_LIMIT; it allows bigger IDATs (up to
     * PNG's own limit), which are rare enough to leave to it. */
    if (w->length > IC_PNG_MAX_CHUNK_LENGTH) return unusual(d, "chunk over 2^31 - 1 bytes", at);
    if (!w->idat && w->length > IC_PNG_CHUNK_LIMIT) return unusual(d, "chunk over 16 MiB", at);
    if (!is_letter(type[0]) || !is_letter(type[1]) || !is_letter(type[2]) || !is_letter(type[3])) {
        return unusual(d, "invalid chunk type", at);
    }
    /* libpng refuses a critical chunk here (IHDR or PLTE out of place), whole or cut short. */
    if (!w->idat && !(type[0] & 0x20) && memcmp(type, "IEND", 4) != 0) {
        return unusual(d, "critical chunk after the image data", at);
    }
    w->crc = (uint32_t)ic__png_crc(0, type, 4);
    w->left = w->length;
    w->part = w->length ? WALK_DATA : WALK_CRC;
    return IC_OK;
}

ic_status ic__png_walk_feed(ic__decoder *d, ic__png_walk *w, const uint8_t *data, size_t size,
                           size_t *used, bool *idat) {
    ic_status st = IC_OK;
    size_t n;
    *idat = false;
    switch (w->part) {
    case WALK_HEAD:
        n = size < 8u - w->have ? size : 8u - w->have;
        memcpy(w->head + w->have, data, n);
        w->have = (uint8_t)(w->have + n);
        if (w->have == 8) {
            w->have = 0;
            st = walk_head(d, w);
        }
        break;
    case WALK_DATA:
        n = w->left < size ? (size_t)w->left : size;
        w->crc = (uint32_t)ic__png_crc(w->crc, data, n);
        w->left -= n;
        if (w->idat) {
            *idat = true;
            w->payload += n;
        }
        if (w->left == 0) w->part = WALK_CRC;
        break;
    case WALK_CRC:
        n = size < 4u - w->have ? size : 4u - w->have;
        memcpy(w->crc_bytes + w->have, data, n);
        w->have = (uint8_t)(w->have + n);
        if (w->have < 4) break;
        w->have = 0;
        if (w->crc != ic__be32(w->crc_bytes)) {
            st = unusual(d, "chunk CRC mismatch", (size_t)w->chunk_at);
        } else if (!w->idat && memcmp(w->head + 4, "IEND", 4) == 0) {
            w->part = WALK_DONE;
        } else {
            w->part = WALK_HEAD;
            w->chunk_at = w->pos + n;
        }
        break;
    default: /* after IEND: ignored, as libpng does not read it */
        n = size;
        break;
    }
    w->pos += n;
    *used = n;
    return st;
}

ic_status ic__png_walk_end(ic__decoder *d, const ic__png_walk *w) {
    /* libpng stops at the end of the input in IEND or an ancillary chunk once it has the
     * pixels; not inside the IDATs. */
    if (w->part == WALK_DONE || !w->in_idat) return IC_OK;
    return unusual(d, "truncated IDAT chunk", (size_t)w->chunk_at);
}
