/*
 * ic_pool.h — a bounded pool of large pixel buffers.
 *
 * A fresh 48 MiB buffer costs the kernel ~10 ms of page faults and zeroing on
 * these machines — as much as decoding a 12 MP JPEG. A service decodes many
 * images of similar sizes, so freed buffers are kept (up to a byte limit and
 * an idle time) and handed to the next decode that needs about that size.
 * Only buffers of 1 MiB and more are pooled; smaller ones come from malloc.
 *
 * The pool is reference counted: images allocated from it keep it alive, so
 * its owner may release it at any time.
 */
#ifndef IC_POOL_H
#define IC_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A pool of idle pixel buffers. Thread-safe. */
typedef struct ic_pool ic_pool;

/**
 * Creates a pool keeping at most `max_idle_bytes` of freed buffers, each for at
 * most `max_idle_ms` milliseconds (checked whenever the pool is used).
 */
ic_status ic_pool_create(size_t max_idle_bytes, uint32_t max_idle_ms, ic_pool **out, ic_error *err);

/** Drops the caller's reference. Buffers in use keep the pool alive until they are freed. */
void ic_pool_release(ic_pool *pool);

/** Returns every idle buffer to the system. */
void ic_pool_trim(ic_pool *pool);

/** Bytes of idle buffers the pool holds now. */
size_t ic_pool_idle_bytes(ic_pool *pool);

/** Buffers handed out again instead of freshly mapped, since creation. */
uint64_t ic_pool_reuse_count(ic_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* IC_POOL_H */
