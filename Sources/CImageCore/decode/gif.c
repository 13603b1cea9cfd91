/*
 * gif.c — GIF decoding: block parsing, LZW and compositing, over the whole
 * file (ic__gif_decode) or, through the same walk, as the bytes arrive (the
 * incremental engine, gif_stream.c; see ic_gif_internal.h).
 *
 * Our own LZW decoder rather than giflib's: giflib 5.2.1 loses sync on valid
 * streams whose code table fills up without a clear code ("deferred clear"),
 * cannot tell a bad code from a short stream, and grows a per-image array as
 * it reads. Here:
 *  - a code above the next free table slot is an error ("invalid LZW code");
 *  - a stream that ends properly (terminator or end code) before every pixel
 *    is filled leaves the rest of the image undrawn, as browsers do;
 *  - a file that ends in the middle of image data is truncated: an error.
 *
 * Frame i is the logical screen after image i is drawn, starting from a
 * transparent canvas, with the disposal of image i-1 applied first (restore
 * to background clears to transparent, as browsers do). Images are clipped to
 * the screen. Pixels are written premultiplied directly: palette colours are
 * opaque and the transparent index is 0,0,0,0, so no premultiply pass is needed.
 *
 * One walk serves both ways in. Its whole state — the next block's position,
 * the graphic control extension waiting for its image, the image in progress
 * (its screen and rectangle), the sub-block bit reader and the LZW decoder's
 * table and cursor — lives in ic__gif_walk. Given the bytes so far, the walk
 * goes as far as they allow; where they run out and more may come, it pauses
 * (IC_OK, s->waiting), and a later call with more bytes goes on exactly as
 * one call with all of them would have. A short block that is not all in yet
 * (an image descriptor and its colour table, a graphic control extension's
 * fields) is read again from its start; sub-blocks (an extension's, an
 * image's) are read as they arrive; what is done once per image (the screen,
 * the buffers, the palette and the table) is done once its descriptor is in.
 * ic__gif_decode runs the walk once over the whole file.
 *
 * A failure met as an image starts (its pixel limit, its buffers) is reported
 * once that image's data has ended. In a whole file whose images ic__gif_decode
 * has counted that data always ends, so the answer is the same; a walk over a
 * file that is still arriving thus fails only where ic__gif_decode would.
 */
#include <string.h>

#include "ic_formats.h"
#include "ic_gif_internal.h"
#include "ic_sink.h"

#define LZW_MAX_CODES 4096

/* ---- Sub-block bit reader. ---- */

/* Reads LZW codes from an image's sub-blocks. `data`, `size` and `final` are
 * the bytes so far, set again at each step of the walk (the buffer may move);
 * the rest carries over from step to step. */
typedef struct gif_bits {
    const uint8_t *data;
    size_t size;
    bool final;         /* no more bytes will come */
    size_t pos;         /* next byte of the file */
    size_t block_left;  /* bytes left in the current sub-block */
    uint64_t acc;
    unsigned count;     /* valid bits in acc */
    bool ended;         /* block terminator reached, or the file ended */
    bool eof;           /* the file ended inside the sub-blocks */
} gif_bits;

/* The bytes so far are used up: the end of the file when no more will come. */
static bool out_of_bytes(gif_bits *b) {
    if (b->final) b->eof = b->ended = true;
    return false;
}

static bool refill(gif_bits *b) {
    while (b->block_left == 0) {
        if (b->ended) return false;
        if (b->pos >= b->size) return out_of_bytes(b);
        uint8_t len = b->data[b->pos++];
        if (len == 0) {
            b->ended = true;
            return false;
        }
        b->block_left = len;
    }
    if (b->pos >= b->size) return out_of_bytes(b);
    b->acc |= (uint64_t)b->data[b->pos++] << b->count;
    b->count += 8;
    b->block_left--;
    return true;
}

/* Next code of `bits` bits, or -1 when the data ends (b->ended) or the bytes so far do (the
 * code's first bits stay in acc for the next call). */
static inline int read_code(gif_bits *b, unsigned bits) {
    while (b->count < bits) {
        if (!refill(b)) return -1;
    }
    int code = (int)(b->acc & ((1u << bits) - 1));
    b->acc >>= bits;
    b->count -= bits;
    return code;
}

