/*
 * store_format.c — the bytes of a disk-tier entry (format in ic_store.h):
 * encoding into a file or memory, decoding from either, never trusting what
 * is read. Files and directories are store.c's business.
 */
#include <errno.h>
#include <lz4.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_hash.h"
#include "ic_store_internal.h"

static const uint8_t kMagic[8] = {0x89, 'I', 'K', 'C', 0x0D, 0x0A, 0x1A, 0x0A};

/* Chunk table record: u32 stored size (bit 31 = stored without LZ4), u64 XXH64. */
#define CHUNK_RECORD 12u
#define CHUNK_PLAIN 0x80000000u
/* Bytes of a file a read pulls in at a time (more when one chunk needs more). */
#define READ_WINDOW ((size_t)1024 * 1024)
/* Most threads one decode uses. */
#define MAX_THREADS 16
/* LZ4 expands a block at most ~255 times; a payload claiming more is corrupt. */
#define LZ4_MAX_RATIO 256u

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t get64(const uint8_t *p) {
    return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32);
}

/* ---- Sink. ---- */

static ic_status sink_put(ic_sink *s, const void *data, size_t n, ic_error *err) {
    const uint8_t *p = data;
    if (s->fault_errno != 0 && s->written + n > s->fault_after_bytes) {
        /* Injected failure: write what fits, then fail as the file system would. */
        size_t fit = s->fault_after_bytes > s->written ? (size_t)(s->fault_after_bytes - s->written) : 0;
        int fault = s->fault_errno;
        s->fault_errno = 0;
        ic_status st = fit ? sink_put(s, p, fit, err) : IC_OK;
        s->fault_errno = fault;
        if (st != IC_OK) return st;
        return ic_sys_error(err, fault, "store: write (injected fault)");
    }
    if (s->fd >= 0) {
        while (n > 0) {
            ssize_t w = write(s->fd, p, n);
            if (w < 0) {
                if (errno == EINTR) continue;
                return ic_sys_error(err, errno, "store: write temporary file");
            }
            p += w;
            n -= (size_t)w;
            s->written += (uint64_t)w;
        }
        return IC_OK;
    }
    if (n > s->mem_capacity - s->mem_length) {
        size_t need = s->mem_length + n;
        if (need < s->mem_length) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: entry too large");
        size_t cap = s->mem_capacity ? s->mem_capacity : 4096;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        uint8_t *grown = realloc(s->mem, cap);
        if (!grown) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot grow buffer to %zu bytes", cap);
        s->mem = grown;
        s->mem_capacity = cap;
    }
    memcpy(s->mem + s->mem_length, p, n);
    s->mem_length += n;
    s->written += n;
    return IC_OK;
}

/* Starts the sink over (after an rgb filter met transparency). */
static ic_status sink_reset(ic_sink *s, ic_error *err) {
    if (s->fd >= 0) {
        if (ftruncate(s->fd, 0) != 0 || lseek(s->fd, 0, SEEK_SET) != 0) {
            return ic_sys_error(err, errno, "store: truncate temporary file");
        }
    }
    s->mem_length = 0;
    s->written = 0;
    return IC_OK;
}

/* ---- Encoding. ---- */

void ic_store_write_options_init(ic_store_write_options *o) {
    memset(o, 0, sizeof *o);
    o->filter = IC_STORE_FILTER_AUTO;
    o->sync = IC_STORE_SYNC_NONE;
    o->min_lz4_saving_percent = 12;
}

