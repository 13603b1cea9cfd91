/*
 * ic_store_internal.h — pieces of the disk tier shared by store.c (files and
 * directories) and store_format.c / store_filter.c (the bytes). Not installed.
 */
#ifndef IC_STORE_INTERNAL_H
#define IC_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_store.h"

/* ---- Row filters (store_filter.c). ---- */

/** Bytes one row of `width` pixels takes after `filter`. */
static inline size_t ic_filter_row_bytes(ic_store_filter filter, uint32_t width) {
    return (filter == IC_STORE_FILTER_RGB || filter == IC_STORE_FILTER_RGB_UP)
               ? (size_t)width * 3u
               : (size_t)width * 4u;
}

/**
 * Filters `count` rows of `width` pixels (`stride` apart, starting at `rows`)
 * into `dst`, packed; the first row has a zero row above it. Returns false
 * when an rgb filter meets an alpha that is not 255.
 */
bool ic_filter_encode(ic_store_filter filter, const uint8_t *rows, size_t stride, uint32_t width,
                      uint32_t count, uint8_t *dst);

/**
 * Reverses ic_filter_encode: reads `count` packed filtered rows from `src` and
 * writes them as RGBA rows at `rows` (`stride` apart).
 */
void ic_filter_decode(ic_store_filter filter, const uint8_t *src, uint32_t width, uint32_t count,
                      uint8_t *rows, size_t stride);

/* ---- Byte sinks and sources (store_format.c). ---- */

/** Where encoded bytes go: a file descriptor or a growing memory buffer. */
typedef struct ic_sink {
    int fd;
    uint8_t *mem;
    size_t mem_length;
    size_t mem_capacity;
    uint64_t written;
    int fault_errno;
    uint64_t fault_after_bytes;
} ic_sink;

/** Where encoded bytes come from: a file descriptor or memory. */
typedef struct ic_source {
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
} ic_source;

/** Encodes an entry into a sink (no file handling). */
ic_status ic_store_encode_to(const ic_store_entry *entry, const ic_store_write_options *options,
                             ic_sink *sink, ic_error *err);

/** Decodes an entry from a source; see ic_store_decode for the statuses. */
ic_status ic_store_decode_from(ic_source *source, ic_store_kind kind, const char *key,
                               size_t key_length, const ic_store_read_options *options,
                               ic_store_record *out, ic_error *err);

/** Frees a source's window buffer. */
void ic_source_release(ic_source *source);

#endif /* IC_STORE_INTERNAL_H */