/* Skips the rest of the sub-blocks: true once past the terminator, false when the bytes run
 * out first (b->eof when the file ended there). */
static bool finish_blocks(gif_bits *b) {
    if (b->ended) return !b->eof;
    for (;;) {
        size_t left = b->size - b->pos;
        if (b->block_left > left) {
            b->pos = b->size;
            b->block_left -= left;
            return out_of_bytes(b);
        }
        b->pos += b->block_left;
        b->block_left = 0;
        if (b->pos >= b->size) return out_of_bytes(b);
        uint8_t len = b->data[b->pos++];
        if (len == 0) {
            b->ended = true;
            return true;
        }
        b->block_left = len;
    }
}

/* Skips a run of sub-blocks starting at *pos; false if the file ends first. */
static bool skip_sub_blocks(const uint8_t *p, size_t n, size_t *pos) {
    size_t i = *pos;
    while (i < n) {
        size_t len = p[i++];
        if (len == 0) {
            *pos = i;
            return true;
        }
        i += len;
    }
    *pos = n;
    return false;
}

/* ---- Header facts and a block walker for frame counts. ---- */

ic_status ic__gif_read_header(const uint8_t *p, size_t n, ic__gif_header *h, ic_error *err) {
    if (n < 13) return ic__set_error(err, IC_ERR_TRUNCATED, "GIF: truncated header");
    h->width = (uint32_t)p[6] | (uint32_t)p[7] << 8;
    h->height = (uint32_t)p[8] | (uint32_t)p[9] << 8;
    h->first_block = 13;
    h->colors = 0;
    if (p[10] & 0x80) {
        h->colors = 2u << (p[10] & 7);
        if (n - 13 < 3 * (size_t)h->colors) {
            return ic__set_error(err, IC_ERR_TRUNCATED, "GIF: truncated global colour table");
        }
        h->first_block += 3 * (size_t)h->colors;
    }
    return IC_OK;
}

void ic__gif_scan_blocks(const uint8_t *p, size_t n, size_t i, ic__gif_scan *s) {
    memset(s, 0, sizeof *s);
    s->truncated = true;
    while (i < n) {
        uint8_t kind = p[i++];
        if (kind == 0x2C) {
            if (n - i < 10) return;
            uint8_t flags = p[i + 8];
            if (flags & 0x40) s->interlaced = true;
            i += 9;
            if (flags & 0x80) i += (size_t)6 << (flags & 7);
            if (i >= n) return;
            i += 1; /* LZW minimum code size */
            if (!skip_sub_blocks(p, n, &i)) return;
            s->images++;
        } else if (kind == 0x21) {
            if (i >= n) return;
            uint8_t label = p[i++];
            if (label == 0xFF && i + 16 <= n && p[i] == 11 &&
                (memcmp(p + i + 1, "NETSCAPE2.0", 11) == 0 ||
                 memcmp(p + i + 1, "ANIMEXTS1.0", 11) == 0) &&
                p[i + 12] == 3 && p[i + 13] == 1) {
                s->loop_count = (uint32_t)p[i + 14] | (uint32_t)p[i + 15] << 8;
            }
            if (!skip_sub_blocks(p, n, &i)) return;
        } else {
            s->truncated = false; /* trailer, or garbage after it */
            return;
        }
    }
}

/* The error for a file with no complete image. */
static ic_status no_image(ic_error *err, const ic__gif_scan *scan, size_t size) {
    if (scan->truncated) {
        return ic__set_error(err, IC_ERR_TRUNCATED, "GIF: truncated after %zu bytes, before any image",
                            size);
    }
    return ic__set_error(err, IC_ERR_CORRUPT, "GIF: no image data");
}

/* ---- The walk's state. ---- */

typedef struct gif_gce {
    int disposal;      /* 0-1 keep, 2 background, 3 previous */
    int transparent;   /* index or -1 */
    uint32_t delay_ms;
} gif_gce;

typedef struct gif_rect {
    uint32_t x0, y0, x1, y1; /* clipped to the screen, half-open */
} gif_rect;

typedef struct gif_image {
    uint32_t left, top, width, height;
    bool interlaced;
    size_t palette_at;  /* offset of its colour table in the file */
    uint32_t colors;    /* entries of that table; 0 without */
    int min_code_size;
} gif_image;

