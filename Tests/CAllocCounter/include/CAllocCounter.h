/*
 * CAllocCounter.h — counts heap allocations of the calling thread by
 * replacing malloc and friends (glibc allows it: they forward to
 * __libc_malloc & co.). Linked only into the ImageKitTestHelper executable,
 * never into the library or the test bundle. Sanitizer builds replace malloc
 * themselves, so there the counter is compiled out and reports unavailable.
 */
#ifndef CALLOCCOUNTER_H
#define CALLOCCOUNTER_H

#include <stdint.h>

/** 1 when allocations are being counted in this build, 0 under a sanitizer. */
int alloc_counter_available(void);

/** malloc, calloc, realloc and aligned allocations made by the calling thread so far. */
uint64_t alloc_counter_thread_count(void);

#endif /* CALLOCCOUNTER_H */
