/*
 * fetch_body.c — body buffers, recycled.
 *
 * A fresh buffer costs a page fault per 4 KiB the first time it is written,
 * and glibc hands freed memory back to the kernel when it sits at the top of
 * the heap: with buffers of 100 KB coming and going, page faults were a third
 * of the engine thread's time. Receivers release bodies with
 * ic_fetch_body_release (from any thread); released buffers go back to the
 * engine's pool, up to a byte budget, and the next transfer writes into pages
 * that are already mapped.
 *
 * Each buffer starts with a header naming its pool. The pool counts the
 * engine plus every buffer handed out, so a body may outlive its engine.
 * The engine thread writes a header; whichever thread releases the body reads
 * it without the pool's lock (the lock is found through the header), so the
 * pool pointer is stored with release order once the header is complete and
 * loaded with acquire order: the header is published by the buffer itself,
 * whatever path the body took between the two threads.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ic_fetch_internal.h"

/* Most idle buffers kept, and the largest buffer worth keeping. */
#define IC_BODY_POOL_SLOTS 64
#define IC_BODY_POOL_LARGEST (4u * 1024u * 1024u)

typedef struct body_header {
    ic__body_pool *_Atomic pool; /* stored last (release), after capacity */
    size_t capacity;
} body_header;

struct ic__body_pool {
    pthread_mutex_t lock;
    size_t refs; /* the engine, while open, plus every buffer not in `idle` */
    size_t out;  /* buffers handed out */
    size_t out_bytes; /* their capacity, added up */
    bool closed;
    size_t max_bytes;
    size_t idle_bytes;
    size_t idle_count;
    body_header *idle[IC_BODY_POOL_SLOTS];
};

static body_header *header_of(uint8_t *body) { return (body_header *)(void *)body - 1; }

ic__body_pool *ic__body_pool_create(size_t max_bytes) {
    ic__body_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    p->refs = 1;
    p->max_bytes = max_bytes;
    return p;
}

static void drop_ref(ic__body_pool *p) {
    /* lock held on entry; released here */
    bool last = --p->refs == 0;
    pthread_mutex_unlock(&p->lock);
    if (last) {
        pthread_mutex_destroy(&p->lock);
        free(p);
    }
}

void ic__body_pool_close(ic__body_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->closed = true;
    for (size_t i = 0; i < p->idle_count; i++) free(p->idle[i]);
    p->idle_count = 0;
    p->idle_bytes = 0;
    drop_ref(p);
}

uint8_t *ic__body_alloc(ic__body_pool *p, size_t capacity) {
    pthread_mutex_lock(&p->lock);
    body_header *h = NULL;
    /* Newest first (its pages are warmest); not more than twice the size asked for. */
    for (size_t i = p->idle_count; i-- > 0;) {
        body_header *c = p->idle[i];
        if (c->capacity >= capacity && c->capacity <= 2 * capacity + 64 * 1024) {
            h = c;
            p->idle[i] = p->idle[--p->idle_count];
            p->idle_bytes -= c->capacity;
            break;
        }
    }
    if (!h) {
        h = malloc(sizeof *h + capacity);
        if (!h) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        h->capacity = capacity;
        atomic_store_explicit(&h->pool, p, memory_order_release);
    }
    p->refs++;
    p->out++;
    p->out_bytes += h->capacity;
    pthread_mutex_unlock(&p->lock);
    return (uint8_t *)(h + 1);
}

uint8_t *ic__body_resize(uint8_t *body, size_t capacity) {
    ic__body_pool *p = atomic_load_explicit(&header_of(body)->pool, memory_order_relaxed);
    size_t old = header_of(body)->capacity;
    body_header *h = realloc(header_of(body), sizeof *h + capacity);
    if (!h) return NULL;
    h->capacity = capacity;
    atomic_store_explicit(&h->pool, p, memory_order_release); /* realloc copied it: publish again */
    pthread_mutex_lock(&p->lock);
    p->out_bytes = p->out_bytes - old + capacity;
    pthread_mutex_unlock(&p->lock);
    return (uint8_t *)(h + 1);
}

size_t ic__body_capacity(uint8_t *body) { return header_of(body)->capacity; }

void ic__body_pool_outstanding(ic__body_pool *p, size_t *count, size_t *bytes) {
    pthread_mutex_lock(&p->lock);
    *count = p->out;
    *bytes = p->out_bytes;
    pthread_mutex_unlock(&p->lock);
}

void ic_fetch_body_release(uint8_t *body) {
    if (!body) return;
    body_header *h = header_of(body);
    ic__body_pool *p = atomic_load_explicit(&h->pool, memory_order_acquire);
    pthread_mutex_lock(&p->lock);
    p->out--;
    p->out_bytes -= h->capacity;
    if (!p->closed && p->idle_count < IC_BODY_POOL_SLOTS && h->capacity <= IC_BODY_POOL_LARGEST &&
        p->idle_bytes + h->capacity <= p->max_bytes) {
        p->idle[p->idle_count++] = h;
        p->idle_bytes += h->capacity;
    } else {
        free(h);
    }
    drop_ref(p);
}
