/*
 * png.c — PNG decoding with libpng's sequential reader.
 *
 * Still images first try the fast path (decode_fast, png_fast.c): libpng reads
 * the chunks before the first IDAT as below, then png_fast.c inflates the
 * whole IDAT stream with libdeflate and unfilters and expands the rows itself.
 * When it declines a file (over its memory budget, anything unusual in or
 * after the IDATs, any zlib error) nothing has been delivered yet and the file
 * is decoded again here with libpng from the start, so errors, lenient cases
 * and huge images (row streaming) stay libpng's. The incremental engine
 * (png_stream.c) reads the header with the same ic__png_read_header and
 * applies png_fast.c's rules to the bytes as they arrive.
 *
 * Every colour type and bit depth is expanded to RGBA8 by libpng's transforms
 * (palette and tRNS to alpha, low bit depths to 8, 16 bits truncated to 8,
 * grey to RGB). Ancillary chunks we do not use (text, gAMA, cHRM, ...) are
 * skipped unread, so their decompression cannot cost time or memory. An iCCP
 * profile is read (libpng inflates it within its chunk limit, counted against
 * the decode's memory) and applied as ic_color.h says; gAMA and cHRM are not
 * applied, as the references do not. libpng errors longjmp back here; libpng's
 * allocations are counted against the limit.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <zlib.h>

#include "../common/ic_bytes.h"
#include "ic_png_internal.h"
#include "ic_apng.h"
#include "ic_dec_color.h"
#include "ic_decoder.h"
#include "ic_exif.h"
#include "ic_formats.h"
#include "ic_inc_engine.h"
#include "ic_png_chunks.h"
#include "ic_sink.h"

typedef struct png_ctx {
    ic__decoder *d;
    const uint8_t *src;  /* the PNG being read: the input, or an APNG frame re-wrapped */
    size_t src_size;
    size_t pos;
    bool eof;            /* the reader ran out of bytes */
    char message[160];   /* libpng's error text */
    ic_status status;    /* set before png_error when not libpng's own failure */
} png_ctx;

static void on_error(png_structp png, png_const_charp msg) {
    png_ctx *c = png_get_error_ptr(png);
    snprintf(c->message, sizeof c->message, "%s", msg ? msg : "error");
    png_longjmp(png, 1);
}

/* Warnings (benign errors included, as libpng's reader treats them) are not failures. */
static void on_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

static void on_read(png_structp png, png_bytep out, size_t count) {
    png_ctx *c = png_get_io_ptr(png);
    if (count > c->src_size - c->pos) {
        c->eof = true;
        png_error(png, "unexpected end of data");
    }
    memcpy(out, c->src + c->pos, count);
    c->pos += count;
}

/* libpng's allocations go through the decode's memory accounting. A 16-byte
 * header remembers each block's size. */
static png_voidp on_malloc(png_structp png, png_alloc_size_t size) {
    png_ctx *c = png_get_mem_ptr(png);
    if (size > SIZE_MAX - 16) return NULL;
    uint8_t *p = ic__dec_malloc(c->d, size + 16);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    return p + 16;
}

static void on_free(png_structp png, png_voidp ptr) {
    if (!ptr) return;
    png_ctx *c = png_get_mem_ptr(png);
    uint8_t *p = (uint8_t *)ptr - 16;
    png_alloc_size_t size;
    memcpy(&size, p, sizeof size);
    ic__dec_free(c->d, p, size + 16);
}

/* Chunks ImageKit does not use. Skipping them means a zTXt or iCCP bomb is never inflated. */
static const png_byte ignored_chunks[] =
    "bKGD\0cHRM\0cICP\0eXIf\0gAMA\0hIST\0iTXt\0oFFs\0pCAL\0pHYs\0sBIT\0sCAL\0sPLT\0"
    "sRGB\0tEXt\0tIME\0zTXt\0";

/* Starts `c` on the PNG stream src[0..size) and makes libpng's reader and info struct for
 * it; on failure both are NULL and the error is set. */
