/*
 * apng.c — APNG animations (acTL, fcTL, fdAT chunks) on top of png.c's reader.
 *
 * Debian's libpng has no APNG support, so each frame is re-wrapped as a PNG of
 * its own — the file's IHDR with the frame's size, its PLTE and tRNS, the
 * frame's IDAT or fdAT payloads as IDAT chunks, and IEND — which png.c decodes
 * to straight RGBA8 without looking at CRCs: every chunk copied is checked here
 * first.
 *
 * Frames are composited as the APNG specification says, on a straight-alpha
 * canvas that starts transparent black: before frame i, frame i-1's region is
 * disposed (none; background: cleared to transparent; previous: restored to
 * what it was before frame i-1, which on frame 0 means background), then frame
 * i is blended into its region (source: replaced; over: alpha compositing).
 * Output frame i is the canvas after frame i, premultiplied by the sink.
 *
 * This path runs only with all_frames. The default decode stays png.c's still
 * path: the IDAT image, which is also frame 0 here when an fcTL precedes the
 * IDAT. When it does not, the IDAT image is a fallback for readers without
 * APNG support and not part of the animation: all_frames returns the fcTL
 * frames only, as browsers play them (Pillow lists the IDAT image as an extra
 * frame 0).
 *
 * Everything is checked in one pass over the chunk headers before any pixel
 * memory is allocated: sequence numbers (0, 1, 2, ... over fcTL and fdAT, no
 * gaps or repeats), each frame's rectangle inside the canvas, frame data
 * present, CRCs of the chunks read here, and the frame count against the acTL
 * (fewer frames: an error; more: the extra ones are ignored, as Pillow does).
 */
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "../common/ic_bytes.h"
#include "ic_apng.h"
#include "ic_dec_color.h"
#include "ic_decoder.h"
#include "ic_png_chunks.h"
#include "ic_sink.h"

#define APNG_DISPOSE_NONE 0
#define APNG_DISPOSE_BACKGROUND 1
#define APNG_DISPOSE_PREVIOUS 2
#define APNG_BLEND_SOURCE 0
#define APNG_BLEND_OVER 1

/* Facts from the chunks before the first IDAT. */
typedef struct apng_header {
    uint32_t width, height;
    const uint8_t *ihdr;   /* IHDR data (13 bytes) */
    ic__png_chunk plte, trns; /* length 0 type NULL when absent */
    ic__png_chunk actl;
    uint32_t num_frames;   /* 0: a still PNG */
    uint32_t num_plays;
} apng_header;

static void read_header(const uint8_t *p, size_t n, apng_header *h) {
    memset(h, 0, sizeof *h);
    if (n < 33 || memcmp(p + 12, "IHDR", 4) != 0 || ic__be32(p + 8) != 13) return;
    h->ihdr = p + 16;
    h->width = ic__be32(p + 16);
    h->height = ic__be32(p + 20);
    size_t pos = 8;
    ic__png_chunk c;
    unsigned actl_count = 0;
    while (ic__png_next_chunk(p, n, &pos, &c) && c.complete) {
        if (ic__png_chunk_is(&c, "IDAT") || ic__png_chunk_is(&c, "IEND")) break;
        if (ic__png_chunk_is(&c, "PLTE")) h->plte = c;
        if (ic__png_chunk_is(&c, "tRNS")) h->trns = c;
        if (ic__png_chunk_is(&c, "acTL")) {
            actl_count++;
            h->actl = c;
        }
    }
    if (actl_count != 1 || h->actl.length < 8) return;
    uint32_t frames = ic__be32(h->actl.data);
    if (frames == 0 || frames > 0x80000000u) return;
    h->num_frames = frames;
    h->num_plays = ic__be32(h->actl.data + 4);
}

uint32_t ic__apng_frame_count(const uint8_t *data, size_t size) {
    apng_header h;
    read_header(data, size, &h);
    return h.num_frames;
}

/* ---- Frame control. ---- */

typedef struct apng_fctl {
    uint32_t sequence, width, height, x, y;
    uint16_t delay_num, delay_den;
    uint8_t dispose, blend;
} apng_fctl;

static void read_fctl(const uint8_t *p, apng_fctl *f) {
    f->sequence = ic__be32(p);
    f->width = ic__be32(p + 4);
    f->height = ic__be32(p + 8);
    f->x = ic__be32(p + 12);
    f->y = ic__be32(p + 16);
    f->delay_num = (uint16_t)ic__be16(p + 20);
    f->delay_den = (uint16_t)ic__be16(p + 22);
    f->dispose = p[24];
    f->blend = p[25];
}

