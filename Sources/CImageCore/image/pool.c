/* pool.c — a bounded, reference-counted pool of large pixel buffers. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ic_image_internal.h"

#define IC_POOL_SLOTS 16

typedef struct pool_slot {
    void *p;
    size_t capacity;
    uint64_t idle_since_ms;
} pool_slot;

struct ic_pool {
    pthread_mutex_t mutex;
    int refs;            /* owner + images allocated from the pool */
    size_t max_idle_bytes;
    uint32_t max_idle_ms;
    size_t idle_bytes;
    uint64_t reuses;
    int count;
    pool_slot slots[IC_POOL_SLOTS];
};

ic_status ic_pool_create(size_t max_idle_bytes, uint32_t max_idle_ms, ic_pool **out, ic_error *err) {
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "pool: NULL output pointer");
    ic_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "pool: out of memory");
    pthread_mutex_init(&pool->mutex, NULL);
    pool->refs = 1;
    pool->max_idle_bytes = max_idle_bytes;
    pool->max_idle_ms = max_idle_ms;
    *out = pool;
    return IC_OK;
}

static void remove_slot(ic_pool *pool, int i, void **unmap, size_t *unmap_size) {
    *unmap = pool->slots[i].p;
    *unmap_size = pool->slots[i].capacity;
    pool->idle_bytes -= pool->slots[i].capacity;
    pool->slots[i] = pool->slots[--pool->count];
}

/* Collects expired slots into `victims` (unmapped by the caller, outside the lock). */
static int expire_locked(ic_pool *pool, uint64_t now, pool_slot *victims) {
    int n = 0;
    for (int i = 0; i < pool->count;) {
        if (now - pool->slots[i].idle_since_ms > pool->max_idle_ms) {
            remove_slot(pool, i, &victims[n].p, &victims[n].capacity);
            n++;
        } else {
            i++;
        }
    }
    return n;
}

static void unmap_all(pool_slot *victims, int n) {
    for (int i = 0; i < n; i++) munmap(victims[i].p, victims[i].capacity);
}

static void pool_unref(ic_pool *pool) {
    if (__atomic_sub_fetch(&pool->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    for (int i = 0; i < pool->count; i++) munmap(pool->slots[i].p, pool->slots[i].capacity);
    pthread_mutex_destroy(&pool->mutex);
    free(pool);
}

void ic_pool_release(ic_pool *pool) {
    if (pool) pool_unref(pool);
}

void ic_pool_trim(ic_pool *pool) {
    if (!pool) return;
    pool_slot victims[IC_POOL_SLOTS];
    pthread_mutex_lock(&pool->mutex);
    int n = pool->count;
    memcpy(victims, pool->slots, sizeof(pool_slot) * (size_t)n);
    pool->count = 0;
    pool->idle_bytes = 0;
    pthread_mutex_unlock(&pool->mutex);
    unmap_all(victims, n);
}

size_t ic_pool_idle_bytes(ic_pool *pool) {
    pthread_mutex_lock(&pool->mutex);
    size_t bytes = pool->idle_bytes;
    pthread_mutex_unlock(&pool->mutex);
    return bytes;
}

uint64_t ic_pool_reuse_count(ic_pool *pool) {
    pthread_mutex_lock(&pool->mutex);
    uint64_t n = pool->reuses;
    pthread_mutex_unlock(&pool->mutex);
    return n;
}

void *ic__pool_take(ic_pool *pool, size_t size, size_t *capacity) {
    pool_slot victims[IC_POOL_SLOTS];
    void *found = NULL;
    pthread_mutex_lock(&pool->mutex);
    int n = expire_locked(pool, ic__monotonic_ms(), victims);
    int best = -1;
    for (int i = 0; i < pool->count; i++) {
        size_t cap = pool->slots[i].capacity;
        /* Within a quarter of the size, so a huge buffer is not spent on a small image. */
        if (cap >= size && cap - size <= size / 4 && (best < 0 || cap < pool->slots[best].capacity)) best = i;
    }
    if (best >= 0) {
        found = pool->slots[best].p;
        *capacity = pool->slots[best].capacity;
        pool->idle_bytes -= pool->slots[best].capacity;
        pool->slots[best] = pool->slots[--pool->count];
        pool->reuses++;
        __atomic_add_fetch(&pool->refs, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&pool->mutex);
    unmap_all(victims, n);
    return found;
}

void ic__pool_retain(ic_pool *pool) { __atomic_add_fetch(&pool->refs, 1, __ATOMIC_RELAXED); }

void ic__pool_put(ic_pool *pool, void *p, size_t capacity) {
    pool_slot victims[IC_POOL_SLOTS + 1];
    int n = 0;
    pthread_mutex_lock(&pool->mutex);
    uint64_t now = ic__monotonic_ms();
    n = expire_locked(pool, now, victims);
    if (capacity > pool->max_idle_bytes) {
        victims[n].p = p;
        victims[n].capacity = capacity;
        n++;
    } else {
        /* Make room: evict the longest-idle buffers first. */
        while (pool->count > 0 &&
               (pool->count == IC_POOL_SLOTS || pool->idle_bytes + capacity > pool->max_idle_bytes)) {
            int oldest = 0;
            for (int i = 1; i < pool->count; i++) {
                if (pool->slots[i].idle_since_ms < pool->slots[oldest].idle_since_ms) oldest = i;
            }
            remove_slot(pool, oldest, &victims[n].p, &victims[n].capacity);
            n++;
        }
        pool->slots[pool->count++] = (pool_slot){p, capacity, now};
        pool->idle_bytes += capacity;
    }
    pthread_mutex_unlock(&pool->mutex);
    unmap_all(victims, n);
    pool_unref(pool);
}
