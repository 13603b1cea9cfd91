/*
 * png_stream.c — the incremental PNG engine: the fast path's rules and row
 * code (png_fast.c) applied to the bytes as they arrive, with zlib's streaming
 * inflate in place of libdeflate (which cannot stream).
 *
 * incremental.c starts the engine once the chunks before the first IDAT are
 * in. libpng reads them exactly as for ic_decode (ic_png_read_header: IHDR,
 * PLTE, tRNS, iCCP, the pixel limit), so a limit fails there and then. From
 * that point the engine streams with the body kept (IC_INC_STREAMING_KEPT):
 * each piece goes through the fast path's chunk walk (ic_png_walk: IDAT order,
 * lengths, chunk types, every CRC as its chunk completes), IDAT data through
 * zlib into two filtered rows, and each row, once complete, is unfiltered and
 * expanded by png_fast.c's functions and handed to the sink. Memory: the
 * output (or the thumbnail's resampler), two filtered rows and zlib's state.
 *
 * What is decided how. The engine succeeds only on a file the fast path's
 * rules accept: the walk accepts it (ic_png_walk_end at the end of the input
 * included), the declared zlib window is the one the fast path accepts
 * (ic_png_window_ok), the zlib stream ends (its Adler-32 checked) within the
 * IDATs after exactly the filtered image's bytes (data after its end is
 * ignored, as libdeflate ignores it), and every filter byte is 0…4. On such a
 * file ic_decode gives the same pixels: either the fast path decodes it, with
 * the same row code, or — when it declines for size alone (a filtered image
 * over IC_PNG_FAST_MAX_FILTERED_BYTES, or over its memory budget) — libpng
 * does, and libpng agrees bit for bit with the fast path on every file the
 * fast path's rules accept (Fuzz/fuzz_png.c checks that). Anything else —
 * libpng's failure on the header, a zlib error, a CRC, a bad filter byte, a
 * critical chunk after the IDATs, a cut inside them — is a data failure
 * (IC_ERR_CORRUPT), so incremental.c drops the engine and ic_decode decodes
 * the kept body: its answer, success or error, stands. Limits, memory and
 * cancellation fail as they are met and are final, as in ic_decode.
 *
 * Adam7 files are left to ic_decode on the whole body (IC_INC_WHOLE_BODY,
 * decided once the header is in, after the limits): their rows reach the
 * output only after the last pass and a thumbnail needs a full-size frame
 * anyway, so streaming would save neither memory nor a partial image, and
 * libdeflate on the whole stream is cheaper than zlib in pieces.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "ic_png_internal.h"

typedef struct png_stream {
    ic_decoder *d;
    bool started;       /* the header is read */
    bool whole_body;    /* Adam7: ic_decode on the whole body */
    ic_png_header h;
    ic_png_format fmt;
    ic_png_walk walk;
    z_stream z;
    bool z_ready;       /* inflateInit done */
    bool first_byte;    /* the zlib stream's first byte (its window) is checked */
    bool ended;         /* zlib returned Z_STREAM_END */
    uint8_t *cur;       /* the row being inflated: filter byte, then row_len bytes */
    uint8_t *prev;      /* the previous row, unfiltered (zeros before the first) */
    size_t row_len;
    size_t filled;      /* bytes of cur inflated so far */
    uint32_t rows;      /* rows delivered to the sink */
} png_stream;

/* zlib's allocations go through the decode's memory accounting; a 16-byte header keeps
 * each block's size. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    ic_decoder *d = opaque;
    size_t bytes = (size_t)items * size;
    uint8_t *p = ic_dec_malloc(d, bytes + 16);
    if (!p) return Z_NULL;
    memcpy(p, &bytes, sizeof bytes);
    return p + 16;
}

static void z_free(voidpf opaque, voidpf ptr) {
    if (!ptr) return;
    uint8_t *p = (uint8_t *)ptr - 16;
    size_t bytes;
    memcpy(&bytes, p, sizeof bytes);
    ic_dec_free(opaque, p, bytes + 16);
}

/* A file the fast path would decline: ic_decode decides (see the file comment). */
static ic_status decline(png_stream *s, const char *what) {
    return ic_set_error(s->d->err, IC_ERR_CORRUPT, "PNG: %s", what);
}

/* Reads the header (the first feed holds it whole: incremental.c starts the engine once
 * ic_png_header_size bytes are in) and starts the output, the rows and zlib. */
