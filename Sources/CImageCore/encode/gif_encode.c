/*
 * gif_encode.c — GIF89a encoding: palettes, our own LZW encoder, animation blocks.
 *
 * Every frame carries its own local colour table, so no colour is lost to a shared
 * palette. A frame of at most 256 distinct colours (transparency counting as one) gets
 * exactly those colours; any other frame is quantised by libimagequant at
 * options->quality and options->speed and remapped with options->dither_level.
 *
 * Transparency: GIF has one transparent palette index and no partial alpha. A pixel
 * whose alpha is below 128 is written transparent; every other pixel is written opaque
 * with its un-premultiplied colour.
 *
 * Delays: GIF counts centiseconds; a delay of d ms is written as (d + 5) / 10 cs (to the
 * nearest, half up), at most 65535 cs. Delays under 20 ms are written as they are, though
 * browsers show frames of 0 or 10 ms for 100 ms. The loop count (0 = forever) goes into a
 * NETSCAPE2.0 application extension, written for animations only; loop counts above
 * 65535 are refused.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../codecs/ic_liq_lib.h"
#include "../common/ic_common_internal.h"
#include "ic_encode_internal.h"

#define GIF_MAX_DIMENSION 65535u
#define LZW_MAX_BITS 12
#define LZW_LAST_CODE ((1u << LZW_MAX_BITS) - 1)
#define LZW_HASH_SIZE 8192u /* a power of two, twice the 4096 codes */
#define ALPHA_THRESHOLD 128 /* alpha below: the transparent index */

/* ---- Output buffer. ---- */

typedef struct gif_out {
    uint8_t *data;
    size_t size, capacity;
    bool failed; /* an allocation failed; later writes are dropped */
} gif_out;

static void put_bytes(gif_out *o, const void *bytes, size_t n) {
    if (o->failed) return;
    if (n > o->capacity - o->size) {
        size_t cap = o->capacity ? o->capacity : 4096;
        while (cap - o->size < n) cap *= 2;
        uint8_t *p = realloc(o->data, cap);
        if (!p) {
            o->failed = true;
            return;
        }
        o->data = p;
        o->capacity = cap;
    }
    memcpy(o->data + o->size, bytes, n);
    o->size += n;
}

static void put_byte(gif_out *o, uint8_t b) { put_bytes(o, &b, 1); }

static void put_u16(gif_out *o, uint32_t v) {
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put_bytes(o, b, 2);
}

/* ---- LZW. ---- */

/* Codes are packed least significant bit first into sub-blocks of at most 255 bytes. */
typedef struct lzw_writer {
    gif_out *out;
    uint32_t acc;      /* pending bits */
    unsigned nbits;    /* how many */
    uint8_t block[255];
    unsigned block_len;
    unsigned width;    /* bits per code now */
    uint32_t next;     /* the code the next table entry gets */
    uint32_t clear;    /* clear code; end code is clear + 1 */
    int32_t keys[LZW_HASH_SIZE];   /* prefix << 8 | byte, or -1 */
    uint16_t codes[LZW_HASH_SIZE];
} lzw_writer;

static void lzw_put_code(lzw_writer *w, uint32_t code) {
    w->acc |= code << w->nbits;
    w->nbits += w->width;
    while (w->nbits >= 8) {
        w->block[w->block_len++] = (uint8_t)w->acc;
        w->acc >>= 8;
        w->nbits -= 8;
        if (w->block_len == 255) {
            put_byte(w->out, 255);
            put_bytes(w->out, w->block, 255);
            w->block_len = 0;
        }
    }
}

static void lzw_reset(lzw_writer *w, unsigned min_code_size) {
    w->width = min_code_size + 1;
    w->next = w->clear + 2;
    memset(w->keys, 0xFF, sizeof w->keys);
}

static uint32_t lzw_slot(int32_t key) {
    return ((uint32_t)key * 2654435761u) >> (32 - 13); /* 13 bits: LZW_HASH_SIZE */
}

/*
 * Counts a new table entry after a code was written: the code width grows once the
 * entry's code needs one more bit (the decoder reads one entry behind, and grows at the
 * same code); at 4095 the table is full and a clear code starts it afresh. Returns false
 * when the table was cleared (the entry is not to be stored).
 */
