/*
 * store_encode.c — encoding a disk-tier entry (format in ic_store.h) into a
 * sink: the header, filtered and LZ4-compressed chunks, the chunk table.
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_hash.h"
#include "ic_store_internal.h"

void ic_store_write_options_init(ic_store_write_options *o) {
    memset(o, 0, sizeof *o);
    o->filter = IC_STORE_FILTER_AUTO;
    o->sync = IC_STORE_SYNC_NONE;
    o->min_lz4_saving_percent = 12;
}

static ic_status check_entry(const ic_store_entry *e, ic_error *err) {
    if (!e || !e->key || e->key_length == 0 || e->key_length > IC_STORE_MAX_KEY_BYTES) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: a key needs 1 to %u bytes",
                            IC_STORE_MAX_KEY_BYTES);
    }
    const ic_store_meta *m = &e->meta;
    if (m->etag_length > IC_STORE_MAX_ETAG_BYTES || (m->etag_length && !m->etag) ||
        m->last_modified_length > IC_STORE_MAX_LAST_MODIFIED_BYTES ||
        (m->last_modified_length && !m->last_modified) ||
        m->user_data_length > IC_STORE_MAX_USER_DATA_BYTES || (m->user_data_length && !m->user_data)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "store: metadata too long (ETag <= %u, Last-Modified <= %u, caller data <= %u bytes)",
                            IC_STORE_MAX_ETAG_BYTES, IC_STORE_MAX_LAST_MODIFIED_BYTES,
                            IC_STORE_MAX_USER_DATA_BYTES);
    }
    if (e->kind == IC_STORE_KIND_DATA) {
        if (e->data_size && !e->data) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL data");
        return IC_OK;
    }
    if (e->kind != IC_STORE_KIND_BITMAP) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: unknown entry kind %d", (int)e->kind);
    }
    const ic_image *img = e->image;
    if (!img || !img->pixels || img->width == 0 || img->height == 0 || img->frame_count == 0 ||
        img->pixel_format != IC_PIXEL_RGBA8_PREMULTIPLIED || img->stride < (size_t)img->width * 4u ||
        img->frame_size != img->stride * img->height) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: not a valid premultiplied RGBA8 image");
    }
    if (img->frame_count > IC_STORE_MAX_FRAMES) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED, "store: %u frames (at most %u are stored)",
                            img->frame_count, IC_STORE_MAX_FRAMES);
    }
    if ((uint64_t)img->width * 4u > IC_STORE_MAX_CHUNK_BYTES) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED, "store: rows of %u pixels are too wide to store",
                            img->width);
    }
    return IC_OK;
}

/* The filter a bitmap is written with; `opaque` says whether rgb filters may be used. */
static ic_store_filter choose_filter(int requested, bool opaque) {
    if (requested == IC_STORE_FILTER_AUTO) return opaque ? IC_STORE_FILTER_RGB : IC_STORE_FILTER_UP;
    ic_store_filter f = (ic_store_filter)requested;
    if (!opaque && f == IC_STORE_FILTER_RGB) return IC_STORE_FILTER_NONE;
    if (!opaque && f == IC_STORE_FILTER_RGB_UP) return IC_STORE_FILTER_UP;
    return f;
}

