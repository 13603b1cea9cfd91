/*
 * store_io.c — where a disk-tier entry's bytes go and come from: a file
 * descriptor or memory. Writes can fail on purpose (fault injection for the
 * tests); reads go through a window of the file, so a chunk is one pread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ic_common_internal.h"
#include "../image/ic_image_internal.h"
#include "ic_store_internal.h"

/* Bytes of a file a read pulls in at a time (more when one chunk needs more). */
#define READ_WINDOW ((size_t)1024 * 1024)

/* ---- Sinks. ---- */

ic_status ic__sink_put(ic__sink *s, const void *data, size_t n, ic_error *err) {
    const uint8_t *p = data;
    if (s->fault_errno != 0 && s->written + n > s->fault_after_bytes) {
        /* Injected failure: write what fits, then fail as the file system would. */
        size_t fit = s->fault_after_bytes > s->written ? (size_t)(s->fault_after_bytes - s->written) : 0;
        int fault = s->fault_errno;
        s->fault_errno = 0;
        ic_status st = fit ? ic__sink_put(s, p, fit, err) : IC_OK;
        s->fault_errno = fault;
        if (st != IC_OK) return st;
        return ic__sys_error(err, fault, "store: write (injected fault)");
    }
    if (s->fd >= 0) {
        while (n > 0) {
            ssize_t w = write(s->fd, p, n);
            if (w < 0) {
                if (errno == EINTR) continue;
                return ic__sys_error(err, errno, "store: write temporary file");
            }
            p += w;
            n -= (size_t)w;
            s->written += (uint64_t)w;
        }
        return IC_OK;
    }
    if (n > s->mem_capacity - s->mem_length) {
        size_t need = s->mem_length + n;
        if (need < s->mem_length) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: entry too large");
        size_t cap = s->mem_capacity ? s->mem_capacity : 4096;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        uint8_t *grown = realloc(s->mem, cap);
        if (!grown) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot grow buffer to %zu bytes", cap);
        s->mem = grown;
        s->mem_capacity = cap;
    }
    memcpy(s->mem + s->mem_length, p, n);
    s->mem_length += n;
    s->written += n;
    return IC_OK;
}

ic_status ic__sink_reset(ic__sink *s, ic_error *err) {
    if (s->fd >= 0) {
        if (ftruncate(s->fd, 0) != 0 || lseek(s->fd, 0, SEEK_SET) != 0) {
            return ic__sys_error(err, errno, "store: truncate temporary file");
        }
    }
    s->mem_length = 0;
    s->written = 0;
    return IC_OK;
}

/* ---- Sources. ---- */

void ic__source_release(ic__source *s) {
    ic__buffer_free(s->pool, s->buffer, s->buffer_capacity, s->buffer_kind);
    s->buffer = NULL;
    s->buffer_capacity = 0;
    s->window_length = 0;
}

ic_status ic__source_need(ic__source *s, uint64_t offset, size_t n, const uint8_t **p, ic_error *err) {
    if (offset > s->size || n > s->size - offset) {
        return ic__set_error(err, IC_ERR_CORRUPT, "store: entry ends at byte %llu; %zu bytes needed at %llu",
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
        ic__source_release(s);
        s->buffer = ic__buffer_alloc(s->pool, want, &s->buffer_kind, &s->buffer_capacity);
        if (!s->buffer) {
            s->buffer_capacity = 0;
            return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot allocate %zu bytes", want);
        }
    }
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(s->fd, s->buffer + got, want - got, (off_t)(offset + got));
        if (r < 0) {
            if (errno == EINTR) continue;
            s->window_length = 0;
            return ic__sys_error(err, errno, "store: read entry");
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    s->window_offset = offset;
    s->window_length = got;
    if (got < n) {
        return ic__set_error(err, IC_ERR_CORRUPT, "store: entry shorter than its size (%zu of %zu bytes at %llu)",
                            got, n, (unsigned long long)offset);
    }
    *p = s->buffer;
    return IC_OK;
}
