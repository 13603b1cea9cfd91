/*
 * store_decode.c — decoding a disk-tier entry (format in ic_store.h) from a
 * source, never trusting what is read: every length is bounded and the chunk
 * table must account for the payload before the output is allocated, and
 * checksums are verified before pixels are returned.
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_hash.h"
#include "ic_store_internal.h"

/* LZ4 expands a block at most ~255 times; a payload claiming more is corrupt. */
#define LZ4_MAX_RATIO 256u

void ic_store_read_options_init(ic_store_read_options *o) {
    memset(o, 0, sizeof *o);
    o->max_bytes = IC_STORE_DEFAULT_MAX_BYTES;
    o->touch_after_ms = 60000;
    o->remove_corrupt = 1;
}

/* The fixed header, parsed. */
typedef struct header {
    ic_store_kind kind;
    ic_store_filter filter;
    uint8_t flags, orientation;
    uint32_t width, height, frames, pixel_format, source_format, source_width, source_height, loop_count;
    uint64_t raw_size;
    uint32_t chunk, key_length, etag_length, last_modified_length, user_data_length, delay_count;
    int64_t created_ms, expires_ms;
    uint64_t total; /* whole header, checksum included */
} header;

/* Whether `size` bytes at `data` have the XXH64 `expected`. Fuzzing builds (the conventional
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) accept any sum, so a fuzzer reaches the parsing
 * behind the checksums; nothing else defines it. */
static bool checksum_matches(const uint8_t *data, size_t size, uint64_t expected) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    (void)data;
    (void)size;
    (void)expected;
    return true;
#else
    return ic_xxh64(data, size, 0) == expected;
#endif
}

static ic_status corrupt(ic_error *err, const char *what) {
    return ic__set_error(err, IC_ERR_CORRUPT, "store: corrupt entry (%s)", what);
}

static ic_status parse_header(const uint8_t *h, header *out, ic_error *err) {
    if (memcmp(h, IC_STORE_MAGIC, 8) != 0) return corrupt(err, "bad magic");
    uint16_t version = ic__get16(h + 8);
    if (version == 0) return corrupt(err, "version 0");
    if (version > IC_STORE_FORMAT_VERSION) {
        return ic__set_error(err, IC_ERR_NOT_FOUND, "store: entry has format version %u; this reader knows %u",
                            version, IC_STORE_FORMAT_VERSION);
    }
    if (ic__get16(h + 10) != IC_STORE_FIXED_HEADER_SIZE) return corrupt(err, "header size");
    header x = {
        .kind = (ic_store_kind)h[12],
        .filter = (ic_store_filter)h[13],
        .flags = h[14],
        .orientation = h[15],
        .width = ic__get32(h + 16),
        .height = ic__get32(h + 20),
        .frames = ic__get32(h + 24),
        .pixel_format = ic__get32(h + 28),
        .source_format = ic__get32(h + 32),
        .source_width = ic__get32(h + 36),
        .source_height = ic__get32(h + 40),
        .loop_count = ic__get32(h + 44),
        .raw_size = ic__get64(h + 48),
        .chunk = ic__get32(h + 56),
        .key_length = ic__get32(h + 60),
        .created_ms = (int64_t)ic__get64(h + 64),
        .expires_ms = (int64_t)ic__get64(h + 72),
        .etag_length = ic__get32(h + 80),
        .last_modified_length = ic__get32(h + 84),
        .user_data_length = ic__get32(h + 88),
        .delay_count = ic__get32(h + 92),
    };
    if (x.key_length == 0 || x.key_length > IC_STORE_MAX_KEY_BYTES || x.etag_length > IC_STORE_MAX_ETAG_BYTES ||
        x.last_modified_length > IC_STORE_MAX_LAST_MODIFIED_BYTES ||
        x.user_data_length > IC_STORE_MAX_USER_DATA_BYTES) {
        return corrupt(err, "metadata lengths");
    }
    if (x.chunk == 0 || x.chunk > IC_STORE_MAX_CHUNK_BYTES) return corrupt(err, "chunk size");
    if (x.kind == IC_STORE_KIND_DATA) {
        if (x.filter != IC_STORE_FILTER_NONE || x.flags || x.orientation || x.width || x.height || x.frames ||
            x.pixel_format || x.source_format || x.source_width || x.source_height || x.loop_count ||
            x.delay_count) {
            return corrupt(err, "bitmap fields in a data entry");
        }
    } else if (x.kind == IC_STORE_KIND_BITMAP) {
        if (x.width == 0 || x.height == 0 || x.frames == 0 || x.frames > IC_STORE_MAX_FRAMES) {
            return corrupt(err, "dimensions");
        }
        if (x.pixel_format != IC_PIXEL_RGBA8_PREMULTIPLIED || x.source_format > IC_FORMAT_SVG ||
            x.orientation < 1 || x.orientation > 8 || (x.flags & ~3u) || x.filter > IC_STORE_FILTER_RGB_UP) {
            return corrupt(err, "pixel format, source format, orientation, flags or filter");
        }
        bool rgb = x.filter == IC_STORE_FILTER_RGB || x.filter == IC_STORE_FILTER_RGB_UP;
        if (rgb && !(x.flags & 1u)) return corrupt(err, "rgb filter on a transparent image");
        if (x.delay_count != 0 && (x.frames == 1 || x.delay_count != x.frames)) return corrupt(err, "delay count");
        uint64_t row_bytes = (uint64_t)x.width * 4u, raw;
        if (row_bytes > x.chunk || x.chunk % row_bytes != 0) return corrupt(err, "chunk is not whole rows");
        if (__builtin_mul_overflow(row_bytes, (uint64_t)x.height, &raw) ||
            __builtin_mul_overflow(raw, (uint64_t)x.frames, &raw) || raw != x.raw_size) {
            return corrupt(err, "raw size does not match the dimensions");
        }
    } else {
        return corrupt(err, "unknown kind");
    }
    x.total = (uint64_t)IC_STORE_FIXED_HEADER_SIZE + x.key_length + x.etag_length + x.last_modified_length +
              x.user_data_length + (uint64_t)x.delay_count * 4u + 8u;
    *out = x;
    return IC_OK;
}