static ic_status create_reader(png_ctx *c, ic__decoder *d, const uint8_t *src, size_t size,
                               png_structp *out_png, png_infop *out_info) {
    memset(c, 0, sizeof *c);
    c->d = d;
    c->src = src;
    c->src_size = size;
    c->status = IC_OK;
    *out_png = NULL;
    *out_info = NULL;
    png_structp png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, c, on_error, on_warning, c,
                                               on_malloc, on_free);
    if (!png) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "PNG: cannot create reader");
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "PNG: cannot create reader");
    }
    png_set_read_fn(png, c, on_read);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, ignored_chunks,
                                (int)(sizeof ignored_chunks / 5));
    /* Our own limits apply; let libpng accept anything up to them. */
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_set_chunk_cache_max(png, 1000);
    png_set_chunk_malloc_max(png, 16u << 20);
    *out_png = png;
    *out_info = info;
    return IC_OK;
}

/* Turns a longjmp from libpng into a status. */
static ic_status png_failure(png_ctx *c) {
    ic__decoder *d = c->d;
    if (c->status != IC_OK) return c->status;
    if (c->eof) {
        return ic__set_error(d->err, IC_ERR_TRUNCATED, "PNG: truncated after %zu bytes", d->size);
    }
    if (d->err && d->err->code == IC_ERR_LIMIT_EXCEEDED) return IC_ERR_LIMIT_EXCEEDED;
    if (strstr(c->message, "Out of memory") || strstr(c->message, "out of memory")) {
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "PNG: %s", c->message);
    }
    return ic__set_error(d->err, IC_ERR_CORRUPT, "PNG: %s", c->message);
}

/* Asks libpng for RGBA8 rows (see the file comment), updates `info`, and returns
 * the number of interlace passes; *has_alpha tells whether rows may be transparent. */