/* Where the walk is. */
typedef enum gif_phase {
    GIF_BLOCKS, /* at the next block (s->pos) */
    GIF_EXTENSION, /* in an extension's sub-blocks */
    GIF_PIXELS, /* in an image's LZW data */
    GIF_SKIP,   /* past an image's pixels (or not drawing them): on to its block terminator */
    GIF_DONE,   /* every frame is decoded */
} gif_phase;

struct ic__gif_walk {
    ic__decoder *d;
    uint32_t sw, sh;      /* the logical screen */
    size_t stride;        /* bytes a screen row */
    uint32_t frames;      /* frames to decode */
    uint32_t global_colors; /* entries of the global colour table */
    /* Where the screen is composited: the output frames themselves (full-size
     * decode), a staging screen (resampled animations or interlaced images),
     * or nowhere — rows streamed to the resampler one by one (`stream`, for the
     * first frame of a non-interlaced GIF). */
    ic__dec_buffer staging;
    bool stream;
    uint8_t *stream_row;  /* the screen row being streamed */
    uint32_t next_row;    /* next screen row to stream */
    uint16_t *line;       /* one row of palette indices */
    size_t line_size;
    uint8_t *saved;       /* screen copy for "restore previous" */
    size_t saved_size;

    /* The walk. */
    gif_phase phase;
    bool waiting;         /* the last step stopped where the bytes so far end */
    size_t pos;           /* the next block (GIF_BLOCKS) */
    uint32_t done;        /* frames decoded */
    gif_gce gce;          /* for the next image */
    gif_gce ext_gce;      /* what it becomes once the extension being skipped ends */
    gif_gce prev_gce;     /* of the last image, and its rectangle: its disposal */
    gif_rect prev_rect;
    /* The image in progress. */
    gif_image im;
    gif_rect rect;
    uint8_t *screen;      /* where it is drawn; NULL when its rows are streamed */
    bool complete;        /* every pixel arrived (the file may then end before its terminator) */
    ic_status failure;    /* met as it started: reported once its data has ended */
    gif_bits b;
    /* The LZW decoder. */
    uint32_t clear, next, bits;
    int prev;
    uint32_t x, k;        /* pixel cursor: column and stored row */
    uint32_t palette[LZW_MAX_CODES]; /* indices past the colour table are opaque black */
    uint16_t prefix[LZW_MAX_CODES];
    uint16_t suffix[LZW_MAX_CODES];
    uint16_t length[LZW_MAX_CODES];
    uint16_t stack[LZW_MAX_CODES];
};

static ic_status truncated(ic__decoder *d) {
    return ic__set_error(d->err, IC_ERR_TRUNCATED, "GIF: truncated after %zu bytes", d->size);
}

/* The walk stops where the bytes so far end, to go on from there with more. */
static ic_status wait_for_bytes(ic__gif_walk *s) {
    s->waiting = true;
    return IC_OK;
}

/* The bytes so far end inside what the walk reads next: a truncated file when no more will
 * come, else the walk waits for them. */
static ic_status starved(ic__gif_walk *s) {
    return s->b.final ? truncated(s->d) : wait_for_bytes(s);
}

/* The status of a failed ic__dec_malloc. */
static ic_status alloc_failure(const ic__decoder *d) {
    return d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
}

/* ---- LZW and drawing. ---- */

/* Row of the k-th stored row of an interlaced image of height h. */
static uint32_t interlaced_row(uint32_t k, uint32_t h) {
    uint32_t p1 = (h + 7) / 8, p2 = (h + 3) / 8, p3 = (h + 1) / 4;
    if (k < p1) return k * 8;
    k -= p1;
    if (k < p2) return k * 8 + 4;
    k -= p2;
    if (k < p3) return k * 4 + 2;
    k -= p3;
    return k * 2 + 1;
}

/* Streams transparent screen rows up to (not including) y. */
static void stream_until(ic__gif_walk *s, uint32_t y) {
    memset(s->stream_row, 0, (size_t)s->sw * 4);
    for (; s->next_row < y && s->next_row < s->sh; s->next_row++) {
        ic__dec_put_rows(s->d, 0, s->next_row, 1, s->stream_row, s->stride, false);
    }
}