static ic_status check_entry(const ic_store_entry *e, ic_error *err) {
    if (!e || !e->key || e->key_length == 0 || e->key_length > IC_STORE_MAX_KEY_BYTES) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "store: a key needs 1 to %u bytes",
                            IC_STORE_MAX_KEY_BYTES);
    }
    const ic_store_meta *m = &e->meta;
    if (m->etag_length > IC_STORE_MAX_ETAG_BYTES || (m->etag_length && !m->etag) ||
        m->last_modified_length > IC_STORE_MAX_LAST_MODIFIED_BYTES ||
        (m->last_modified_length && !m->last_modified) ||
        m->user_data_length > IC_STORE_MAX_USER_DATA_BYTES || (m->user_data_length && !m->user_data)) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "store: metadata too long (ETag <= %u, Last-Modified <= %u, caller data <= %u bytes)",
                            IC_STORE_MAX_ETAG_BYTES, IC_STORE_MAX_LAST_MODIFIED_BYTES,
                            IC_STORE_MAX_USER_DATA_BYTES);
    }
    if (e->kind == IC_STORE_KIND_DATA) {
        if (e->data_size && !e->data) return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL data");
        return IC_OK;
    }
    if (e->kind != IC_STORE_KIND_BITMAP) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "store: unknown entry kind %d", (int)e->kind);
    }
    const ic_image *img = e->image;
    if (!img || !img->pixels || img->width == 0 || img->height == 0 || img->frame_count == 0 ||
        img->pixel_format != IC_PIXEL_RGBA8_PREMULTIPLIED || img->stride < (size_t)img->width * 4u ||
        img->frame_size != img->stride * img->height) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "store: not a valid premultiplied RGBA8 image");
    }
    if (img->frame_count > IC_STORE_MAX_FRAMES) {
        return ic_set_error(err, IC_ERR_LIMIT_EXCEEDED, "store: %u frames (at most %u are stored)",
                            img->frame_count, IC_STORE_MAX_FRAMES);
    }
    if ((uint64_t)img->width * 4u > IC_STORE_MAX_CHUNK_BYTES) {
        return ic_set_error(err, IC_ERR_LIMIT_EXCEEDED, "store: rows of %u pixels are too wide to store",
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
                              uint32_t chunk, ic_sink *sink, ic_error *err) {
    const ic_store_meta *m = &e->meta;
    const ic_image *img = e->kind == IC_STORE_KIND_BITMAP ? e->image : NULL;
    uint32_t delays = img && img->frame_count > 1 && img->frame_delays_ms ? img->frame_count : 0;
    size_t var = e->key_length + m->etag_length + m->last_modified_length + m->user_data_length +
                 (size_t)delays * 4u;
    size_t total = IC_STORE_FIXED_HEADER_SIZE + var + 8u;
    uint8_t *h = calloc(1, total);
    if (!h) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate a %zu-byte header", total);

    memcpy(h, kMagic, sizeof kMagic);
    put16(h + 8, IC_STORE_FORMAT_VERSION);
    put16(h + 10, IC_STORE_FIXED_HEADER_SIZE);
    h[12] = (uint8_t)e->kind;
    h[13] = (uint8_t)filter;
    if (img) {
        h[14] = (uint8_t)((opaque ? 1u : 0u) | (img->orientation_applied ? 2u : 0u));
        h[15] = img->orientation >= 1 && img->orientation <= 8 ? img->orientation : 1;
        put32(h + 16, img->width);
        put32(h + 20, img->height);
        put32(h + 24, img->frame_count);
        put32(h + 28, (uint32_t)img->pixel_format);
        put32(h + 32, (uint32_t)img->source_format);
        put32(h + 36, img->source_width);
        put32(h + 40, img->source_height);
        put32(h + 44, img->loop_count);
    }
    put64(h + 48, raw_size);
    put32(h + 56, chunk);
    put32(h + 60, (uint32_t)e->key_length);
    put64(h + 64, (uint64_t)(m->created_ms ? m->created_ms : ic_realtime_ms()));
    put64(h + 72, (uint64_t)m->expires_ms);
    put32(h + 80, (uint32_t)m->etag_length);
    put32(h + 84, (uint32_t)m->last_modified_length);
    put32(h + 88, (uint32_t)m->user_data_length);
    put32(h + 92, delays);

    uint8_t *p = h + IC_STORE_FIXED_HEADER_SIZE;
    memcpy(p, e->key, e->key_length);
    p += e->key_length;
    if (m->etag_length) memcpy(p, m->etag, m->etag_length);
    p += m->etag_length;
    if (m->last_modified_length) memcpy(p, m->last_modified, m->last_modified_length);
    p += m->last_modified_length;
    if (m->user_data_length) memcpy(p, m->user_data, m->user_data_length);
    p += m->user_data_length;
    for (uint32_t i = 0; i < delays; i++, p += 4) put32(p, img->frame_delays_ms[i]);
    put64(p, ic_xxh64(h, total - 8u, 0));

    ic_status st = sink_put(sink, h, total, err);
    free(h);
    return st;
}

/* Records one chunk in the table. */
static void table_put(uint8_t *record, const uint8_t *stored, size_t n, bool plain) {
    put32(record, (uint32_t)n | (plain ? CHUNK_PLAIN : 0u));
    put64(record + 4, ic_xxh64(stored, n, 0));
}

/* Writes the chunk table and its checksum, ending the file. */
static ic_status put_table(ic_sink *sink, const uint8_t *table, size_t count, ic_error *err) {
    uint8_t sum[8];
    put64(sum, ic_xxh64(table, count * CHUNK_RECORD, 0));
    ic_status st = count ? sink_put(sink, table, count * CHUNK_RECORD, err) : IC_OK;
    return st == IC_OK ? sink_put(sink, sum, sizeof sum, err) : st;
}

static uint8_t *alloc_table(uint64_t count, ic_error *err) {
    uint8_t *table = count <= SIZE_MAX / CHUNK_RECORD ? malloc(count ? (size_t)count * CHUNK_RECORD : 1u) : NULL;
    if (!table) ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate a table of %llu chunks",
                             (unsigned long long)count);
    return table;
}