/* Copies ETag, Last-Modified and caller data into one block the record owns. */
static ic_status copy_strings(const uint8_t *h, const header *x, ic_store_record *r, ic_error *err) {
    size_t n = (size_t)x->etag_length + x->last_modified_length + x->user_data_length;
    if (n == 0) return IC_OK;
    uint8_t *block = malloc(n);
    if (!block) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu bytes", n);
    memcpy(block, h + IC_STORE_FIXED_HEADER_SIZE + x->key_length, n);
    r->ic_strings = block;
    ic_store_meta *m = &r->meta;
    if (x->etag_length) m->etag = (const char *)block;
    m->etag_length = x->etag_length;
    if (x->last_modified_length) m->last_modified = (const char *)block + x->etag_length;
    m->last_modified_length = x->last_modified_length;
    if (x->user_data_length) m->user_data = block + x->etag_length + x->last_modified_length;
    m->user_data_length = x->user_data_length;
    return IC_OK;
}

static ic_status make_image(ic_pool *pool, const uint8_t *h, const header *x, ic_image **out, ic_error *err) {
    ic_status st = ic__image_create_in(pool, x->width, x->height, x->frames, out, err);
    if (st != IC_OK) return st;
    ic_image *img = *out;
    img->source_format = (ic_format)x->source_format;
    img->source_width = x->source_width;
    img->source_height = x->source_height;
    img->orientation = x->orientation;
    img->orientation_applied = (x->flags & 2u) ? 1 : 0;
    img->is_opaque = (x->flags & 1u) ? 1 : 0;
    img->loop_count = x->loop_count;
    if (x->delay_count) {
        const uint8_t *d = h + x->total - 8u - (uint64_t)x->delay_count * 4u;
        for (uint32_t i = 0; i < x->delay_count; i++) img->frame_delays_ms[i] = ic__get32(d + 4u * i);
    }
    return IC_OK;
}

/* What every thread decoding an entry shares: where each chunk is and where it goes. */
typedef struct plan {
    const header *x;
    ic_image *image;
    uint8_t *data;
    const uint8_t *table;
    uint64_t *offsets;
    uint64_t count;
    size_t row_bytes;
    size_t filtered_row_bytes;
    uint32_t rows_per_chunk;
    /* Decompress straight into the destination: no filter and no row padding in between. */
    bool direct;
} plan;

/* Raw and filtered sizes of chunk c. */
static void chunk_sizes(const plan *p, uint64_t c, size_t *raw, size_t *filtered) {
    uint64_t left = p->x->raw_size - c * p->x->chunk;
    *raw = left < p->x->chunk ? (size_t)left : p->x->chunk;
    *filtered = p->x->kind == IC_STORE_KIND_BITMAP ? *raw / p->row_bytes * p->filtered_row_bytes : *raw;
}