static ic_status write_header(const ic_store_entry *e, ic_store_filter filter, bool opaque, uint64_t raw_size,
                              uint32_t chunk, ic__sink *sink, ic_error *err) {
    const ic_store_meta *m = &e->meta;
    const ic_image *img = e->kind == IC_STORE_KIND_BITMAP ? e->image : NULL;
    uint32_t delays = img && img->frame_count > 1 && img->frame_delays_ms ? img->frame_count : 0;
    size_t var = e->key_length + m->etag_length + m->last_modified_length + m->user_data_length +
                 (size_t)delays * 4u;
    size_t total = IC_STORE_FIXED_HEADER_SIZE + var + 8u;
    uint8_t *h = calloc(1, total);
    if (!h) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate a %zu-byte header", total);

    memcpy(h, IC_STORE_MAGIC, 8);
    ic__put16(h + 8, IC_STORE_FORMAT_VERSION);
    ic__put16(h + 10, IC_STORE_FIXED_HEADER_SIZE);
    h[12] = (uint8_t)e->kind;
    h[13] = (uint8_t)filter;
    if (img) {
        h[14] = (uint8_t)((opaque ? 1u : 0u) | (img->orientation_applied ? 2u : 0u));
        h[15] = img->orientation >= 1 && img->orientation <= 8 ? img->orientation : 1;
        ic__put32(h + 16, img->width);
        ic__put32(h + 20, img->height);
        ic__put32(h + 24, img->frame_count);
        ic__put32(h + 28, (uint32_t)img->pixel_format);
        ic__put32(h + 32, (uint32_t)img->source_format);
        ic__put32(h + 36, img->source_width);
        ic__put32(h + 40, img->source_height);
        ic__put32(h + 44, img->loop_count);
    }
    ic__put64(h + 48, raw_size);
    ic__put32(h + 56, chunk);
    ic__put32(h + 60, (uint32_t)e->key_length);
    ic__put64(h + 64, (uint64_t)(m->created_ms ? m->created_ms : ic__realtime_ms()));
    ic__put64(h + 72, (uint64_t)m->expires_ms);
    ic__put32(h + 80, (uint32_t)m->etag_length);
    ic__put32(h + 84, (uint32_t)m->last_modified_length);
    ic__put32(h + 88, (uint32_t)m->user_data_length);
    ic__put32(h + 92, delays);

    uint8_t *p = h + IC_STORE_FIXED_HEADER_SIZE;
    memcpy(p, e->key, e->key_length);
    p += e->key_length;
    if (m->etag_length) memcpy(p, m->etag, m->etag_length);
    p += m->etag_length;
    if (m->last_modified_length) memcpy(p, m->last_modified, m->last_modified_length);
    p += m->last_modified_length;
    if (m->user_data_length) memcpy(p, m->user_data, m->user_data_length);
    p += m->user_data_length;
    for (uint32_t i = 0; i < delays; i++, p += 4) ic__put32(p, img->frame_delays_ms[i]);
    ic__put64(p, ic_xxh64(h, total - 8u, 0));

    ic_status st = ic__sink_put(sink, h, total, err);
    free(h);
    return st;
}

/* Records one chunk in the table. */
static void table_put(uint8_t *record, const uint8_t *stored, size_t n, bool plain) {
    ic__put32(record, (uint32_t)n | (plain ? IC_STORE_CHUNK_PLAIN : 0u));
    ic__put64(record + 4, ic_xxh64(stored, n, 0));
}

/* Writes the chunk table and its checksum, ending the file. */
static ic_status put_table(ic__sink *sink, const uint8_t *table, size_t count, ic_error *err) {
    uint8_t sum[8];
    ic__put64(sum, ic_xxh64(table, count * IC_STORE_CHUNK_RECORD, 0));
    ic_status st = count ? ic__sink_put(sink, table, count * IC_STORE_CHUNK_RECORD, err) : IC_OK;
    return st == IC_OK ? ic__sink_put(sink, sum, sizeof sum, err) : st;
}

static uint8_t *alloc_table(uint64_t count, ic_error *err) {
    uint8_t *table = count <= SIZE_MAX / IC_STORE_CHUNK_RECORD ? malloc(count ? (size_t)count * IC_STORE_CHUNK_RECORD : 1u) : NULL;
    if (!table) ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate a table of %llu chunks",
                             (unsigned long long)count);
    return table;
}

static ic_status encode_data(const ic_store_entry *e, uint32_t chunk, ic__sink *sink, ic_error *err) {
    size_t count = e->data_size ? (e->data_size - 1) / chunk + 1 : 0;
    uint8_t *table = alloc_table(count, err);
    if (!table) return IC_ERR_OUT_OF_MEMORY;
    ic_status st = write_header(e, IC_STORE_FILTER_NONE, false, e->data_size, chunk, sink, err);
    for (size_t c = 0; st == IC_OK && c < count; c++) {
        size_t off = c * chunk;
        size_t n = e->data_size - off < chunk ? e->data_size - off : chunk;
        table_put(table + c * IC_STORE_CHUNK_RECORD, e->data + off, n, true);
        st = ic__sink_put(sink, e->data + off, n, err);
    }
    if (st == IC_OK) st = put_table(sink, table, count, err);
    free(table);
    return st;
}

/* Encodes a bitmap with `filter`, recording it as opaque or not; sets *transparent (and
 * stops) if an rgb filter meets alpha < 255. */