/* Milliseconds of a frame; a denominator of 0 means 1/100 s. Rounded to nearest. */
static uint32_t delay_ms(const apng_fctl *f) {
    uint32_t den = f->delay_den ? f->delay_den : 100;
    return (uint32_t)(((uint64_t)f->delay_num * 1000 + den / 2) / den);
}

/* ---- The checking pass. ---- */

typedef struct apng_plan {
    uint32_t frames;        /* frames to decode: the acTL's count */
    bool idat_is_frame0;    /* an fcTL precedes the IDAT */
    bool uses_previous;     /* some frame disposes to previous */
    uint64_t max_stream;    /* largest re-wrapped frame, bytes */
    uint64_t max_frame_px;  /* largest frame, pixels */
    uint32_t max_frame_h;   /* tallest frame */
} apng_plan;

static ic_status corrupt(ic__decoder *d, const char *what, size_t at) {
    return ic__set_error(d->err, IC_ERR_CORRUPT, "APNG: %s (chunk at byte %zu)", what, at);
}

/* Bytes of a re-wrapped frame around its data chunks: signature, IHDR, PLTE, tRNS, IEND. */
static uint64_t wrap_overhead(const apng_header *h) {
    uint64_t bytes = 8 + 25 + 12;
    if (h->plte.type) bytes += 12 + (uint64_t)h->plte.length;
    if (h->trns.type) bytes += 12 + (uint64_t)h->trns.length;
    return bytes;
}

/* Checks the file's animation chunks; fills `plan`. Allocates nothing. The
 * chunks copied into every frame get fresh CRCs there, so theirs are checked
 * here as libpng would: a bad IHDR or PLTE is an error, a bad tRNS is dropped. */