static ic_status encode_data(const ic_store_entry *e, uint32_t chunk, ic_sink *sink, ic_error *err) {
    size_t count = e->data_size ? (e->data_size - 1) / chunk + 1 : 0;
    uint8_t *table = alloc_table(count, err);
    if (!table) return IC_ERR_OUT_OF_MEMORY;
    ic_status st = write_header(e, IC_STORE_FILTER_NONE, false, e->data_size, chunk, sink, err);
    for (size_t c = 0; st == IC_OK && c < count; c++) {
        size_t off = c * chunk;
        size_t n = e->data_size - off < chunk ? e->data_size - off : chunk;
        table_put(table + c * CHUNK_RECORD, e->data + off, n, true);
        st = sink_put(sink, e->data + off, n, err);
    }
    if (st == IC_OK) st = put_table(sink, table, count, err);
    free(table);
    return st;
}

/* Encodes a bitmap with `filter`, recording it as opaque or not; sets *transparent (and
 * stops) if an rgb filter meets alpha < 255. */
static ic_status encode_bitmap(const ic_store_entry *e, ic_store_filter filter, bool opaque,
                               uint32_t rows_per_chunk, const ic_store_write_options *o, ic_sink *sink,
                               bool *transparent, ic_error *err) {
    const ic_image *img = e->image;
    size_t row_bytes = (size_t)img->width * 4u;
    uint64_t total_rows = (uint64_t)img->height * img->frame_count;
    uint64_t count = (total_rows - 1) / rows_per_chunk + 1;
    size_t filtered_max = (size_t)rows_per_chunk * ic_filter_row_bytes(filter, img->width);
    size_t bound = (size_t)LZ4_compressBound((int)filtered_max);
    int tmp_kind = 0, out_kind = 0;
    size_t tmp_capacity = 0, out_capacity = 0;
    uint8_t *table = alloc_table(count, err);
    uint8_t *tmp = ic_buffer_alloc(NULL, filtered_max, &tmp_kind, &tmp_capacity);
    uint8_t *out = ic_buffer_alloc(NULL, bound, &out_kind, &out_capacity);
    ic_status st = IC_OK;
    if (!table || !tmp || !out) {
        st = ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu-byte chunk buffers", filtered_max);
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
        size_t flen = (size_t)n * ic_filter_row_bytes(filter, img->width);
        const uint8_t *src = tmp;
        if (direct) {
            src = rows;
        } else if (!ic_filter_encode(filter, rows, img->stride, img->width, n, tmp)) {
            *transparent = true;
            break;
        }
        int z = LZ4_compress_default((const char *)src, (char *)out, (int)flen, (int)bound);
        bool plain = z <= 0 || (uint64_t)z * 100u > (uint64_t)flen * (uint64_t)(100 - saving) || (size_t)z >= flen;
        const uint8_t *stored = plain ? src : out;
        size_t stored_size = plain ? flen : (size_t)z;
        table_put(table + c * CHUNK_RECORD, stored, stored_size, plain);
        st = sink_put(sink, stored, stored_size, err);
    }
    if (st == IC_OK && !*transparent) st = put_table(sink, table, (size_t)count, err);
    free(table);
    ic_buffer_free(NULL, tmp, tmp_capacity, tmp_kind);
    ic_buffer_free(NULL, out, out_capacity, out_kind);
    return st;
}

ic_status ic_store_encode_to(const ic_store_entry *entry, const ic_store_write_options *options,
                             ic_sink *sink, ic_error *err) {
    ic_store_write_options defaults;
    if (!options) {
        ic_store_write_options_init(&defaults);
        options = &defaults;
    }
    ic_status st = check_entry(entry, err);
    if (st != IC_OK) return st;
    if (!(options->filter == IC_STORE_FILTER_AUTO ||
          (options->filter >= IC_STORE_FILTER_NONE && options->filter <= IC_STORE_FILTER_RGB_UP))) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "store: unknown filter %d", options->filter);
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
        if ((st = sink_reset(sink, err)) != IC_OK) return st;
        transparent = false;
        st = encode_bitmap(entry, choose_filter(options->filter, false), false, rows_per_chunk, options, sink,
                           &transparent, err);
    }
    return st;
}