static ic_status encode_bitmap(const ic_store_entry *e, ic_store_filter filter, bool opaque,
                               uint32_t rows_per_chunk, const ic_store_write_options *o, ic__sink *sink,
                               bool *transparent, ic_error *err) {
    const ic_image *img = e->image;
    size_t row_bytes = (size_t)img->width * 4u;
    uint64_t total_rows = (uint64_t)img->height * img->frame_count;
    uint64_t count = (total_rows - 1) / rows_per_chunk + 1;
    size_t filtered_max = (size_t)rows_per_chunk * ic__filter_row_bytes(filter, img->width);
    size_t bound = (size_t)LZ4_compressBound((int)filtered_max);
    int tmp_kind = 0, out_kind = 0;
    size_t tmp_capacity = 0, out_capacity = 0;
    uint8_t *table = alloc_table(count, err);
    uint8_t *tmp = ic__buffer_alloc(NULL, filtered_max, &tmp_kind, &tmp_capacity);
    uint8_t *out = ic__buffer_alloc(NULL, bound, &out_kind, &out_capacity);
    ic_status st = IC_OK;
    if (!table || !tmp || !out) {
        st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu-byte chunk buffers", filtered_max);
    } else {
        st = write_header(e, filter, opaque, total_rows * row_bytes, (uint32_t)(rows_per_chunk * row_bytes), sink,
                          err);
    }
    bool direct = filter == IC_STORE_FILTER_NONE && img->stride == row_bytes;
    int saving = o->min_lz4_saving_percent < 0 ? 0 : o->min_lz4_saving_percent > 100 ? 100 : o->min_lz4_saving_percent;
    for (uint64_t c = 0; st == IC_OK && c < count; c++) {
        uint64_t r = c * rows_per_chunk;
        uint32_t n = total_rows - r < rows_per_chunk ? (uint32_t)(total_rows - r) : rows_per_chunk;
        const uint8_t *rows = img->pixels + (size_t)r * img->stride;
        size_t flen = (size_t)n * ic__filter_row_bytes(filter, img->width);
        const uint8_t *src = tmp;
        if (direct) {
            src = rows;
        } else if (!ic__filter_encode(filter, rows, img->stride, img->width, n, tmp)) {
            *transparent = true;
            break;
        }
        int z = LZ4_compress_default((const char *)src, (char *)out, (int)flen, (int)bound);
        bool plain = z <= 0 || (uint64_t)z * 100u > (uint64_t)flen * (uint64_t)(100 - saving) || (size_t)z >= flen;
        const uint8_t *stored = plain ? src : out;
        size_t stored_size = plain ? flen : (size_t)z;
        table_put(table + c * IC_STORE_CHUNK_RECORD, stored, stored_size, plain);
        st = ic__sink_put(sink, stored, stored_size, err);
    }
    if (st == IC_OK && !*transparent) st = put_table(sink, table, (size_t)count, err);
    free(table);
    ic__buffer_free(NULL, tmp, tmp_capacity, tmp_kind);
    ic__buffer_free(NULL, out, out_capacity, out_kind);
    return st;
}

ic_status ic__store_encode_to(const ic_store_entry *entry, const ic_store_write_options *options,
                             ic__sink *sink, ic_error *err) {
    ic_store_write_options defaults;
    if (!options) {
        ic_store_write_options_init(&defaults);
        options = &defaults;
    }
    ic_status st = check_entry(entry, err);
    if (st != IC_OK) return st;
    if (!(options->filter == IC_STORE_FILTER_AUTO ||
          (options->filter >= IC_STORE_FILTER_NONE && options->filter <= IC_STORE_FILTER_RGB_UP))) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: unknown filter %d", options->filter);
    }
    uint32_t chunk = options->chunk_bytes ? options->chunk_bytes : IC_STORE_DEFAULT_CHUNK_BYTES;
    if (chunk > IC_STORE_MAX_CHUNK_BYTES) chunk = IC_STORE_MAX_CHUNK_BYTES;
    if (entry->kind == IC_STORE_KIND_DATA) return encode_data(entry, chunk, sink, err);

    const ic_image *img = entry->image;
    size_t row_bytes = (size_t)img->width * 4u;
    uint32_t rows_per_chunk = chunk / row_bytes ? (uint32_t)(chunk / row_bytes) : 1u;
    bool opaque = img->is_opaque != 0;
    bool transparent = false;
    st = encode_bitmap(entry, choose_filter(options->filter, opaque), opaque, rows_per_chunk, options, sink,
                       &transparent, err);
    if (st == IC_OK && transparent) {
        /* The image said it was opaque but is not: start over keeping alpha, and say so. */
        if ((st = ic__sink_reset(sink, err)) != IC_OK) return st;
        transparent = false;
        st = encode_bitmap(entry, choose_filter(options->filter, false), false, rows_per_chunk, options, sink,
                           &transparent, err);
    }
    return st;
}

ic_status ic_store_encode(const ic_store_entry *entry, const ic_store_write_options *options,
                          uint8_t **out, size_t *out_size, ic_error *err) {
    if (!out || !out_size) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL output");
    *out = NULL;
    *out_size = 0;
    ic__sink sink = {.fd = -1};
    ic_status st = ic__store_encode_to(entry, options, &sink, err);
    if (st != IC_OK) {
        free(sink.mem);
        return st;
    }
    *out = sink.mem;
    *out_size = sink.mem_length;
    return IC_OK;
}