static ic_status check_chunks(ic__decoder *d, apng_header *h, apng_plan *plan) {
    const uint8_t *p = d->data;
    size_t n = d->size, pos = 8;
    memset(plan, 0, sizeof *plan);
    ic__png_chunk ihdr = {.at = 8, .length = 13, .type = p + 12, .data = p + 16, .data_in = true, .complete = true};
    if (!ic__png_chunk_crc_ok(&ihdr)) return corrupt(d, "CRC mismatch in the IHDR chunk", 8);
    if (h->plte.type && !ic__png_chunk_crc_ok(&h->plte)) return corrupt(d, "CRC mismatch in the PLTE chunk", h->plte.at);
    if (h->trns.type && !ic__png_chunk_crc_ok(&h->trns)) memset(&h->trns, 0, sizeof h->trns);
    if (!ic__png_chunk_crc_ok(&h->actl)) return corrupt(d, "CRC mismatch in the acTL chunk", h->actl.at);
    uint32_t expected_seq = 0, found = 0;
    bool idat_seen = false, in_idat_frame = false, frame_open = false;
    uint64_t stream = 0;       /* data chunk bytes of the open frame, re-wrapped */
    uint32_t data_chunks = 0;  /* data chunks of the open frame */
    ic__png_chunk c;
    bool iend = false;
    while (ic__png_next_chunk(p, n, &pos, &c)) {
        bool is_fctl = ic__png_chunk_is(&c, "fcTL"), is_fdat = ic__png_chunk_is(&c, "fdAT"), is_idat = ic__png_chunk_is(&c, "IDAT");
        if (ic__png_chunk_is(&c, "IEND")) {
            iend = true;
            break;
        }
        if (!is_fctl && !is_fdat && !is_idat) {
            if (!c.complete) break;
            continue;
        }
        if (is_fctl && found == h->num_frames && data_chunks > 0) break; /* frames past the acTL's count */
        if (!c.complete) {
            return ic__set_error(d->err, IC_ERR_TRUNCATED,
                                "APNG: truncated after %zu bytes, inside the %.4s chunk at byte %zu",
                                n, (const char *)c.type, c.at);
        }
        if (!ic__png_chunk_crc_ok(&c)) {
            char what[40];
            snprintf(what, sizeof what, "CRC mismatch in the %.4s chunk", (const char *)c.type);
            return corrupt(d, what, c.at);
        }
        if (is_idat) {
            if (frame_open && !in_idat_frame) return corrupt(d, "IDAT chunk after fdAT frames", c.at);
            idat_seen = true;
            if (in_idat_frame) {
                stream += 12 + (uint64_t)c.length;
                data_chunks++;
            }
            continue;
        }
        if (c.length < 4) return corrupt(d, is_fctl ? "fcTL chunk too short" : "fdAT chunk too short", c.at);
        uint32_t seq = ic__be32(c.data);
        if (seq != expected_seq) {
            return ic__set_error(d->err, IC_ERR_CORRUPT,
                                "APNG: sequence number %u in the %.4s chunk at byte %zu, expected %u",
                                seq, (const char *)c.type, c.at, expected_seq);
        }
        expected_seq++;
        if (is_fdat) {
            if (!frame_open) return corrupt(d, "fdAT chunk before any fcTL", c.at);
            if (in_idat_frame) return corrupt(d, "fdAT chunk in the frame whose data is the IDAT", c.at);
            stream += 12 + (uint64_t)c.length - 4;
            data_chunks++;
            continue;
        }
        /* fcTL: close the open frame, check and open the next. */
        if (frame_open && data_chunks == 0) {
            return ic__set_error(d->err, IC_ERR_CORRUPT, "APNG: frame %u has no image data (fcTL at byte %zu)",
                                found - 1, c.at);
        }
        if (c.length != 26) return corrupt(d, "fcTL chunk is not 26 bytes long", c.at);
        apng_fctl f;
        read_fctl(c.data, &f);
        if (f.width == 0 || f.height == 0 || f.x > h->width || f.width > h->width - f.x ||
            f.y > h->height || f.height > h->height - f.y) {
            return ic__set_error(d->err, IC_ERR_CORRUPT,
                                "APNG: frame %u of %ux%u at (%u, %u) is not inside the %ux%u canvas "
                                "(fcTL at byte %zu)",
                                found, f.width, f.height, f.x, f.y, h->width, h->height, c.at);
        }
        if (!idat_seen && (f.x != 0 || f.y != 0 || f.width != h->width || f.height != h->height)) {
            return corrupt(d, "the fcTL before the IDAT does not cover the whole canvas", c.at);
        }
        if (f.dispose > APNG_DISPOSE_PREVIOUS) return corrupt(d, "fcTL dispose_op is not 0, 1 or 2", c.at);
        if (f.blend > APNG_BLEND_OVER) return corrupt(d, "fcTL blend_op is not 0 or 1", c.at);
        if (found > 0 && stream > plan->max_stream) plan->max_stream = stream;
        if (found == 0 && !idat_seen) plan->idat_is_frame0 = true;
        if (f.dispose == APNG_DISPOSE_PREVIOUS && found > 0) plan->uses_previous = true;
        uint64_t px = (uint64_t)f.width * f.height;
        if (px > plan->max_frame_px) plan->max_frame_px = px;
        if (f.height > plan->max_frame_h) plan->max_frame_h = f.height;
        in_idat_frame = !idat_seen;
        frame_open = true;
        stream = 0;
        data_chunks = 0;
        found++;
    }
    if (frame_open && data_chunks == 0) {
        if (!iend && pos >= n) {
            return ic__set_error(d->err, IC_ERR_TRUNCATED, "APNG: truncated after %zu bytes, before the data of frame %u",
                                n, found - 1);
        }
        return ic__set_error(d->err, IC_ERR_CORRUPT, "APNG: frame %u has no image data", found - 1);
    }
    if (stream > plan->max_stream) plan->max_stream = stream;
    if (found < h->num_frames) {
        if (!iend && pos >= n) {
            return ic__set_error(d->err, IC_ERR_TRUNCATED,
                                "APNG: truncated after %zu bytes, with %u of the %u frames the acTL announces",
                                n, found, h->num_frames);
        }
        return ic__set_error(d->err, IC_ERR_CORRUPT, "APNG: the acTL announces %u frames, the file has %u",
                            h->num_frames, found);
    }
    plan->frames = h->num_frames;
    plan->max_stream += wrap_overhead(h);
    return IC_OK;
}

/* ---- Re-wrapping a frame. ---- */

/* Writes a chunk with a zero CRC: png.c's frame reader does not check CRCs (the
 * originals were checked in check_chunks). */