static int set_rgba_transforms(png_ctx *c, png_structp png, png_infop info, bool *has_alpha) {
    png_uint_32 width = png_get_image_width(png, info);
    int bit_depth = png_get_bit_depth(png, info), color_type = png_get_color_type(png, info);
    bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    *has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (has_trns) png_set_tRNS_to_alpha(png);
    if (bit_depth == 16) png_set_strip_16(png);
    if (!(color_type & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(png);
    if (!*has_alpha) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) {
        c->status = ic__set_error(c->d->err, IC_ERR_INTERNAL, "PNG: unexpected row size after transforms");
        png_error(png, "internal");
    }
    return passes;
}

/* Takes the iCCP profile, if any, and prepares the colour conversion of the rows. */
static void take_iccp(ic__decoder *d, png_structp png, png_infop info, int color_type) {
    png_charp icc_name;
    int icc_compression;
    png_bytep icc;
    png_uint_32 icc_size;
    if (png_get_iCCP(png, info, &icc_name, &icc_compression, &icc, &icc_size) == PNG_INFO_iCCP) {
        ic__color_take_profile(d, icc, icc_size);
    }
    ic__color_prepare(d, (color_type & PNG_COLOR_MASK_COLOR) ? IC_COLOR_INPUT_RGBA
                                                             : IC_COLOR_INPUT_GRAY);
}

/* Once libpng has read the chunks before the pixels: checks the limits, takes the
 * iCCP profile, sets the transforms and starts the sink. Returns the number of
 * interlace passes; *has_alpha tells whether rows may be transparent. */
static int start_pixels(png_ctx *c, png_structp png, png_infop info, bool *has_alpha) {
    ic__decoder *d = c->d;
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    int color_type = png_get_color_type(png, info);
    c->status = ic__dec_check_size(d, width, height, 1, 0);
    if (c->status != IC_OK) png_error(png, "limit");
    take_iccp(d, png, info, color_type);
    int passes = set_rgba_transforms(c, png, info, has_alpha);
    c->status = ic__dec_begin(d, width, height, 1);
    if (c->status != IC_OK) png_error(png, "allocation");
    return passes;
}

static ic_status decode_libpng(ic__decoder *d);

ic_status ic__png_read_header(ic__decoder *d, const uint8_t *src, size_t size, ic__png_header *h,
                             bool *decline) {
    *decline = false;
    png_ctx c;
    png_structp png;
    png_infop info;
    ic_status created = create_reader(&c, d, src, size, &png, &info);
    if (created != IC_OK) return created;
    if (setjmp(png_jmpbuf(png))) {
        ic_status st = c.status;
        if (st == IC_OK) {
            *decline = true;
            st = png_failure(&c);
        }
        png_destroy_read_struct(&png, &info, NULL);
        return st;
    }
    png_read_info(png, info);
    png_uint_32 width, height;
    int bit_depth, color_type, interlace, compression, filter;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, &compression,
                 &filter);
    c.status = ic__dec_check_size(d, width, height, 1, 0);
    if (c.status != IC_OK) png_error(png, "limit");
    if (compression != PNG_COMPRESSION_TYPE_BASE || filter != PNG_FILTER_TYPE_BASE) {
        *decline = true;
        c.status = ic__set_error(d->err, IC_ERR_CORRUPT, "PNG: compression %d, filter method %d",
                                compression, filter);
        png_error(png, "method");
    }
    memset(h, 0, sizeof *h);
    h->width = width;
    h->height = height;
    h->bit_depth = (uint8_t)bit_depth;
    h->color_type = (uint8_t)color_type;
    h->interlace = interlace != PNG_INTERLACE_NONE;
    h->idat_at = c.pos - 8;
    png_colorp palette;
    int num_palette = 0;
    if (png_get_PLTE(png, info, &palette, &num_palette) == PNG_INFO_PLTE) {
        h->num_palette = (uint16_t)(num_palette > 256 ? 256 : num_palette);
        for (int i = 0; i < h->num_palette; i++) {
            h->palette[i][0] = palette[i].red;
            h->palette[i][1] = palette[i].green;
            h->palette[i][2] = palette[i].blue;
        }
    }
    png_bytep trans_alpha;
    int num_trans = 0;
    png_color_16p trans_color;
    if (png_get_tRNS(png, info, &trans_alpha, &num_trans, &trans_color) == PNG_INFO_tRNS) {
        h->has_trns = true;
        if (color_type == PNG_COLOR_TYPE_PALETTE && trans_alpha) {
            h->num_trans = (uint16_t)(num_trans > 256 ? 256 : num_trans);
            memcpy(h->trans_alpha, trans_alpha, h->num_trans);
        } else if (trans_color) {
            h->trans_gray = trans_color->gray;
            h->trans_red = trans_color->red;
            h->trans_green = trans_color->green;
            h->trans_blue = trans_color->blue;
        }
    }
    take_iccp(d, png, info, color_type);
    /* libpng's part is done: its memory goes before the image's arrives. */
    png_destroy_read_struct(&png, &info, NULL);
    return IC_OK;
}

/* The fast path (png_fast.c): libpng reads the chunks before the first IDAT, png_fast.c
 * the pixels. Sets *fallback (error cleared, nothing kept) when libpng should decode the
 * file instead: libpng fails before the IDAT, or png_fast.c declines. */
static ic_status decode_fast(ic__decoder *d, bool *fallback) {
    ic__png_header *h = ic__dec_malloc(d, sizeof *h);
    if (!h) return d->err && d->err->code ? d->err->code : IC_ERR_OUT_OF_MEMORY;
    ic_status st = ic__png_read_header(d, d->data, d->size, h, fallback);
    ic__png_fast f;
    if (st == IC_OK) {
        st = ic__png_fast_inflate(d, h, &f);
        if (st != IC_OK) {
            *fallback = true;
            ic__color_free(d);
            memset(&d->color, 0, sizeof d->color);
        }
    }
    if (st == IC_OK) st = ic__png_fast_emit(d, &f);
    ic__dec_free(d, h, sizeof *h);
    return st;
}

ic_status ic__png_decode(ic__decoder *d) {
    /* eXIf is read from the bytes (exif.c); libpng skips it. */
    d->orientation = ic__png_exif_orientation(d->data, d->size);
    if (d->opts.all_frames && ic__apng_frame_count(d->data, d->size) > 0) return ic__apng_decode(d);
    if (d->png_path != IC_PNG_PATH_LIBPNG) {
        bool fallback;
        ic_status st = decode_fast(d, &fallback);
        if (!fallback || d->png_path == IC_PNG_PATH_FAST) return st;
        ic__clear_error(d->err);
    }
    return decode_libpng(d);
}