static void put_row(ic__gif_walk *s, uint8_t *frame, const gif_image *im, uint32_t k,
                    const gif_gce *gce) {
    uint32_t y = im->top + (im->interlaced ? interlaced_row(k, im->height) : k);
    if (y >= s->sh || im->left >= s->sw) return;
    uint32_t x1 = im->left + im->width < s->sw ? im->left + im->width : s->sw;
    uint8_t *row;
    if (s->stream) {
        stream_until(s, y);
        row = s->stream_row;
    } else {
        row = frame + (size_t)y * s->stride;
    }
    for (uint32_t x = im->left; x < x1; x++) {
        uint16_t index = s->line[x - im->left];
        if ((int)index == gce->transparent) continue;
        memcpy(row + 4 * (size_t)x, &s->palette[index], 4);
    }
    if (s->stream) {
        ic__dec_put_rows(s->d, 0, y, 1, row, s->stride, false);
        s->next_row = y + 1;
    }
}

static void load_palette(ic__gif_walk *s, const gif_image *im, const gif_gce *gce) {
    const uint8_t *table = s->b.data + im->palette_at;
    uint32_t count = 1u << im->min_code_size;
    if (count < 256) count = 256;
    for (uint32_t i = 0; i < count; i++) {
        if (i < im->colors) {
            const uint8_t *c = table + 3 * (size_t)i;
            s->palette[i] = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | 0xFF000000u;
        } else {
            s->palette[i] = 0xFF000000u; /* outside the table: opaque black */
        }
    }
    if (gce->transparent >= 0) s->palette[gce->transparent] = 0;
}

/* Starts the LZW decoder on the image's data. */
static void start_lzw(ic__gif_walk *s) {
    s->clear = 1u << s->im.min_code_size;
    for (uint32_t c = 0; c < s->clear; c++) {
        s->suffix[c] = (uint16_t)c;
        s->length[c] = 1;
    }
    s->next = s->clear + 2;
    s->bits = (uint32_t)s->im.min_code_size + 1;
    s->prev = -1;
}

/* Decodes the image's LZW data into its screen as far as the bytes go (GIF_PIXELS); moves on
 * to GIF_SKIP once the data or the image ends. */
static ic_status draw_pixels(ic__gif_walk *s) {
    ic__decoder *d = s->d;
    /* The reader and the cursor in locals (registers) while codes are decoded, stored back when
     * the step pauses or ends (a failure is final). */
    gif_bits reader = s->b, *b = &reader;
    const gif_image *im = &s->im;
    const uint32_t clear = s->clear, end = clear + 1;
    const uint32_t w = im->width, h = im->height;
    uint32_t next = s->next, bits = s->bits;
    int prev = s->prev;
    uint32_t x = s->x, k = s->k;
    bool paused = false;

    while (k < h) {
        int code = read_code(b, bits);
        if (code < 0) {
            paused = !b->ended;
            break;
        }
        if ((uint32_t)code == clear) {
            next = clear + 2;
            bits = (uint32_t)im->min_code_size + 1;
            prev = -1;
            continue;
        }
        if ((uint32_t)code == end) break;
        uint32_t c = (uint32_t)code;
        uint32_t len;
        if (c < clear || (c > end && c < next)) {
            /* A literal or a string already in the table. */
            len = s->length[c];
            uint32_t t = c;
            for (uint32_t i = len; i-- > 0;) {
                s->stack[i] = s->suffix[t];
                t = s->prefix[t];
            }
            if (prev >= 0 && next < LZW_MAX_CODES) {
                s->prefix[next] = (uint16_t)prev;
                s->suffix[next] = s->stack[0];
                s->length[next] = (uint16_t)(s->length[prev] + 1);
                next++;
            }
        } else if (c == next && prev >= 0 && next < LZW_MAX_CODES) {
            /* KwKwK: the previous string plus its own first character. */
            len = (uint32_t)s->length[prev] + 1;
            uint32_t t = (uint32_t)prev;
            for (uint32_t i = len - 1; i-- > 0;) {
                s->stack[i] = s->suffix[t];
                t = s->prefix[t];
            }
            s->stack[len - 1] = s->stack[0];
            s->prefix[next] = (uint16_t)prev;
            s->suffix[next] = s->stack[0];
            s->length[next] = (uint16_t)len;
            next++;
        } else {
            return ic__set_error(d->err, IC_ERR_CORRUPT, "GIF: invalid LZW code %u (next free code %u)",
                                c, next);
        }
        /* Codes widen once the table reaches the current width (no early change). */
        if (next >= (1u << bits) && bits < 12) bits++;
        prev = (int)c;

        /* Copy the string to the cursor, row by row. */
        uint32_t done = 0;
        while (done < len && k < h) {
            uint32_t take = len - done < w - x ? len - done : w - x;
            memcpy(s->line + x, s->stack + done, take * sizeof(uint16_t));
            done += take;
            x += take;
            if (x == w) {
                put_row(s, s->screen, im, k, &s->gce);
                x = 0;
                k++;
                if ((k & 63) == 0 && ic__dec_cancelled(d)) return ic__dec_fail_cancelled(d);
            }
        }
    }
    s->next = next;
    s->bits = bits;
    s->prev = prev;
    s->x = x;
    s->k = k;
    s->b = reader;
    if (paused) return wait_for_bytes(s);
    if (b->eof && k < h) return truncated(d);
    if (k < h && x > 0) {
        /* The stream ended inside a row: draw the part of it that arrived. */
        gif_image part = *im;
        part.width = x;
        put_row(s, s->screen, &part, k, &s->gce);
    }
    s->complete = k == h;
    s->phase = GIF_SKIP;
    return IC_OK;
}