static uint8_t *put_chunk(uint8_t *out, const char *type, const uint8_t *data, uint32_t length) {
    ic__put_be32(out, length);
    memcpy(out + 4, type, 4);
    if (length) memcpy(out + 8, data, length);
    ic__put_be32(out + 8 + length, 0);
    return out + 12 + length;
}

/* Writes frame `f`'s PNG into `out` (plan->max_stream bytes): the data chunks
 * from *pos on (IDAT for the frame the IDAT holds, fdAT otherwise) up to the
 * next fcTL or IEND. Leaves *pos at that chunk. Returns the stream's size. */
static size_t wrap_frame(const ic__decoder *d, const apng_header *h, const apng_fctl *f, bool idat_frame,
                         size_t *pos, uint8_t *out) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    uint8_t *o = out;
    memcpy(o, signature, 8);
    uint8_t ihdr[13];
    memcpy(ihdr, h->ihdr, 13);
    ic__put_be32(ihdr, f->width);
    ic__put_be32(ihdr + 4, f->height);
    o = put_chunk(o + 8, "IHDR", ihdr, 13);
    if (h->plte.type) o = put_chunk(o, "PLTE", h->plte.data, h->plte.length);
    if (h->trns.type) o = put_chunk(o, "tRNS", h->trns.data, h->trns.length);
    ic__png_chunk c;
    size_t at = *pos;
    while (ic__png_next_chunk(d->data, d->size, &at, &c) && c.complete) {
        if (ic__png_chunk_is(&c, "fcTL") || ic__png_chunk_is(&c, "IEND")) {
            at = c.at;
            break;
        }
        if (idat_frame && ic__png_chunk_is(&c, "IDAT")) o = put_chunk(o, "IDAT", c.data, c.length);
        if (!idat_frame && ic__png_chunk_is(&c, "fdAT")) o = put_chunk(o, "IDAT", c.data + 4, c.length - 4);
    }
    *pos = at;
    o = put_chunk(o, "IEND", NULL, 0);
    return (size_t)(o - out);
}

/* ---- Compositing on the straight-alpha canvas. ---- */

typedef struct apng_state {
    ic__decoder *d;
    uint32_t w, h;
    size_t stride;           /* canvas and saved rows: w * 4 */
    ic__dec_buffer canvas;
    ic__dec_buffer frame;     /* the decoded frame, rows w * 4 apart */
    uint8_t *saved;          /* canvas before a frame that disposes to previous */
    size_t saved_size;
    uint8_t *stream;         /* the re-wrapped frame */
    size_t stream_size;
} apng_state;

/* Alpha compositing of straight RGBA, rounded as Pillow's Image.alpha_composite
 * rounds (fixed point with 7 extra bits, divisions by 255 rounded), so frames can
 * be compared bit for bit with a reference composited by it. */
static inline uint32_t div255(uint32_t v) { return ((v >> 8) + v) >> 8; }

static void blend_over(uint8_t *dst, const uint8_t *src, uint32_t count) {
    for (uint32_t i = 0; i < count; i++, dst += 4, src += 4) {
        uint32_t sa = src[3];
        if (sa == 255) {
            memcpy(dst, src, 4);
            continue;
        }
        if (sa == 0) continue;
        if (dst[3] == 0) {
            memcpy(dst, src, 4);
            continue;
        }
        if (dst[3] == 255) {
            /* The general formula with a255 = 255 * 255: coef1 = sa * 128, alpha 255. */
            uint32_t coef1 = sa * 128, coef2 = 255 * 128 - coef1;
            for (int k = 0; k < 3; k++) {
                dst[k] = (uint8_t)(div255(src[k] * coef1 + dst[k] * coef2 + (0x80 << 7)) >> 7);
            }
            continue;
        }
        uint32_t a255 = sa * 255 + (255 - sa) * dst[3];
        uint32_t coef1 = sa * 255 * 255 * 128 / a255, coef2 = 255 * 128 - coef1;
        for (int k = 0; k < 3; k++) {
            dst[k] = (uint8_t)(div255(src[k] * coef1 + dst[k] * coef2 + (0x80 << 7)) >> 7);
        }
        dst[3] = (uint8_t)div255(a255 + 0x80);
    }
}

