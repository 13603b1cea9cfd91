/*
 * ic_store_internal.h — the disk tier's pieces (store/): the file format's
 * constants, row filters (store_filter.c), byte sinks and sources
 * (store_io.c), the encoder (store_encode.c), the decoder (store_decode.c)
 * and the fan-out of a large read (store_parallel.c), used by store.c (files
 * and directories). Not installed.
 */
#ifndef IC_STORE_INTERNAL_H
#define IC_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_store.h"

/* ---- The file format (see ic_store.h). ---- */

/** The 8 bytes an entry starts with. */
#define IC_STORE_MAGIC "\x89IKC\r\n\x1a\n"
/** Bytes of a chunk table record: u32 stored size (bit 31 = stored without LZ4), u64 XXH64. */
#define IC_STORE_CHUNK_RECORD 12u
/** Bit of a chunk record's size word: the chunk is stored without LZ4. */
#define IC_STORE_CHUNK_PLAIN 0x80000000u

/* Little-endian stores and loads of the format's integers. */

static inline void ic__put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void ic__put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void ic__put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t ic__get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static inline uint32_t ic__get32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t ic__get64(const uint8_t *p) {
    return (uint64_t)ic__get32(p) | ((uint64_t)ic__get32(p + 4) << 32);
}

/* ---- Row filters (store_filter.c). ---- */

/** Bytes one row of `width` pixels takes after `filter`. */
static inline size_t ic__filter_row_bytes(ic_store_filter filter, uint32_t width) {
    return (filter == IC_STORE_FILTER_RGB || filter == IC_STORE_FILTER_RGB_UP)
               ? (size_t)width * 3u
               : (size_t)width * 4u;
}

/**
 * Filters `count` rows of `width` pixels (`stride` apart, starting at `rows`)
 * into `dst`, packed; the first row has a zero row above it. Returns false
 * when an rgb filter meets an alpha that is not 255.
 */
bool ic__filter_encode(ic_store_filter filter, const uint8_t *rows, size_t stride, uint32_t width,
                      uint32_t count, uint8_t *dst);

/**
 * Reverses ic__filter_encode: reads `count` packed filtered rows from `src` and
 * writes them as RGBA rows at `rows` (`stride` apart).
 */
void ic__filter_decode(ic_store_filter filter, const uint8_t *src, uint32_t width, uint32_t count,
                      uint8_t *rows, size_t stride);

/* ---- Byte sinks and sources (store_io.c). ---- */

/** Where encoded bytes go: a file descriptor or a growing memory buffer. */
typedef struct ic__sink {
    int fd;
    uint8_t *mem;
    size_t mem_length;
    size_t mem_capacity;
    uint64_t written;
    /* Fault injection for tests (0: none): once fault_after_bytes bytes are written, the next
     * write fails with fault_errno. */
    int fault_errno;
    uint64_t fault_after_bytes;
} ic__sink;

/** Appends `n` bytes to the sink. */
ic_status ic__sink_put(ic__sink *sink, const void *data, size_t n, ic_error *err);

/** Starts the sink over, empty (after an rgb filter met transparency). */
ic_status ic__sink_reset(ic__sink *sink, ic_error *err);

/** Where encoded bytes come from: a file descriptor or memory. */
typedef struct ic__source {
    int fd;
    const uint8_t *mem;
    uint64_t size;
    /* Where read buffers come from (may be NULL). */
    ic_pool *pool;
    /* Window of the file held in `buffer` (fd sources only). */
    uint8_t *buffer;
    size_t buffer_capacity;
    int buffer_kind;
    uint64_t window_offset;
    size_t window_length;
} ic__source;

/**
 * Points *p at `n` bytes at `offset`, reading them from the file if needed
 * (valid until the next call); IC_ERR_CORRUPT when the entry is shorter.
 */
ic_status ic__source_need(ic__source *source, uint64_t offset, size_t n, const uint8_t **p,
                         ic_error *err);

/** Frees a source's window buffer. */
void ic__source_release(ic__source *source);

/* ---- Encoder (store_encode.c) and decoder (store_decode.c). ---- */

/** Encodes an entry into a sink (no file handling). */
ic_status ic__store_encode_to(const ic_store_entry *entry, const ic_store_write_options *options,
                             ic__sink *sink, ic_error *err);

/** Decodes an entry from a source; see ic_store_decode for the statuses. */
ic_status ic__store_decode_from(ic__source *source, ic_store_kind kind, const char *key,
                               size_t key_length, const ic_store_read_options *options,
                               ic_store_record *out, ic_error *err);

/* ---- Fan-out of a large read (store_parallel.c). ---- */

/** Most parts one read is split into. */
#define IC_STORE_MAX_PARTS 16u

/** Part `index` of `count` of a job, reading through its own `source`. */
typedef ic_status (*ic_store_part_job)(void *arg, ic__source *source, uint32_t index,
                                       uint32_t count, ic_error *err);

/**
 * Runs `job` in `count` parts (1 ... IC_STORE_MAX_PARTS) through
 * options->run_parts (which must be set): part 0 with `source`, the others
 * each with its own source over the same bytes. Returns the first failure in
 * part order (with its message in err), else IC_OK.
 */
ic_status ic__store_run_parts(const ic_store_read_options *options, uint32_t count,
                             ic_store_part_job job, void *arg, ic__source *source, ic_error *err);

#endif /* IC_STORE_INTERNAL_H */