static bool lzw_count_entry(lzw_writer *w, unsigned min_code_size) {
    uint32_t code = w->next++;
    if (code == (1u << w->width) && w->width < LZW_MAX_BITS) w->width++;
    if (code == LZW_LAST_CODE) {
        lzw_put_code(w, w->clear);
        lzw_reset(w, min_code_size);
        return false;
    }
    return true;
}

/* Writes the LZW minimum code size and the image data sub-blocks for `n` indices. */
static void lzw_encode(lzw_writer *w, gif_out *out, const uint8_t *indices, size_t n,
                       unsigned min_code_size) {
    w->out = out;
    w->acc = 0;
    w->nbits = 0;
    w->block_len = 0;
    w->clear = 1u << min_code_size;
    lzw_reset(w, min_code_size);
    put_byte(out, (uint8_t)min_code_size);
    lzw_put_code(w, w->clear);
    uint32_t prefix = indices[0];
    for (size_t i = 1; i < n; i++) {
        int32_t key = (int32_t)(prefix << 8 | indices[i]);
        uint32_t slot = lzw_slot(key);
        while (w->keys[slot] != -1 && w->keys[slot] != key) slot = (slot + 1) & (LZW_HASH_SIZE - 1);
        if (w->keys[slot] == key) {
            prefix = w->codes[slot];
            continue;
        }
        lzw_put_code(w, prefix);
        uint32_t code = w->next;
        if (lzw_count_entry(w, min_code_size)) {
            w->keys[slot] = key;
            w->codes[slot] = (uint16_t)code;
        }
        prefix = indices[i];
    }
    lzw_put_code(w, prefix);
    lzw_count_entry(w, min_code_size);
    lzw_put_code(w, w->clear + 1);
    if (w->nbits > 0) {
        w->width = 8 - w->nbits; /* pad the last byte with zero bits */
        lzw_put_code(w, 0);
    }
    if (w->block_len > 0) {
        put_byte(out, (uint8_t)w->block_len);
        put_bytes(out, w->block, w->block_len);
    }
    put_byte(out, 0);
}

/* ---- Palettes. ---- */

typedef struct gif_frame {
    uint32_t left, top, width, height;
    uint8_t *rgba;       /* straight RGBA, width * 4 bytes a row, alpha 0 or 255 */
    uint8_t *indices;    /* width * height */
    uint8_t palette[256 * 3];
    unsigned colors;
    int transparent;     /* index, or -1 */
} gif_frame;

/* The frame's own colours when there are at most 256 of them; false otherwise. */
static bool exact_palette(gif_frame *f) {
    uint32_t keys[512];
    uint16_t values[512];
    bool used[512];
    memset(used, 0, sizeof used);
    unsigned colors = 0;
    size_t n = (size_t)f->width * f->height;
    for (size_t i = 0; i < n; i++) {
        uint32_t c;
        memcpy(&c, f->rgba + i * 4, 4);
        uint32_t slot = (c * 2654435761u) >> 23; /* 9 bits */
        while (used[slot] && keys[slot] != c) slot = (slot + 1) & 511;
        if (!used[slot]) {
            if (colors == 256) return false;
            used[slot] = true;
            keys[slot] = c;
            const uint8_t *p = f->rgba + i * 4;
            if (p[3] == 0) f->transparent = (int)colors;
            memcpy(f->palette + colors * 3, p, 3);
            values[slot] = (uint16_t)colors++;
        }
        f->indices[i] = (uint8_t)values[slot];
    }
    f->colors = colors;
    return true;
}