/* The libpng path: rows streamed through libpng's transforms (memory bounded by a row,
 * or the whole image for Adam7). */
static ic_status decode_libpng(ic__decoder *d) {
    png_ctx c;
    png_structp png;
    png_infop info;
    ic_status created = create_reader(&c, d, d->data, d->size, &png, &info);
    if (created != IC_OK) return created;
    png_bytep *volatile row_pointers = NULL;
    volatile size_t row_pointers_size = 0;
    volatile bool pixels_complete = false;
    ic__dec_buffer staging = {0};

    if (setjmp(png_jmpbuf(png))) {
        ic_status st = png_failure(&c);
        if (pixels_complete && c.eof) st = IC_OK; /* only IEND is missing */
        if (st == IC_OK) ic__clear_error(d->err);
        ic__dec_free(d, row_pointers, row_pointers_size);
        ic__dec_buffer_free(d, &staging);
        png_destroy_read_struct(&png, &info, NULL);
        return st;
    }

    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    bool has_alpha;
    int passes = start_pixels(&c, png, info, &has_alpha);

    if (passes == 1) {
        for (uint32_t y = 0; y < height; y++) {
            if ((y & 63) == 0 && ic__dec_cancelled(d)) {
                c.status = ic__dec_fail_cancelled(d);
                png_error(png, "cancelled");
            }
            png_read_row(png, ic__dec_row(d, 0, y), NULL);
            ic__dec_rows_done(d, 0, y, 1, has_alpha);
        }
    } else {
        /* Adam7: libpng merges each pass into the rows, so every row must exist at
         * once — the output itself, or a full-size staging frame when resampling. */
        row_pointers_size = sizeof(png_bytep) * height;
        row_pointers = ic__dec_malloc(d, row_pointers_size);
        if (!row_pointers) {
            c.status = d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
            png_error(png, "allocation");
        }
        size_t stride = ic__stride_for_width(width);
        if (!ic__dec_is_direct(d)) {
            c.status = ic__dec_buffer_alloc(d, stride * height, &staging);
            if (c.status != IC_OK) png_error(png, "allocation");
        }
        for (uint32_t y = 0; y < height; y++) {
            row_pointers[y] = staging.p ? staging.p + (size_t)y * stride : ic__dec_row(d, 0, y);
        }
        for (int pass = 0; pass < passes; pass++) {
            if (ic__dec_cancelled(d)) {
                c.status = ic__dec_fail_cancelled(d);
                png_error(png, "cancelled");
            }
            png_read_rows(png, row_pointers, NULL, height);
        }
        if (staging.p) {
            ic__dec_put_rows(d, 0, 0, height, staging.p, stride, has_alpha);
        } else {
            ic__dec_rows_done(d, 0, 0, height, has_alpha);
        }
    }
    pixels_complete = true;
    png_read_end(png, NULL);

    ic__dec_free(d, row_pointers, row_pointers_size);
    ic__dec_buffer_free(d, &staging);
    png_destroy_read_struct(&png, &info, NULL);
    return IC_OK;
}

size_t ic__png_header_size(const uint8_t *p, size_t n) {
    size_t pos = 8; /* after the signature */
    ic__png_chunk c;
    while (ic__png_next_chunk(p, n, &pos, &c)) {
        if (ic__png_chunk_is(&c, "IDAT")) return c.at + 8;
        if (ic__png_chunk_is(&c, "IEND") || c.length > IC_PNG_MAX_CHUNK_LENGTH) return SIZE_MAX;
    }
    return 0;
}