ic_status ic_store_encode(const ic_store_entry *entry, const ic_store_write_options *options,
                          uint8_t **out, size_t *out_size, ic_error *err) {
    if (!out || !out_size) return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL output");
    *out = NULL;
    *out_size = 0;
    ic_sink sink = {.fd = -1};
    ic_status st = ic_store_encode_to(entry, options, &sink, err);
    if (st != IC_OK) {
        free(sink.mem);
        return st;
    }
    *out = sink.mem;
    *out_size = sink.mem_length;
    return IC_OK;
}

/* ---- Source. ---- */

void ic_source_release(ic_source *s) {
    ic_buffer_free(s->pool, s->buffer, s->buffer_capacity, s->buffer_kind);
    s->buffer = NULL;
    s->buffer_capacity = 0;
    s->window_length = 0;
}

/* Points *p at `n` bytes at `offset`, reading them from the file if needed. */
static ic_status source_need(ic_source *s, uint64_t offset, size_t n, const uint8_t **p, ic_error *err) {
    if (offset > s->size || n > s->size - offset) {
        return ic_set_error(err, IC_ERR_CORRUPT, "store: entry ends at byte %llu; %zu bytes needed at %llu",
                            (unsigned long long)s->size, n, (unsigned long long)offset);
    }
    if (s->fd < 0) {
        *p = s->mem + offset;
        return IC_OK;
    }
    if (offset >= s->window_offset && offset - s->window_offset <= s->window_length &&
        n <= s->window_length - (offset - s->window_offset)) {
        *p = s->buffer + (offset - s->window_offset);
        return IC_OK;
    }
    uint64_t left = s->size - offset;
    size_t want = left < READ_WINDOW ? (size_t)left : READ_WINDOW;
    if (want < n) want = n;
    if (want > s->buffer_capacity) {
        ic_source_release(s);
        s->buffer = ic_buffer_alloc(s->pool, want, &s->buffer_kind, &s->buffer_capacity);
        if (!s->buffer) {
            s->buffer_capacity = 0;
            return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu bytes", want);
        }
    }
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(s->fd, s->buffer + got, want - got, (off_t)(offset + got));
        if (r < 0) {
            if (errno == EINTR) continue;
            s->window_length = 0;
            return ic_sys_error(err, errno, "store: read entry");
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    s->window_offset = offset;
    s->window_length = got;
    if (got < n) {
        return ic_set_error(err, IC_ERR_CORRUPT, "store: entry shorter than its size (%zu of %zu bytes at %llu)",
                            got, n, (unsigned long long)offset);
    }
    *p = s->buffer;
    return IC_OK;
}

/* ---- Decoding. ---- */

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
    return ic_set_error(err, IC_ERR_CORRUPT, "store: corrupt entry (%s)", what);
}