/* ---- Compositing frames. ---- */

static void clear_rect(uint8_t *frame, size_t stride, gif_rect r) {
    for (uint32_t y = r.y0; y < r.y1; y++) {
        memset(frame + (size_t)y * stride + 4 * (size_t)r.x0, 0, 4 * (size_t)(r.x1 - r.x0));
    }
}

static void copy_rect(uint8_t *dst, const uint8_t *src, size_t stride, gif_rect r) {
    for (uint32_t y = r.y0; y < r.y1; y++) {
        size_t off = (size_t)y * stride + 4 * (size_t)r.x0;
        memcpy(dst + off, src + off, 4 * (size_t)(r.x1 - r.x0));
    }
}

static gif_rect clip_rect(const gif_image *im, uint32_t sw, uint32_t sh) {
    gif_rect r = {0, 0, 0, 0};
    if (im->left >= sw || im->top >= sh || im->width == 0 || im->height == 0) return r;
    r.x0 = im->left;
    r.y0 = im->top;
    r.x1 = im->left + im->width < sw ? im->left + im->width : sw;
    r.y1 = im->top + im->height < sh ? im->top + im->height : sh;
    return r;
}

static bool frame_has_transparency(const ic_image *img, uint32_t f) {
    const uint8_t *frame = ic_image_frame(img, f);
    for (uint32_t y = 0; y < img->height; y++) {
        const uint8_t *row = frame + (size_t)y * img->stride;
        for (uint32_t x = 0; x < img->width; x++) {
            if (row[4 * (size_t)x + 3] != 0xFF) return true;
        }
    }
    return false;
}