static void draw(apng_state *s, const apng_fctl *f) {
    size_t fstride = (size_t)f->width * 4;
    for (uint32_t y = 0; y < f->height; y++) {
        uint8_t *dst = s->canvas.p + (size_t)(f->y + y) * s->stride + (size_t)f->x * 4;
        const uint8_t *src = s->frame.p + (size_t)y * fstride;
        if (f->blend == APNG_BLEND_SOURCE) {
            memcpy(dst, src, fstride);
        } else {
            blend_over(dst, src, f->width);
        }
    }
}

/* Copies frame f's region between the canvas and the saved copy. */
static void copy_region(apng_state *s, const apng_fctl *f, bool save) {
    for (uint32_t y = 0; y < f->height; y++) {
        size_t off = (size_t)(f->y + y) * s->stride + (size_t)f->x * 4;
        if (save) {
            memcpy(s->saved + off, s->canvas.p + off, (size_t)f->width * 4);
        } else {
            memcpy(s->canvas.p + off, s->saved + off, (size_t)f->width * 4);
        }
    }
}

static void dispose(apng_state *s, const apng_fctl *f, uint8_t op) {
    if (op == APNG_DISPOSE_BACKGROUND) {
        for (uint32_t y = 0; y < f->height; y++) {
            memset(s->canvas.p + (size_t)(f->y + y) * s->stride + (size_t)f->x * 4, 0, (size_t)f->width * 4);
        }
    } else if (op == APNG_DISPOSE_PREVIOUS) {
        copy_region(s, f, false);
    }
}

/* Adds frame context to a failure of png.c's frame decode. */
static ic_status frame_failure(ic__decoder *d, ic_status st, uint32_t frame) {
    if (d->err && st != IC_ERR_CANCELLED && st != IC_ERR_LIMIT_EXCEEDED) {
        char message[sizeof d->err->message];
        snprintf(message, sizeof message, "%s", d->err->message);
        ic__set_error(d->err, st, "%s (APNG frame %u)", message, frame);
    }
    return st;
}

/* Inflates an iCCP chunk's profile (name, NUL, method 0, zlib data) and hands it to the
 * colour code, as libpng's png_get_iCCP does for a still: the declared size (the profile's
 * first four bytes) is checked against IC_ICC_MAX_BYTES before the buffer is allocated, and a
 * stream that does not inflate to exactly that size leaves the image untagged. */
static void take_iccp(ic__decoder *d, const ic__png_chunk *c) {
    const uint8_t *nul = memchr(c->data, 0, c->length < 81 ? c->length : 81);
    if (!nul || (size_t)(nul - c->data) + 2 > c->length || nul[1] != 0) {
        ic__color_ignore(d);
        return;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) {
        ic__color_ignore(d);
        return;
    }
    z.next_in = (Bytef *)(nul + 2);
    z.avail_in = (uInt)(c->length - (size_t)(nul + 2 - c->data));
    uint8_t head[4];
    z.next_out = head;
    z.avail_out = sizeof head;
    int r = inflate(&z, Z_SYNC_FLUSH);
    size_t size = ic__be32(head);
    if ((r != Z_OK && r != Z_STREAM_END) || z.avail_out != 0 || size < sizeof head || size > IC_ICC_MAX_BYTES) {
        inflateEnd(&z);
        ic__color_ignore(d);
        return;
    }
    ic_error *err = d->err;
    d->err = NULL; /* the memory limit refusing the profile leaves the image untagged */
    uint8_t *icc = ic__dec_malloc(d, size);
    d->err = err;
    if (!icc) {
        inflateEnd(&z);
        ic__color_ignore(d);
        return;
    }
    memcpy(icc, head, sizeof head);
    z.next_out = icc + sizeof head;
    z.avail_out = (uInt)(size - sizeof head);
    r = r == Z_STREAM_END ? r : inflate(&z, Z_FINISH);
    bool whole = r == Z_STREAM_END && z.avail_out == 0;
    inflateEnd(&z);
    if (whole) {
        ic__color_take_profile(d, icc, size);
    } else {
        ic__color_ignore(d);
    }
    ic__dec_free(d, icc, size);
}

/* The profile of an iCCP chunk before the image data, and the conversion the sink applies to
 * the composited canvas (as to a still's rows: before premultiplying). */
static void prepare_color(ic__decoder *d, const apng_header *h) {
    size_t pos = 8;
    ic__png_chunk c;
    while (ic__png_next_chunk(d->data, d->size, &pos, &c) && !ic__png_chunk_is(&c, "IDAT")) {
        if (ic__png_chunk_is(&c, "iCCP") && c.complete) {
            take_iccp(d, &c);
            break;
        }
    }
    ic__color_prepare(d, (h->ihdr[9] & 2) ? IC_COLOR_INPUT_RGBA : IC_COLOR_INPUT_GRAY);
}

