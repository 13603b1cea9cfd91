/*
 * png_stream.c — the incremental PNG engine: the fast path's rules and row
 * code (png_fast.c) applied to the bytes as they arrive, with zlib's streaming
 * inflate in place of libdeflate (which cannot stream).
 *
 * incremental.c starts the engine once the chunks before the first IDAT are
 * in. libpng reads them exactly as for ic_decode (ic__png_read_header: IHDR,
 * PLTE, tRNS, iCCP, the pixel limit), so a limit fails there and then. From
 * that point the engine streams with the body kept (IC_INC_STREAMING_KEPT):
 * each piece goes through the fast path's chunk walk (ic__png_walk: IDAT order,
 * lengths, chunk types, every CRC as its chunk completes), IDAT data through
 * zlib into a few filtered rows (about 64 KiB of them, two rows at least),
 * and each row, once complete, is unfiltered and expanded by png_fast.c's
 * functions and handed to the sink. Memory: the output (or the thumbnail's
 * resampler), those rows and zlib's state — not the filtered image.
 *
 * What is decided how. The engine succeeds only on a file the fast path's
 * rules accept: the walk accepts it (ic__png_walk_end at the end of the input
 * included), the declared zlib window is the one the fast path accepts
 * (ic__png_window_ok), the zlib stream ends (its Adler-32 checked) within the
 * IDATs after exactly the filtered image's bytes (data after its end is
 * ignored, as libdeflate ignores it; the Adler-32 is libdeflate's, checked
 * against the trailer zlib stops after), and every filter byte is 0…4. On such a
 * file ic_decode gives the same pixels: either the fast path decodes it, with
 * the same row code, or — when it declines for size alone (a filtered image
 * over IC_PNG_FAST_MAX_FILTERED_BYTES, or over its memory budget) — libpng
 * does, and libpng agrees bit for bit with the fast path on every file the
 * fast path's rules accept (Fuzz/fuzz_png.c checks that). Anything else —
 * libpng's failure on the header, a zlib error, a CRC, a bad filter byte, a
 * critical chunk after the IDATs, a cut inside them — is a data failure
 * (IC_ERR_CORRUPT), so incremental.c drops the engine and ic_decode decodes
 * the kept body: its answer, success or error, stands. Limits, memory and
 * cancellation fail as they are met and are final, as in ic_decode. One edge
 * stays: the stream holds less than either whole-body path (no filtered
 * image, no libpng buffers), so a max_memory_bytes set between the two can
 * let a stream succeed where ic_decode fails on memory.
 *
 * Adam7 files are left to ic_decode on the whole body (IC_INC_WHOLE_BODY,
 * decided once the header is in, after the limits): their rows reach the
 * output only after the last pass and a thumbnail needs a full-size frame
 * anyway, so streaming would save neither memory nor a partial image, and
 * libdeflate on the whole stream is cheaper than zlib in pieces.
 */
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "../common/ic_bytes.h"
#include "ic_png_internal.h"
#include "ic_inc_engine.h"
#include "ic_sink.h"

/* Bytes of filtered rows inflated per round. */
#define ROUND_BYTES (64u * 1024)

typedef struct png_stream {
    ic__decoder *d;
    bool started;       /* the header is read */
    bool whole_body;    /* Adam7: ic_decode on the whole body */
    ic__png_header h;
    ic__png_format fmt;
    ic__png_walk walk;
    z_stream z;
    bool z_ready;       /* inflateInit done */
    bool first_byte;    /* the zlib stream's first byte (its window) is checked */
    bool ended;         /* zlib returned Z_STREAM_END */
    uint32_t adler;     /* Adler-32 of the output so far (libdeflate's, faster than zlib's) */
    uint8_t tail[4];    /* the last 4 bytes of the zlib stream zlib consumed */
    /* Filtered rows (filter byte, then row_len bytes; `step` bytes each): slot 0 holds the
     * last unfiltered row of the previous round (zeros before the first), zlib inflates
     * into the `slots` rows after it, which are unfiltered in place as they complete. */
    uint8_t *buf;
    size_t buf_size;
    size_t row_len, step;
    uint32_t slots;
    size_t filled;      /* bytes inflated into the slots this round */
    size_t done;        /* bytes of them handed over as rows */
    uint32_t rows;      /* rows delivered to the sink */
} png_stream;