/* Reads an image descriptor and its colour table at *pos (after the 0x2C). */
static ic_status read_image(ic__gif_walk *s, size_t *pos, gif_image *im) {
    const uint8_t *p = s->b.data;
    size_t n = s->b.size, i = *pos;
    if (n - i < 9) return starved(s);
    im->left = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8;
    im->top = (uint32_t)p[i + 2] | (uint32_t)p[i + 3] << 8;
    im->width = (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8;
    im->height = (uint32_t)p[i + 6] | (uint32_t)p[i + 7] << 8;
    uint8_t flags = p[i + 8];
    im->interlaced = (flags & 0x40) != 0;
    i += 9;
    im->palette_at = 13;
    im->colors = s->global_colors;
    if (flags & 0x80) {
        im->colors = 2u << (flags & 7);
        if (n - i < 3 * (size_t)im->colors) return starved(s);
        im->palette_at = i;
        i += 3 * (size_t)im->colors;
    }
    if (i >= n) return starved(s);
    im->min_code_size = p[i++];
    if (im->min_code_size < 1 || im->min_code_size > 11) {
        return ic__set_error(s->d->err, IC_ERR_CORRUPT, "GIF: LZW minimum code size %d is not 1...11",
                            im->min_code_size);
    }
    *pos = i;
    return IC_OK;
}

/* The screen for frame f, with the previous image's disposal applied. */
static uint8_t *screen_for(ic__gif_walk *s, uint32_t f, const gif_gce *prev_gce, gif_rect prev_rect) {
    ic_image *img = s->d->image;
    size_t bytes = s->stride * s->sh;
    uint8_t *screen;
    if (s->staging.p) {
        screen = s->staging.p;
        if (f == 0) memset(screen, 0, bytes);
    } else {
        screen = ic_image_frame(img, f);
        if (f == 0) {
            memset(screen, 0, bytes);
        } else {
            memcpy(screen, ic_image_frame(img, f - 1), bytes);
        }
    }
    if (f > 0 && prev_gce->disposal == 2) clear_rect(screen, s->stride, prev_rect);
    if (f > 0 && prev_gce->disposal == 3) copy_rect(screen, s->saved, s->stride, prev_rect);
    return screen;
}

/* The once-per-image work for s->im: where it is drawn (the screen, with the previous
 * image's disposal applied), its limit, and — when any of it is visible — its row buffer,
 * palette and LZW table. */
static ic_status prepare_image(ic__gif_walk *s) {
    ic__decoder *d = s->d;
    const gif_image *im = &s->im;
    if (!ic__dec_is_direct(d) && !s->staging.p && !s->stream) {
        /* Resampling: stream the first frame of a plain GIF row by row; anything
         * else needs the whole screen (interlaced rows, later frames). */
        if (s->frames == 1 && !im->interlaced) {
            s->stream = true;
            s->stream_row = ic__dec_malloc(d, s->stride);
            if (!s->stream_row) return alloc_failure(d);
        } else {
            ic_status st = ic__dec_buffer_alloc(d, s->stride * s->sh, &s->staging);
            if (st != IC_OK) return st;
        }
    }
    s->screen = s->stream ? NULL : screen_for(s, s->done, &s->prev_gce, s->prev_rect);
    s->rect = clip_rect(im, s->sw, s->sh);
    if (s->gce.disposal == 3 && s->frames > 1) {
        if (!s->saved) {
            s->saved = ic__dec_malloc(d, s->stride * s->sh);
            if (!s->saved) return alloc_failure(d);
            s->saved_size = s->stride * s->sh;
        }
        copy_rect(s->saved, s->screen, s->stride, s->rect);
    }
    if (s->rect.x1 <= s->rect.x0 || s->rect.y1 <= s->rect.y0) return IC_OK;
    if ((uint64_t)im->width * im->height > d->opts.limits.max_pixels && d->opts.limits.max_pixels) {
        return ic__set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                            "GIF: image of %ux%u pixels is over the limit of %llu pixels",
                            im->width, im->height, (unsigned long long)d->opts.limits.max_pixels);
    }
    if ((size_t)im->width * sizeof(uint16_t) > s->line_size) {
        ic__dec_free(d, s->line, s->line_size);
        s->line_size = 0;
        s->line = ic__dec_malloc(d, (size_t)im->width * sizeof(uint16_t));
        if (!s->line) return alloc_failure(d);
        s->line_size = (size_t)im->width * sizeof(uint16_t);
    }
    load_palette(s, im, &s->gce);
    start_lzw(s);
    return IC_OK;
}

/* Starts image `im`, whose data begins at `pos`: its pixels are decoded when any of them is
 * visible; otherwise (or when its start failed) its data is skipped. */
static void start_image(ic__gif_walk *s, const gif_image *im, size_t pos) {
    s->im = *im;
    s->b = (gif_bits){.data = s->b.data, .size = s->b.size, .final = s->b.final, .pos = pos};
    s->x = s->k = 0;
    s->complete = false;
    s->failure = prepare_image(s);
    bool visible = s->rect.x1 > s->rect.x0 && s->rect.y1 > s->rect.y0;
    s->phase = s->failure == IC_OK && visible ? GIF_PIXELS : GIF_SKIP;
}

/* Hands a finished image's frame over and readies the walk for the next block. */
static ic_status end_image(ic__gif_walk *s) {
    ic__decoder *d = s->d;
    if (s->stream) {
        stream_until(s, s->sh);
    } else if (s->staging.p) {
        ic__dec_put_rows(d, s->done, 0, s->sh, s->screen, s->stride, false);
    }
    if (d->image->frame_delays_ms) d->image->frame_delays_ms[s->done] = s->gce.delay_ms;
    s->prev_gce = s->gce;
    s->prev_rect = s->rect;
    s->gce = (gif_gce){0, -1, 0};
    s->done++;
    s->pos = s->b.pos;
    s->phase = GIF_BLOCKS;
    return IC_OK;
}