static ic_status start(png_stream *s, const uint8_t *data, size_t size) {
    ic_decoder *d = s->d;
    size_t header = ic_png_header_size(data, size);
    if (header == 0 || header == SIZE_MAX) {
        return ic_set_error(d->err, IC_ERR_INTERNAL, "PNG: the engine started before the header");
    }
    bool unused;
    ic_status st = ic_png_read_header(d, data, header, &s->h, &unused);
    if (st != IC_OK) return st;
    s->started = true;
    if (s->h.interlace) {
        s->whole_body = true;
        return IC_OK;
    }
    st = ic_png_format_init(d, &s->h, &s->fmt);
    if (st != IC_OK) return st;
    st = ic_dec_begin(d, s->h.width, s->h.height, 1);
    if (st != IC_OK) return st;
    s->row_len = (size_t)ic_png_row_bytes(s->h.width, s->fmt.bits_per_pixel);
    s->cur = ic_dec_malloc(d, 2 * (s->row_len + 1));
    if (!s->cur) return d->err && d->err->code ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    memset(s->cur, 0, 2 * (s->row_len + 1));
    s->prev = s->cur + s->row_len + 1;
    s->z.zalloc = z_alloc;
    s->z.zfree = z_free;
    s->z.opaque = d;
    if (inflateInit(&s->z) != Z_OK) {
        return ic_set_error(d->err, d->err && d->err->code ? d->err->code : IC_ERR_OUT_OF_MEMORY,
                            "PNG: cannot start the inflater");
    }
    s->z_ready = true;
    ic_png_walk_init(&s->walk, s->h.idat_at);
    return IC_OK;
}

/* The row in s->cur is complete: unfilters it against the previous one, expands it into
 * the output and reports it. */
static ic_status put_row(png_stream *s) {
    ic_decoder *d = s->d;
    uint32_t y = s->rows;
    if ((y & 63) == 0 && ic_dec_cancelled(d)) return ic_dec_fail_cancelled(d);
    uint8_t type = s->cur[0];
    if (type > 4) {
        return ic_set_error(d->err, IC_ERR_CORRUPT, "PNG: bad filter type %u at row %u", type, y);
    }
    ic_png_unfilter_row(type, s->cur + 1, s->prev + 1, s->row_len, s->fmt.filter_bpp);
    ic_png_expand_row(&s->h, &s->fmt, s->cur + 1, ic_dec_row(d, 0, y), s->h.width);
    ic_dec_rows_done(d, 0, y, 1, s->fmt.has_alpha);
    s->rows = y + 1;
    uint8_t *done = s->cur;
    s->cur = s->prev;
    s->prev = done;
    s->filled = 0;
    return IC_OK;
}

/* Inflates IDAT data into rows; once every row is in, the stream must end without more
 * output. */
static ic_status inflate_data(png_stream *s, const uint8_t *in, size_t size) {
    if (s->ended) return IC_OK; /* data after the zlib stream, which libdeflate ignores */
    if (!s->first_byte) {
        s->first_byte = true;
        if (!ic_png_window_ok(in[0], s->fmt.filtered)) return decline(s, "zlib window smaller than the image");
    }
    z_stream *z = &s->z;
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)size;
    while (z->avail_in > 0) {
        bool full = s->rows == s->h.height;
        uint8_t spare;
        z->next_out = full ? &spare : s->cur + s->filled;
        z->avail_out = full ? 1 : (uInt)(s->row_len + 1 - s->filled);
        uInt room = z->avail_out, offered = z->avail_in;
        int r = inflate(z, Z_NO_FLUSH);
        size_t out = room - z->avail_out;
        if (full && out) return decline(s, "more image data than the image holds");
        s->filled += out;
        if (!full && s->filled == s->row_len + 1) {
            ic_status st = put_row(s);
            if (st != IC_OK) return st;
        }
        if (r == Z_STREAM_END) {
            s->ended = true;
            return s->rows == s->h.height ? IC_OK : decline(s, "the image data ends early");
        }
        if (r != Z_OK && (r != Z_BUF_ERROR || (out == 0 && z->avail_in == offered))) {
            return ic_set_error(s->d->err, IC_ERR_CORRUPT, "PNG: bad zlib stream in IDAT (%s)",
                                z->msg ? z->msg : "no progress");
        }
    }
    return IC_OK;
}

static ic_status stream_feed(void *state, const uint8_t *data, size_t size) {
    png_stream *s = state;
    ic_decoder *d = s->d;
    if (ic_dec_cancelled(d)) return ic_dec_fail_cancelled(d);
    size_t at = 0;
    if (!s->started) {
        ic_status st = start(s, data, size);
        if (st != IC_OK || s->whole_body) return st;
        at = s->h.idat_at;
    }
    while (at < size) {
        size_t used;
        bool idat;
        ic_status st = ic_png_walk_feed(d, &s->walk, data + at, size - at, &used, &idat);
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
    ic_status st = ic_png_walk_end(s->d, &s->walk);
    if (st != IC_OK) return st;
    return s->ended ? IC_OK : decline(s, "the zlib stream is not complete");
}

static ic_inc_phase stream_phase(const void *state) {
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
    uint8_t *rows = s->cur < s->prev ? s->cur : s->prev;
    ic_dec_free(s->d, rows, 2 * (s->row_len + 1));
    free(s);
}

static const ic_inc_engine png_engine = {stream_feed, stream_end, stream_phase,
                                         stream_buffered, stream_rows, stream_free};

ic_status ic_png_inc_new(ic_decoder *d, const ic_inc_engine **engine, void **state) {
    png_stream *s = calloc(1, sizeof *s);
    if (!s) return ic_set_error(d->err, IC_ERR_OUT_OF_MEMORY, "PNG: cannot allocate a decoder");
    s->d = d;
    *engine = &png_engine;
    *state = s;
    return IC_OK;
}