/* zlib's allocations go through the decode's memory accounting; a 16-byte header keeps
 * each block's size. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    ic__decoder *d = opaque;
    size_t bytes = (size_t)items * size;
    uint8_t *p = ic__dec_malloc(d, bytes + 16);
    if (!p) return Z_NULL;
    memcpy(p, &bytes, sizeof bytes);
    return p + 16;
}

static void z_free(voidpf opaque, voidpf ptr) {
    if (!ptr) return;
    uint8_t *p = (uint8_t *)ptr - 16;
    size_t bytes;
    memcpy(&bytes, p, sizeof bytes);
    ic__dec_free(opaque, p, bytes + 16);
}

/* A file the fast path would decline: ic_decode decides (see the file comment). */
static ic_status decline(png_stream *s, const char *what) {
    return ic__set_error(s->d->err, IC_ERR_CORRUPT, "PNG: %s", what);
}

/* Reads the header (the first feed holds it whole: incremental.c starts the engine once
 * ic__png_header_size bytes are in) and starts the output, the rows and zlib. */
static ic_status start(png_stream *s, const uint8_t *data, size_t size) {
    ic__decoder *d = s->d;
    size_t header = ic__png_header_size(data, size);
    if (header == 0 || header == SIZE_MAX) {
        return ic__set_error(d->err, IC_ERR_INTERNAL, "PNG: the engine started before the header");
    }
    bool unused;
    ic_status st = ic__png_read_header(d, data, header, &s->h, &unused);
    if (st != IC_OK) return st;
    s->started = true;
    if (s->h.interlace) {
        s->whole_body = true;
        return IC_OK;
    }
    st = ic__png_format_init(d, &s->h, &s->fmt);
    if (st != IC_OK) return st;
    st = ic__dec_begin(d, s->h.width, s->h.height, 1);
    if (st != IC_OK) return st;
    s->row_len = (size_t)ic__png_row_bytes(s->h.width, s->fmt.bits_per_pixel);
    s->step = s->row_len + 1;
    /* About 64 KiB of rows a round (zlib runs its fast loop on large outputs), one at least. */
    size_t slots = ROUND_BYTES / s->step;
    if (slots > s->h.height) slots = s->h.height;
    s->slots = slots ? (uint32_t)slots : 1;
    s->buf_size = (1 + (size_t)s->slots) * s->step;
    s->buf = ic__dec_malloc(d, s->buf_size);
    if (!s->buf) return d->err && d->err->code ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    memset(s->buf, 0, s->step);
    s->z.zalloc = z_alloc;
    s->z.zfree = z_free;
    s->z.opaque = d;
    if (inflateInit(&s->z) != Z_OK) {
        return ic__set_error(d->err, d->err && d->err->code ? d->err->code : IC_ERR_OUT_OF_MEMORY,
                            "PNG: cannot start the inflater");
    }
    s->z_ready = true;
    /* zlib skips the checksum; inflate_data checks it against the stream's trailer. */
    inflateValidate(&s->z, 0);
    s->adler = 1;
    ic__png_walk_init(&s->walk, s->h.idat_at);
    return IC_OK;
}

/* Hands over the rows inflated completely this round: each is unfiltered in place against
 * the one before it, expanded into the output and reported. After the last slot, that row
 * moves to slot 0 and a new round starts. */
static ic_status put_rows(png_stream *s) {
    ic__decoder *d = s->d;
    uint8_t *area = s->buf + s->step;
    while (s->filled - s->done >= s->step) {
        uint32_t y = s->rows;
        if ((y & 63) == 0 && ic__dec_cancelled(d)) return ic__dec_fail_cancelled(d);
        uint8_t *row = area + s->done;
        if (row[0] > 4) {
            return ic__set_error(d->err, IC_ERR_CORRUPT, "PNG: bad filter type %u at row %u",
                                row[0], y);
        }
        ic__png_unfilter_row(row[0], row + 1, row - s->step + 1, s->row_len, s->fmt.filter_bpp);
        ic__png_expand_row(&s->h, &s->fmt, row + 1, ic__dec_row(d, 0, y), s->h.width);
        ic__dec_rows_done(d, 0, y, 1, s->fmt.has_alpha);
        s->rows = y + 1;
        s->done += s->step;
    }
    if (s->done == (size_t)s->slots * s->step) {
        memcpy(s->buf, area + s->done - s->step, s->step);
        s->filled = s->done = 0;
    }
    return IC_OK;
}

/* Inflates IDAT data into rows; once every row is in, the stream must end without more
 * output. */
