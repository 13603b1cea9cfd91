/* alloc_counter.c — see CAllocCounter.h. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "CAllocCounter.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ALLOC_COUNTER_OFF 1
#endif
#endif

#ifndef ALLOC_COUNTER_OFF

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

/* Per thread, so other threads' allocations do not count; initial-exec TLS needs no allocation. */
static _Thread_local uint64_t thread_allocations;

void *malloc(size_t size) {
    thread_allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    thread_allocations++;
    return __libc_calloc(count, size);
}

void *realloc(void *p, size_t size) {
    thread_allocations++;
    return __libc_realloc(p, size);
}

void *memalign(size_t alignment, size_t size) {
    thread_allocations++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    thread_allocations++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    thread_allocations++;
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

int alloc_counter_available(void) { return 1; }

uint64_t alloc_counter_thread_count(void) { return thread_allocations; }

#else

int alloc_counter_available(void) { return 0; }

uint64_t alloc_counter_thread_count(void) { return 0; }

#endif