static ic_status parse_header(const uint8_t *h, header *out, ic_error *err) {
    if (memcmp(h, kMagic, sizeof kMagic) != 0) return corrupt(err, "bad magic");
    uint16_t version = get16(h + 8);
    if (version == 0) return corrupt(err, "version 0");
    if (version > IC_STORE_FORMAT_VERSION) {
        return ic_set_error(err, IC_ERR_NOT_FOUND, "store: entry has format version %u; this reader knows %u",
                            version, IC_STORE_FORMAT_VERSION);
    }
    if (get16(h + 10) != IC_STORE_FIXED_HEADER_SIZE) return corrupt(err, "header size");
    header x = {
        .kind = (ic_store_kind)h[12],
        .filter = (ic_store_filter)h[13],
        .flags = h[14],
        .orientation = h[15],
        .width = get32(h + 16),
        .height = get32(h + 20),
        .frames = get32(h + 24),
        .pixel_format = get32(h + 28),
        .source_format = get32(h + 32),
        .source_width = get32(h + 36),
        .source_height = get32(h + 40),
        .loop_count = get32(h + 44),
        .raw_size = get64(h + 48),
        .chunk = get32(h + 56),
        .key_length = get32(h + 60),
        .created_ms = (int64_t)get64(h + 64),
        .expires_ms = (int64_t)get64(h + 72),
        .etag_length = get32(h + 80),
        .last_modified_length = get32(h + 84),
        .user_data_length = get32(h + 88),
        .delay_count = get32(h + 92),
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
    if (!block) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu bytes", n);
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
    ic_status st = ic_image_create_in(pool, x->width, x->height, x->frames, out, err);
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
        for (uint32_t i = 0; i < x->delay_count; i++) img->frame_delays_ms[i] = get32(d + 4u * i);
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
static ic_status load_table(ic_source *s, const header *x, plan *p, ic_error *err) {
    uint64_t count = x->raw_size ? (x->raw_size - 1u) / x->chunk + 1u : 0;
    uint64_t payload = s->size - x->total;
    if (payload < 8 || count > (payload - 8) / CHUNK_RECORD || x->raw_size / LZ4_MAX_RATIO > payload) {
        return corrupt(err, "payload shorter than its chunks");
    }
    size_t table_size = (size_t)count * CHUNK_RECORD;
    uint64_t table_offset = s->size - 8 - table_size;
    const uint8_t *t;
    ic_status st = source_need(s, table_offset, table_size + 8, &t, err);
    if (st != IC_OK) return st;
    if (!checksum_matches(t, table_size, get64(t + table_size))) return corrupt(err, "chunk table checksum mismatch");
    uint8_t *table = malloc(table_size ? table_size : 1u);
    uint64_t *offsets = malloc(count ? (size_t)count * sizeof *offsets : 1u);
    if (!table || !offsets) {
        free(table);
        free(offsets);
        return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate a table of %llu chunks",
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
        uint32_t word = get32(table + c * CHUNK_RECORD);
        size_t stored = word & ~CHUNK_PLAIN;
        bool plain = (word & CHUNK_PLAIN) != 0;
        if (plain ? stored != flen : (stored == 0 || stored > (size_t)LZ4_compressBound((int)flen))) {
            return corrupt(err, "chunk size");
        }
        offsets[c] = offset;
        offset += stored;
    }
    return offset == table_offset ? IC_OK : corrupt(err, "chunk sizes do not add up to the payload");
}

/* Reads, checks and expands chunks [first, end) into the image or data buffer. */
static ic_status decode_range(const plan *p, ic_source *s, uint64_t first, uint64_t end, ic_error *err) {
    size_t tmp_size = p->direct ? 0 : (size_t)p->rows_per_chunk * p->filtered_row_bytes;
    int tmp_kind = 0;
    size_t tmp_capacity = 0;
    uint8_t *tmp = p->direct ? NULL : ic_buffer_alloc(s->pool, tmp_size, &tmp_kind, &tmp_capacity);
    if (!p->direct && !tmp) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu bytes", tmp_size);
    uint8_t *dest = p->image ? p->image->pixels : p->data;
    ic_status st = IC_OK;
    for (uint64_t c = first; c < end; c++) {
        size_t raw, flen;
        chunk_sizes(p, c, &raw, &flen);
        const uint8_t *record = p->table + c * CHUNK_RECORD;
        uint32_t word = get32(record);
        size_t stored = word & ~CHUNK_PLAIN;
        const uint8_t *src;
        if ((st = source_need(s, p->offsets[c], stored, &src, err)) != IC_OK) break;
        if (!checksum_matches(src, stored, get64(record + 4))) {
            st = corrupt(err, "chunk checksum mismatch");
            break;
        }
        uint8_t *target = p->direct ? dest + c * p->x->chunk : tmp;
        if (!(word & CHUNK_PLAIN)) {
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
            ic_filter_decode(p->x->filter, src, p->x->width, (uint32_t)(raw / p->row_bytes),
                             p->image->pixels + (size_t)r0 * p->image->stride, p->image->stride);
        }
    }
    ic_buffer_free(s->pool, tmp, tmp_capacity, tmp_kind);
    return st;
}

/* One thread's share of a decode. */
typedef struct worker {
    const plan *plan;
    ic_source source;
    uint64_t first, end;
    ic_status status;
    ic_error error;
    pthread_t thread;
    bool started;
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    w->status = decode_range(w->plan, &w->source, w->first, w->end, &w->error);
    ic_source_release(&w->source);
    return NULL;
}

/* Decodes every chunk, splitting them between up to `threads` threads. */
static ic_status decode_chunks(const plan *p, ic_source *s, int threads, ic_error *err) {
    uint64_t n = (uint64_t)threads;
    if (threads <= 1 || p->x->raw_size < IC_STORE_PARALLEL_MIN_BYTES) n = 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    if (n > p->count) n = p->count;
    if (n <= 1) return decode_range(p, s, 0, p->count, err);

    worker helpers[MAX_THREADS - 1];
    for (uint64_t i = 1; i < n; i++) {
        worker *w = &helpers[i - 1];
        *w = (worker){.plan = p, .source = {.fd = s->fd, .mem = s->mem, .size = s->size, .pool = s->pool},
                      .first = p->count * i / n, .end = p->count * (i + 1) / n};
        w->started = pthread_create(&w->thread, NULL, worker_main, w) == 0;
    }
    ic_status st = decode_range(p, s, 0, p->count / n, err);
    for (uint64_t i = 1; i < n; i++) {
        worker *w = &helpers[i - 1];
        if (w->started) {
            pthread_join(w->thread, NULL);
        } else {
            worker_main(w); /* no thread could start: do its share here */
        }
        if (st == IC_OK && w->status != IC_OK) {
            st = w->status;
            if (err) *err = w->error;
        }
    }
    return st;
}

ic_status ic_store_decode_from(ic_source *s, ic_store_kind kind, const char *key, size_t key_length,
                               const ic_store_read_options *options, ic_store_record *out, ic_error *err) {
    ic_store_read_options defaults;
    if (!options) {
        ic_store_read_options_init(&defaults);
        options = &defaults;
    }
    const uint8_t *h;
    header x;
    ic_status st = source_need(s, 0, IC_STORE_FIXED_HEADER_SIZE, &h, err);
    if (st == IC_OK) st = parse_header(h, &x, err);
    if (st != IC_OK) return st;
    /* x.total is below 2 MiB: every length in it was bounded by parse_header. */
    if ((st = source_need(s, 0, (size_t)x.total, &h, err)) != IC_OK) return st;
    if (!checksum_matches(h, (size_t)x.total - 8u, get64(h + x.total - 8u))) {
        return corrupt(err, "header checksum mismatch");
    }
    if (x.kind != kind || x.key_length != key_length || memcmp(h + IC_STORE_FIXED_HEADER_SIZE, key, key_length) != 0) {
        return ic_set_error(err, IC_ERR_NOT_FOUND, "store: the file holds another key");
    }
    if (x.raw_size > options->max_bytes || x.raw_size > SIZE_MAX / 2) {
        return ic_set_error(err, IC_ERR_LIMIT_EXCEEDED, "store: entry of %llu bytes exceeds the limit of %llu",
                            (unsigned long long)x.raw_size, (unsigned long long)options->max_bytes);
    }

    plan p = {.x = &x, .row_bytes = 1, .direct = true};
    if (x.kind == IC_STORE_KIND_BITMAP) {
        p.row_bytes = (size_t)x.width * 4u;
        p.filtered_row_bytes = ic_filter_row_bytes(x.filter, x.width);
        p.rows_per_chunk = (uint32_t)(x.chunk / p.row_bytes);
        p.direct = x.filter == IC_STORE_FILTER_NONE && ic_stride_for_width(x.width) == p.row_bytes;
    }
    /* The chunk table must account for every payload byte before the output is allocated. */
    st = load_table(s, &x, &p, err);
    ic_store_record r = {.kind = x.kind, .filter = x.filter, .stored_size = s->size,
                         .meta = {.created_ms = x.created_ms, .expires_ms = x.expires_ms}};
    if (st == IC_OK) st = source_need(s, 0, (size_t)x.total, &h, err);
    if (st == IC_OK) st = copy_strings(h, &x, &r, err);
    if (st == IC_OK && x.kind == IC_STORE_KIND_BITMAP) {
        st = make_image(options->pool, h, &x, &r.image, err);
    } else if (st == IC_OK) {
        r.data = malloc(x.raw_size ? (size_t)x.raw_size : 1u);
        r.data_size = (size_t)x.raw_size;
        if (!r.data) {
            st = ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %llu bytes",
                              (unsigned long long)x.raw_size);
        }
    }
    p.image = r.image;
    p.data = r.data;
    if (st == IC_OK) st = decode_chunks(&p, s, options->threads, err);
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
    if ((!bytes && size) || !key || !out) return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL argument");
    ic_source s = {.fd = -1, .mem = bytes, .size = size};
    return ic_store_decode_from(&s, kind, key, key_length, options, out, err);
}

void ic_store_record_free(ic_store_record *r) {
    if (!r) return;
    ic_image_free(r->image);
    free(r->data);
    free(r->ic_strings);
    memset(r, 0, sizeof *r);
}