static ic_status inflate_data(png_stream *s, const uint8_t *in, size_t size) {
    if (s->ended) return IC_OK; /* data after the zlib stream, which libdeflate ignores */
    if (!s->first_byte) {
        s->first_byte = true;
        if (!ic__png_window_ok(in[0], s->fmt.filtered)) return decline(s, "zlib window smaller than the image");
    }
    z_stream *z = &s->z;
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)size;
    while (z->avail_in > 0) {
        bool full = s->rows == s->h.height;
        uint8_t spare;
        /* Room: the rest of this round's slots, but no more than the image's rows. */
        size_t room_left = (size_t)s->slots * s->step - s->filled;
        size_t image_left = (size_t)(s->h.height - s->rows) * s->step - (s->filled - s->done);
        z->next_out = full ? &spare : s->buf + s->step + s->filled;
        z->avail_out = full ? 1 : (uInt)(room_left < image_left ? room_left : image_left);
        uInt room = z->avail_out, offered = z->avail_in;
        const uint8_t *from = z->next_in, *written = z->next_out;
        int r = inflate(z, Z_NO_FLUSH);
        size_t out = room - z->avail_out, used = offered - z->avail_in;
        if (full && out) return decline(s, "more image data than the image holds");
        s->adler = (uint32_t)libdeflate_adler32(s->adler, written, out);
        if (used >= 4) {
            memcpy(s->tail, from + used - 4, 4);
        } else if (used) {
            memmove(s->tail, s->tail + used, 4 - used);
            memcpy(s->tail + 4 - used, from, used);
        }
        if (!full) {
            s->filled += out;
            ic_status st = put_rows(s);
            if (st != IC_OK) return st;
        }
        if (r == Z_STREAM_END) {
            /* zlib stops right after the stream's trailer, its Adler-32. */
            uint32_t trailer = ic__be32(s->tail);
            if (trailer != s->adler) return decline(s, "Adler-32 mismatch in the image data");
            s->ended = true;
            return s->rows == s->h.height ? IC_OK : decline(s, "the image data ends early");
        }
        if (r != Z_OK && (r != Z_BUF_ERROR || (out == 0 && z->avail_in == offered))) {
            return ic__set_error(s->d->err, IC_ERR_CORRUPT, "PNG: bad zlib stream in IDAT (%s)",
                                z->msg ? z->msg : "no progress");
        }
    }
    return IC_OK;
}

static ic_status stream_feed(void *state, const uint8_t *data, size_t size) {
    png_stream *s = state;
    ic__decoder *d = s->d;
    if (ic__dec_cancelled(d)) return ic__dec_fail_cancelled(d);
    size_t at = 0;
    if (!s->started) {
        ic_status st = start(s, data, size);
        if (st != IC_OK || s->whole_body) return st;
        at = s->h.idat_at;
    }
    while (at < size) {
        size_t used;
        bool idat;
        ic_status st = ic__png_walk_feed(d, &s->walk, data + at, size - at, &used, &idat);
        if (st != IC_OK) return st;
        if (idat) {
            st = inflate_data(s, data + at, used);
            if (st != IC_OK) return st;
        } else if (!s->walk.in_idat && !s->ended) {
            return decline(s, "the IDAT chunks end before the zlib stream");
        }
        at += used;
    }
    return IC_OK;
}

static ic_status stream_end(void *state) {
    png_stream *s = state;
    ic_status st = ic__png_walk_end(s->d, &s->walk);
    if (st != IC_OK) return st;
    return s->ended ? IC_OK : decline(s, "the zlib stream is not complete");
}

static ic__inc_phase stream_phase(const void *state) {
    const png_stream *s = state;
    return s->whole_body ? IC_INC_WHOLE_BODY : IC_INC_STREAMING_KEPT;
}

/* Every byte is consumed as it is fed; the body itself is kept by incremental.c. */
static uint64_t stream_buffered(const void *state) {
    (void)state;
    return 0;
}

static uint32_t stream_rows(const void *state) { return ((const png_stream *)state)->rows; }

static void stream_free(void *state) {
    png_stream *s = state;
    if (s->z_ready) inflateEnd(&s->z);
    ic__dec_free(s->d, s->buf, s->buf_size);
    free(s);
}

static const ic__inc_engine png_engine = {stream_feed, stream_end, stream_phase,
                                         stream_buffered, stream_rows, stream_free};

ic_status ic__png_inc_new(ic__decoder *d, const ic__inc_engine **engine, void **state) {
    png_stream *s = calloc(1, sizeof *s);
    if (!s) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "PNG: cannot allocate a decoder");
    s->d = d;
    *engine = &png_engine;
    *state = s;
    return IC_OK;
}