ic_status ic__png_decode_rgba(ic__decoder *d, const uint8_t *png_data, size_t size, uint8_t *out,
                             size_t stride, uint32_t width, uint32_t height) {
    png_ctx c;
    png_structp png;
    png_infop info;
    ic_status created = create_reader(&c, d, png_data, size, &png, &info);
    if (created != IC_OK) return created;
    png_bytep *volatile row_pointers = NULL;
    volatile size_t row_pointers_size = 0;
    if (setjmp(png_jmpbuf(png))) {
        ic_status st = png_failure(&c);
        ic__dec_free(d, row_pointers, row_pointers_size);
        png_destroy_read_struct(&png, &info, NULL);
        return st;
    }
    png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
    png_read_info(png, info);
    if (png_get_image_width(png, info) != width || png_get_image_height(png, info) != height) {
        c.status = ic__set_error(d->err, IC_ERR_INTERNAL, "PNG: re-wrapped frame has the wrong size");
        png_error(png, "internal");
    }
    bool has_alpha;
    int passes = set_rgba_transforms(&c, png, info, &has_alpha);
    row_pointers_size = sizeof(png_bytep) * height;
    row_pointers = ic__dec_malloc(d, row_pointers_size);
    if (!row_pointers) {
        c.status = d->err ? d->err->code : IC_ERR_OUT_OF_MEMORY;
        png_error(png, "allocation");
    }
    for (uint32_t y = 0; y < height; y++) row_pointers[y] = out + (size_t)y * stride;
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t y = 0; y < height; y += 64) {
            if (ic__dec_cancelled(d)) {
                c.status = ic__dec_fail_cancelled(d);
                png_error(png, "cancelled");
            }
            png_read_rows(png, row_pointers + y, NULL, height - y < 64 ? height - y : 64);
        }
    }
    ic__dec_free(d, row_pointers, row_pointers_size);
    png_destroy_read_struct(&png, &info, NULL);
    return IC_OK;
}

/* Notes an iCCP chunk's profile (name, NUL, method, zlib data) in `info`: its header
 * is inflated for the colour space, and the size comes from that header. */
static void probe_iccp(const uint8_t *chunk, size_t len, ic_info *info) {
    const uint8_t *nul = memchr(chunk, 0, len < 81 ? len : 81);
    if (!nul || (size_t)(nul - chunk) + 2 > len) return;
    const uint8_t *z = nul + 2;
    uint8_t head[20];
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit(&s) != Z_OK) return;
    s.next_in = (Bytef *)z;
    s.avail_in = (uInt)(len - (size_t)(z - chunk));
    s.next_out = head;
    s.avail_out = sizeof head;
    int r = inflate(&s, Z_SYNC_FLUSH);
    inflateEnd(&s);
    if ((r != Z_OK && r != Z_STREAM_END) || s.avail_out != 0) return;
    size_t total = ic__be32(head);
    ic__icc_note_probe(info, head, sizeof head, total);
}

ic_status ic__png_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    /* Signature (8) + IHDR length/type (8) + IHDR data (13). */
    if (n < 29 || memcmp(p + 12, "IHDR", 4) != 0) {
        return ic__set_error(err, IC_ERR_CORRUPT, "PNG: the first chunk is not IHDR");
    }
    info->width = ic__be32(p + 16);
    info->height = ic__be32(p + 20);
    info->bit_depth = p[24];
    uint8_t color_type = p[25];
    info->is_progressive = p[28] == 1;
    info->has_alpha = (color_type & 4) != 0;
    /* A tRNS chunk before IDAT also means alpha. */
    size_t pos = 8;
    ic__png_chunk c;
    while (ic__png_next_chunk(p, n, &pos, &c)) {
        if (ic__png_chunk_is(&c, "tRNS")) info->has_alpha = 1;
        if (ic__png_chunk_is(&c, "IDAT") || ic__png_chunk_is(&c, "IEND") || !c.data_in) break;
        if (ic__png_chunk_is(&c, "iCCP") && !info->has_icc_profile) probe_iccp(c.data, c.length, info);
    }
    if (info->width == 0 || info->height == 0) {
        return ic__set_error(err, IC_ERR_CORRUPT, "PNG: image size %ux%u is empty", info->width,
                            info->height);
    }
    uint32_t frames = ic__apng_frame_count(p, n);
    info->frame_count = frames > 0 ? frames : 1;
    info->orientation = ic__png_exif_orientation(p, n);
    return IC_OK;
}