/* Skips to the image's block terminator (GIF_SKIP), then ends the image, or reports the
 * failure met as it started. */
static ic_status skip_rest(ic__gif_walk *s) {
    gif_bits *b = &s->b;
    if (!finish_blocks(b)) {
        if (!b->eof) return wait_for_bytes(s);
        if (!s->complete) return truncated(s->d);
    }
    if (s->failure != IC_OK) return s->failure;
    return end_image(s);
}

/* Skips an extension's sub-blocks as they arrive (GIF_EXTENSION: a long one is not walked
 * again at every piece), then takes its graphic control fields. */
static ic_status skip_extension(ic__gif_walk *s) {
    if (!finish_blocks(&s->b)) return s->b.eof ? truncated(s->d) : wait_for_bytes(s);
    s->gce = s->ext_gce;
    s->pos = s->b.pos;
    s->phase = GIF_BLOCKS;
    return IC_OK;
}

/* Ends the walk: the frames decoded are the image's. */
static ic_status end_frames(ic__gif_walk *s) {
    ic__decoder *d = s->d;
    ic_image *img = d->image;
    if (s->done == 0) return ic__set_error(d->err, IC_ERR_CORRUPT, "GIF: no image data");
    if (s->done < s->frames) img->frame_count = s->done;
    if (ic__dec_is_direct(d)) {
        for (uint32_t f = 0; f < img->frame_count && d->all_opaque; f++) {
            if (frame_has_transparency(img, f)) ic__dec_note_transparency(d);
        }
    }
    s->phase = GIF_DONE;
    return IC_OK;
}

/* Reads the block at s->pos (GIF_BLOCKS): an extension (a graphic control extension sets the
 * next image's disposal, transparency and delay), an image descriptor, or the end. */
static ic_status next_block(ic__gif_walk *s) {
    ic__decoder *d = s->d;
    const uint8_t *p = s->b.data;
    size_t n = s->b.size, pos = s->pos;
    if (s->done == s->frames) return end_frames(s);
    if (pos >= n) return s->b.final ? end_frames(s) : wait_for_bytes(s);
    uint8_t kind = p[pos++];
    if (kind == 0x3B) return end_frames(s);
    if (kind == 0x21) {
        if (pos >= n) return starved(s);
        uint8_t label = p[pos++];
        s->ext_gce = s->gce;
        if (label == 0xF9) {
            /* A graphic control extension's fields, once its first sub-block's are in. */
            if (pos >= n || (p[pos] >= 4 && n - pos < 5)) return starved(s);
            if (p[pos] >= 4) {
                s->ext_gce.disposal = (p[pos + 1] >> 2) & 7;
                s->ext_gce.transparent = (p[pos + 1] & 1) ? p[pos + 4] : -1;
                s->ext_gce.delay_ms = ((uint32_t)p[pos + 2] | (uint32_t)p[pos + 3] << 8) * 10u;
            }
        }
        s->b = (gif_bits){.data = p, .size = n, .final = s->b.final, .pos = pos};
        s->phase = GIF_EXTENSION;
        return IC_OK;
    }
    if (kind != 0x2C) {
        if (s->done > 0) return end_frames(s); /* trailing garbage after complete frames */
        return ic__set_error(d->err, IC_ERR_CORRUPT, "GIF: unknown block type 0x%02x at byte %zu",
                            kind, pos - 1);
    }
    gif_image im;
    ic_status st = read_image(s, &pos, &im);
    if (st != IC_OK || s->waiting) return st;
    start_image(s, &im, pos);
    return IC_OK;
}

ic_status ic__gif_walk_run(ic__gif_walk *s, const uint8_t *data, size_t size, bool final) {
    s->b.data = data;
    s->b.size = size;
    s->b.final = final;
    s->waiting = false;
    ic_status st = IC_OK;
    while (st == IC_OK && !s->waiting && s->phase != GIF_DONE) {
        switch (s->phase) {
        case GIF_BLOCKS: st = next_block(s); break;
        case GIF_EXTENSION: st = skip_extension(s); break;
        case GIF_PIXELS: st = draw_pixels(s); break;
        case GIF_SKIP: st = skip_rest(s); break;
        case GIF_DONE: break;
        }
    }
    return st;
}