static ic_status quantized_palette(gif_frame *f, liq_attr *attr, float dither, ic_error *err) {
    liq_image *image = liq_image_create_rgba(attr, f->rgba, (int)f->width, (int)f->height, 0);
    if (!image) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "GIF: libimagequant cannot take the frame");
    liq_result *result = NULL;
    liq_error e = liq_image_quantize(image, attr, &result);
    if (e == LIQ_OK) e = liq_set_dithering_level(result, dither);
    if (e == LIQ_OK) e = liq_write_remapped_image(result, image, f->indices, (size_t)f->width * f->height);
    if (e != LIQ_OK) {
        if (result) liq_result_destroy(result);
        liq_image_destroy(image);
        return ic__set_error(err, e == LIQ_OUT_OF_MEMORY ? IC_ERR_OUT_OF_MEMORY : IC_ERR_ENCODE,
                            "GIF: libimagequant failed to quantise a frame (liq_error %d)", (int)e);
    }
    const liq_palette *pal = liq_get_palette(result);
    f->colors = pal->count;
    for (unsigned i = 0; i < pal->count; i++) {
        f->palette[i * 3] = pal->entries[i].r;
        f->palette[i * 3 + 1] = pal->entries[i].g;
        f->palette[i * 3 + 2] = pal->entries[i].b;
        if (pal->entries[i].a < ALPHA_THRESHOLD) f->transparent = (int)i;
    }
    liq_result_destroy(result);
    liq_image_destroy(image);
    return IC_OK;
}

/* ---- Frames. ---- */

/* The smallest rectangle where frames a and b differ; false when they are identical. */
static bool changed_rect(const ic_image *img, const uint8_t *a, const uint8_t *b, gif_frame *f) {
    uint32_t x0 = img->width, y0 = img->height, x1 = 0, y1 = 0;
    for (uint32_t y = 0; y < img->height; y++) {
        const uint8_t *ra = a + (size_t)y * img->stride, *rb = b + (size_t)y * img->stride;
        if (memcmp(ra, rb, (size_t)img->width * 4) == 0) continue;
        if (y < y0) y0 = y;
        y1 = y + 1;
        uint32_t l = 0, r = img->width;
        while (memcmp(ra + l * 4, rb + l * 4, 4) == 0) l++;
        while (memcmp(ra + (r - 1) * 4, rb + (r - 1) * 4, 4) == 0) r--;
        if (l < x0) x0 = l;
        if (r > x1) x1 = r;
    }
    if (y1 == 0) return false;
    f->left = x0;
    f->top = y0;
    f->width = x1 - x0;
    f->height = y1 - y0;
    return true;
}

/* The frame's rectangle as straight RGBA with alpha 0 or 255 (transparent pixels 0,0,0,0). */
static void straight_pixels(const ic_image *img, const uint8_t *frame, gif_frame *f) {
    for (uint32_t y = 0; y < f->height; y++) {
        uint8_t *d = f->rgba + (size_t)y * f->width * 4;
        ic_unpremultiply_row(d, frame + (size_t)(f->top + y) * img->stride + (size_t)f->left * 4, f->width);
        for (uint32_t x = 0; x < f->width; x++, d += 4) {
            if (d[3] < ALPHA_THRESHOLD) {
                memset(d, 0, 4);
            } else {
                d[3] = 255;
            }
        }
    }
}

static void write_frame(gif_out *o, lzw_writer *w, const gif_frame *f, int disposal,
                        uint32_t delay_ms, bool animated) {
    if (animated || f->transparent >= 0) {
        uint32_t cs = (delay_ms + 5) / 10;
        if (delay_ms > UINT32_MAX - 5 || cs > 65535) cs = 65535;
        put_bytes(o, "\x21\xF9\x04", 3);
        put_byte(o, (uint8_t)(disposal << 2 | (f->transparent >= 0 ? 1 : 0)));
        put_u16(o, cs);
        put_byte(o, (uint8_t)(f->transparent >= 0 ? f->transparent : 0));
        put_byte(o, 0);
    }
    unsigned bits = 1; /* a colour table of 2^bits entries, at least 2 */
    while ((1u << bits) < f->colors) bits++;
    put_byte(o, 0x2C);
    put_u16(o, f->left);
    put_u16(o, f->top);
    put_u16(o, f->width);
    put_u16(o, f->height);
    put_byte(o, (uint8_t)(0x80 | (bits - 1)));
    uint8_t table[256 * 3];
    memset(table, 0, sizeof table);
    memcpy(table, f->palette, (size_t)f->colors * 3);
    put_bytes(o, table, (size_t)3 << bits);
    lzw_encode(w, o, f->indices, (size_t)f->width * f->height, bits < 2 ? 2 : bits);
}