/* Reads the chunk table from the end of the entry, checks it and computes every chunk's offset. */
static ic_status load_table(ic__source *s, const header *x, plan *p, ic_error *err) {
    uint64_t count = x->raw_size ? (x->raw_size - 1u) / x->chunk + 1u : 0;
    uint64_t payload = s->size - x->total;
    if (payload < 8 || count > (payload - 8) / IC_STORE_CHUNK_RECORD || x->raw_size / LZ4_MAX_RATIO > payload) {
        return corrupt(err, "payload shorter than its chunks");
    }
    size_t table_size = (size_t)count * IC_STORE_CHUNK_RECORD;
    uint64_t table_offset = s->size - 8 - table_size;
    const uint8_t *t;
    ic_status st = ic__source_need(s, table_offset, table_size + 8, &t, err);
    if (st != IC_OK) return st;
    if (!checksum_matches(t, table_size, ic__get64(t + table_size))) return corrupt(err, "chunk table checksum mismatch");
    uint8_t *table = malloc(table_size ? table_size : 1u);
    uint64_t *offsets = malloc(count ? (size_t)count * sizeof *offsets : 1u);
    if (!table || !offsets) {
        free(table);
        free(offsets);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate a table of %llu chunks",
                            (unsigned long long)count);
    }
    memcpy(table, t, table_size);
    p->table = table;
    p->offsets = offsets;
    p->count = count;
    uint64_t offset = x->total;
    for (uint64_t c = 0; c < count; c++) {
        size_t raw, flen;
        chunk_sizes(p, c, &raw, &flen);
        uint32_t word = ic__get32(table + c * IC_STORE_CHUNK_RECORD);
        size_t stored = word & ~IC_STORE_CHUNK_PLAIN;
        bool plain = (word & IC_STORE_CHUNK_PLAIN) != 0;
        if (plain ? stored != flen : (stored == 0 || stored > (size_t)LZ4_compressBound((int)flen))) {
            return corrupt(err, "chunk size");
        }
        offsets[c] = offset;
        offset += stored;
    }
    return offset == table_offset ? IC_OK : corrupt(err, "chunk sizes do not add up to the payload");
}

/* Reads, checks and expands chunks [first, end) into the image or data buffer. */
static ic_status decode_range(const plan *p, ic__source *s, uint64_t first, uint64_t end, ic_error *err) {
    size_t tmp_size = p->direct ? 0 : (size_t)p->rows_per_chunk * p->filtered_row_bytes;
    int tmp_kind = 0;
    size_t tmp_capacity = 0;
    uint8_t *tmp = p->direct ? NULL : ic__buffer_alloc(s->pool, tmp_size, &tmp_kind, &tmp_capacity);
    if (!p->direct && !tmp) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu bytes", tmp_size);
    uint8_t *dest = p->image ? p->image->pixels : p->data;
    ic_status st = IC_OK;
    for (uint64_t c = first; c < end; c++) {
        size_t raw, flen;
        chunk_sizes(p, c, &raw, &flen);
        const uint8_t *record = p->table + c * IC_STORE_CHUNK_RECORD;
        uint32_t word = ic__get32(record);
        size_t stored = word & ~IC_STORE_CHUNK_PLAIN;
        const uint8_t *src;
        if ((st = ic__source_need(s, p->offsets[c], stored, &src, err)) != IC_OK) break;
        if (!checksum_matches(src, stored, ic__get64(record + 4))) {
            st = corrupt(err, "chunk checksum mismatch");
            break;
        }
        uint8_t *target = p->direct ? dest + c * p->x->chunk : tmp;
        if (!(word & IC_STORE_CHUNK_PLAIN)) {
            if (LZ4_decompress_safe((const char *)src, (char *)target, (int)stored, (int)flen) != (int)flen) {
                st = corrupt(err, "LZ4 data");
                break;
            }
            src = target;
        } else if (p->direct) {
            memcpy(target, src, flen);
        }
        if (!p->direct) {
            uint64_t r0 = c * p->rows_per_chunk;
            ic__filter_decode(p->x->filter, src, p->x->width, (uint32_t)(raw / p->row_bytes),
                             p->image->pixels + (size_t)r0 * p->image->stride, p->image->stride);
        }
    }
    ic__buffer_free(s->pool, tmp, tmp_capacity, tmp_kind);
    return st;
}

/* Decodes the chunks of part `index` of `count` (consecutive chunks, count*index/count on). */
static ic_status decode_part(void *arg, ic__source *s, uint32_t index, uint32_t count, ic_error *err) {
    const plan *p = arg;
    return decode_range(p, s, p->count * index / count, p->count * (index + 1) / count, err);
}