static ic_status decode_frames(apng_state *s, const apng_header *h, const apng_plan *plan) {
    ic__decoder *d = s->d;
    size_t pos = 8;
    ic__png_chunk c;
    apng_fctl prev = {0};
    uint8_t prev_dispose = APNG_DISPOSE_NONE;
    uint32_t done = 0;
    while (done < plan->frames && ic__png_next_chunk(d->data, d->size, &pos, &c)) {
        if (!ic__png_chunk_is(&c, "fcTL")) continue;
        if (ic__dec_cancelled(d)) return ic__dec_fail_cancelled(d);
        apng_fctl f;
        read_fctl(c.data, &f);
        if (done > 0) dispose(s, &prev, prev_dispose);
        uint8_t op = f.dispose;
        if (op == APNG_DISPOSE_PREVIOUS && done == 0) op = APNG_DISPOSE_BACKGROUND;
        if (op == APNG_DISPOSE_PREVIOUS) copy_region(s, &f, true);
        size_t size = wrap_frame(d, h, &f, done == 0 && plan->idat_is_frame0, &pos, s->stream);
        ic_status st = ic__png_decode_rgba(d, s->stream, size, s->frame.p, (size_t)f.width * 4, f.width,
                                          f.height);
        if (st != IC_OK) return frame_failure(d, st, done);
        draw(s, &f);
        ic__dec_put_rows(d, done, 0, s->h, s->canvas.p, s->stride, true);
        if (d->image->frame_delays_ms) d->image->frame_delays_ms[done] = delay_ms(&f);
        prev = f;
        prev_dispose = op;
        done++;
    }
    if (done < plan->frames) {
        return ic__set_error(d->err, IC_ERR_INTERNAL, "APNG: %u of %u frames found on the second pass", done,
                            plan->frames);
    }
    return IC_OK;
}

ic_status ic__apng_decode(ic__decoder *d) {
    apng_header h;
    read_header(d->data, d->size, &h);
    /* The canvas size first: a bad IHDR is png.c's error, the frame limit comes before any scan. */
    ic_status st = ic__dec_check_size(d, h.width, h.height, h.num_frames, 0);
    if (st != IC_OK) return st;
    apng_plan plan;
    st = check_chunks(d, &h, &plan);
    if (st != IC_OK) return st;
    d->loop_count = h.num_plays;

    apng_state s;
    memset(&s, 0, sizeof s);
    s.d = d;
    s.w = h.width;
    s.h = h.height;
    s.stride = (size_t)h.width * 4;
    uint64_t canvas = (uint64_t)s.stride * h.height;
    uint64_t extra = canvas + plan.max_frame_px * 4 + (plan.uses_previous ? canvas : 0) + plan.max_stream +
                     (uint64_t)plan.max_frame_h * sizeof(void *);
    st = ic__dec_check_size(d, h.width, h.height, plan.frames, extra);
    if (st != IC_OK) return st;
    prepare_color(d, &h);
    st = ic__dec_begin(d, h.width, h.height, plan.frames);
    if (st == IC_OK) st = ic__dec_buffer_alloc(d, (size_t)canvas, &s.canvas);
    if (st == IC_OK) st = ic__dec_buffer_alloc(d, (size_t)plan.max_frame_px * 4, &s.frame);
    if (st == IC_OK) {
        s.stream = ic__dec_malloc(d, (size_t)plan.max_stream);
        s.stream_size = s.stream ? (size_t)plan.max_stream : 0;
        if (!s.stream) st = d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    }
    if (st == IC_OK && plan.uses_previous) {
        s.saved = ic__dec_malloc(d, (size_t)canvas);
        s.saved_size = s.saved ? (size_t)canvas : 0;
        if (!s.saved) st = d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    }
    if (st == IC_OK) {
        memset(s.canvas.p, 0, (size_t)canvas);
        st = decode_frames(&s, &h, &plan);
    }
    ic__dec_free(d, s.saved, s.saved_size);
    ic__dec_free(d, s.stream, s.stream_size);
    ic__dec_buffer_free(d, &s.frame);
    ic__dec_buffer_free(d, &s.canvas);
    return st;
}