ic_status ic__encode_gif(const ic_image *img, const ic_encode_options *opt, uint8_t **out,
                        size_t *out_size, ic_error *err) {
    if (opt->quality < 0 || opt->quality > 100) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "GIF: quality %d is not 0...100", opt->quality);
    }
    if (opt->speed < 1 || opt->speed > 10) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "GIF: speed %d is not 1...10", opt->speed);
    }
    if (!(opt->dither_level >= 0.0f && opt->dither_level <= 1.0f)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "GIF: dither level %g is not 0...1",
                            (double)opt->dither_level);
    }
    if (img->width > GIF_MAX_DIMENSION || img->height > GIF_MAX_DIMENSION) {
        return ic__set_error(err, IC_ERR_ENCODE, "GIF: %ux%u is larger than GIF's %ux%u", img->width,
                            img->height, GIF_MAX_DIMENSION, GIF_MAX_DIMENSION);
    }
    ic_status loaded = ic__liq_load("GIF", err);
    if (loaded != IC_OK) return loaded;
    bool animated = opt->all_frames && img->frame_count > 1;
    if (animated && img->loop_count > 65535) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "GIF: loop count %u is more than the NETSCAPE2.0 extension holds (65535)",
                            img->loop_count);
    }
    uint32_t first = animated ? 0 : opt->frame, last = animated ? img->frame_count : opt->frame + 1;
    bool differencing = animated && opt->frame_differencing && img->is_opaque;
    size_t pixels = (size_t)img->width * img->height;
    gif_frame f;
    memset(&f, 0, sizeof f);
    f.rgba = malloc(pixels * 4);
    f.indices = malloc(pixels);
    lzw_writer *w = malloc(sizeof *w);
    liq_attr *attr = liq_attr_create();
    gif_out o = {0};
    ic_status st = IC_OK;
    if (!f.rgba || !f.indices || !w || !attr) {
        st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "GIF: out of memory for a %ux%u frame",
                          img->width, img->height);
        goto done;
    }
    if (liq_set_quality(attr, 0, opt->quality) != LIQ_OK || liq_set_speed(attr, opt->speed) != LIQ_OK) {
        st = ic__set_error(err, IC_ERR_INTERNAL, "GIF: libimagequant refused quality %d, speed %d",
                          opt->quality, opt->speed);
        goto done;
    }
    put_bytes(&o, "GIF89a", 6);
    put_u16(&o, img->width);
    put_u16(&o, img->height);
    put_bytes(&o, "\x00\x00\x00", 3); /* no global colour table, background 0, no aspect */
    if (animated) {
        put_bytes(&o, "\x21\xFF\x0B" "NETSCAPE2.0" "\x03\x01", 16);
        put_u16(&o, img->loop_count);
        put_byte(&o, 0);
    }
    for (uint32_t i = first; i < last; i++) {
        const uint8_t *frame = ic_image_frame(img, i);
        f.left = f.top = 0;
        f.width = img->width;
        f.height = img->height;
        if (differencing && i > 0 && !changed_rect(img, ic_image_frame(img, i - 1), frame, &f)) {
            f.width = f.height = 1; /* unchanged: one pixel carries the delay */
        }
        f.transparent = -1;
        straight_pixels(img, frame, &f);
        if (!exact_palette(&f)) {
            f.transparent = -1;
            st = quantized_palette(&f, attr, opt->dither_level, err);
            if (st != IC_OK) goto done;
        }
        uint32_t delay = animated && img->frame_delays_ms ? img->frame_delays_ms[i] : 0;
        write_frame(&o, w, &f, differencing ? 1 : animated ? 2 : 0, delay, animated);
    }
    put_byte(&o, 0x3B);
    if (o.failed) {
        st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "GIF: out of memory for the file");
        goto done;
    }
    *out = o.data;
    *out_size = o.size;
    o.data = NULL;
done:
    free(o.data);
    if (attr) liq_attr_destroy(attr);
    free(w);
    free(f.indices);
    free(f.rgba);
    return st;
}