/* Decodes every chunk: a large payload in up to options->threads parts through options->run_parts. */
static ic_status decode_chunks(const plan *p, ic__source *s, const ic_store_read_options *o, ic_error *err) {
    uint64_t n = o->threads > 1 && o->run_parts ? (uint64_t)o->threads : 1;
    if (p->x->raw_size < IC_STORE_PARALLEL_MIN_BYTES) n = 1;
    if (n > IC_STORE_MAX_PARTS) n = IC_STORE_MAX_PARTS;
    if (n > p->count) n = p->count;
    if (n <= 1) return decode_range(p, s, 0, p->count, err);
    return ic__store_run_parts(o, (uint32_t)n, decode_part, (void *)p, s, err);
}

ic_status ic__store_decode_from(ic__source *s, ic_store_kind kind, const char *key, size_t key_length,
                               const ic_store_read_options *options, ic_store_record *out, ic_error *err) {
    ic_store_read_options defaults;
    if (!options) {
        ic_store_read_options_init(&defaults);
        options = &defaults;
    }
    const uint8_t *h;
    header x;
    ic_status st = ic__source_need(s, 0, IC_STORE_FIXED_HEADER_SIZE, &h, err);
    if (st == IC_OK) st = parse_header(h, &x, err);
    if (st != IC_OK) return st;
    /* x.total is below 2 MiB: every length in it was bounded by parse_header. */
    if ((st = ic__source_need(s, 0, (size_t)x.total, &h, err)) != IC_OK) return st;
    if (!checksum_matches(h, (size_t)x.total - 8u, ic__get64(h + x.total - 8u))) {
        return corrupt(err, "header checksum mismatch");
    }
    if (x.kind != kind || x.key_length != key_length || memcmp(h + IC_STORE_FIXED_HEADER_SIZE, key, key_length) != 0) {
        return ic__set_error(err, IC_ERR_NOT_FOUND, "store: the file holds another key");
    }
    if (x.raw_size > options->max_bytes || x.raw_size > SIZE_MAX / 2) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED, "store: entry of %llu bytes exceeds the limit of %llu",
                            (unsigned long long)x.raw_size, (unsigned long long)options->max_bytes);
    }

    plan p = {.x = &x, .row_bytes = 1, .direct = true};
    if (x.kind == IC_STORE_KIND_BITMAP) {
        p.row_bytes = (size_t)x.width * 4u;
        p.filtered_row_bytes = ic__filter_row_bytes(x.filter, x.width);
        p.rows_per_chunk = (uint32_t)(x.chunk / p.row_bytes);
        p.direct = x.filter == IC_STORE_FILTER_NONE && ic__stride_for_width(x.width) == p.row_bytes;
    }
    /* The chunk table must account for every payload byte before the output is allocated. */
    st = load_table(s, &x, &p, err);
    ic_store_record r = {.kind = x.kind, .filter = x.filter, .stored_size = s->size,
                         .meta = {.created_ms = x.created_ms, .expires_ms = x.expires_ms}};
    if (st == IC_OK) st = ic__source_need(s, 0, (size_t)x.total, &h, err);
    if (st == IC_OK) st = copy_strings(h, &x, &r, err);
    if (st == IC_OK && x.kind == IC_STORE_KIND_BITMAP) {
        st = make_image(options->pool, h, &x, &r.image, err);
    } else if (st == IC_OK) {
        r.data = malloc(x.raw_size ? (size_t)x.raw_size : 1u);
        r.data_size = (size_t)x.raw_size;
        if (!r.data) {
            st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %llu bytes",
                              (unsigned long long)x.raw_size);
        }
    }
    p.image = r.image;
    p.data = r.data;
    if (st == IC_OK) st = decode_chunks(&p, s, options, err);
    free((void *)p.table);
    free(p.offsets);
    if (st != IC_OK) {
        ic_store_record_free(&r);
        return st;
    }
    *out = r;
    return IC_OK;
}

ic_status ic_store_decode(const uint8_t *bytes, size_t size, ic_store_kind kind, const char *key,
                          size_t key_length, const ic_store_read_options *options, ic_store_record *out,
                          ic_error *err) {
    if ((!bytes && size) || !key || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL argument");
    ic__source s = {.fd = -1, .mem = bytes, .size = size};
    return ic__store_decode_from(&s, kind, key, key_length, options, out, err);
}

void ic_store_record_free(ic_store_record *r) {
    if (!r) return;
    ic_image_free(r->image);
    free(r->data);
    free(r->ic_strings);
    memset(r, 0, sizeof *r);
}