uint32_t ic__gif_walk_rows(const ic__gif_walk *s) {
    if (s->done > 0) return s->sh;
    if (s->stream) return s->next_row;
    bool drawing = s->phase == GIF_PIXELS || s->phase == GIF_SKIP;
    if (!drawing || s->im.interlaced || !ic__dec_is_direct(s->d)) return 0;
    uint32_t y = s->im.top + s->k;
    return y < s->sh ? y : s->sh;
}

ic_status ic__gif_check_screen(ic__decoder *d, const ic__gif_header *hdr) {
    ic_status st = ic__dec_check_size(d, hdr->width, hdr->height, 1, 0);
    if (st != IC_OK) return st;
    return ic__dec_check_size(d, hdr->width, hdr->height, 1, sizeof(ic__gif_walk));
}

ic_status ic__gif_walk_begin(ic__decoder *d, const ic__gif_header *hdr, uint32_t frames,
                            ic__gif_walk **out) {
    ic_status st = ic__dec_begin(d, hdr->width, hdr->height, frames);
    if (st != IC_OK) return st;
    ic__gif_walk *s = ic__dec_malloc(d, sizeof *s);
    if (!s) return alloc_failure(d);
    memset(s, 0, offsetof(ic__gif_walk, palette));
    /* The prefix table is read one step past a string's first code (a literal, whose prefix
     * nothing else writes): every entry is defined from the start. The other tables are
     * written before they are read (entries below the next free code), image by image. */
    memset(s->prefix, 0, sizeof s->prefix);
    s->d = d;
    s->sw = hdr->width;
    s->sh = hdr->height;
    s->stride = ic__stride_for_width(hdr->width);
    s->frames = frames;
    s->global_colors = hdr->colors;
    s->phase = GIF_BLOCKS;
    s->pos = hdr->first_block;
    s->gce = (gif_gce){0, -1, 0};
    s->prev_gce = s->gce;
    *out = s;
    return IC_OK;
}

void ic__gif_walk_free(ic__gif_walk *s) {
    ic__decoder *d = s->d;
    ic__dec_free(d, s->line, s->line_size);
    ic__dec_free(d, s->saved, s->saved_size);
    ic__dec_free(d, s->stream_row, s->stream_row ? s->stride : 0);
    ic__dec_buffer_free(d, &s->staging);
    ic__dec_free(d, s, sizeof *s);
}

ic_status ic__gif_decode(ic__decoder *d) {
    ic__gif_header hdr;
    ic_status st = ic__gif_read_header(d->data, d->size, &hdr, d->err);
    if (st != IC_OK) return st;
    ic__gif_scan scan;
    ic__gif_scan_blocks(d->data, d->size, hdr.first_block, &scan);
    d->loop_count = scan.loop_count;
    st = ic__gif_check_screen(d, &hdr);
    if (st != IC_OK) return st;
    if (scan.images == 0) return no_image(d->err, &scan, d->size);
    uint32_t frames = d->opts.all_frames ? scan.images : 1;
    if (frames > 1) {
        uint64_t extra = sizeof(ic__gif_walk) + (uint64_t)ic__stride_for_width(hdr.width) * hdr.height;
        st = ic__dec_check_size(d, hdr.width, hdr.height, frames, extra);
        if (st != IC_OK) return st;
    }
    ic__gif_walk *s;
    st = ic__gif_walk_begin(d, &hdr, frames, &s);
    if (st != IC_OK) return st;
    st = ic__gif_walk_run(s, d->data, d->size, true);
    ic__gif_walk_free(s);
    return st;
}

ic_status ic__gif_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    ic__gif_header hdr;
    ic_status st = ic__gif_read_header(p, n, &hdr, err);
    if (st != IC_OK) return st;
    ic__gif_scan scan;
    ic__gif_scan_blocks(p, n, hdr.first_block, &scan);
    info->width = hdr.width;
    info->height = hdr.height;
    info->frame_count = scan.images;
    info->is_progressive = scan.interlaced;
    info->has_alpha = 1;
    info->bit_depth = 8;
    if (scan.images == 0) return no_image(err, &scan, n);
    return IC_OK;
}
