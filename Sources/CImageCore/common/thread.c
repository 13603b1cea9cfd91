/* thread.c — thread naming, and a helper thread that works through a growing range. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ic_common_internal.h"
#include "ic_thread.h"

void ic_thread_set_name(const char *name) {
    char buf[16];
    strncpy(buf, name ? name : "", sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    (void)pthread_setname_np(pthread_self(), buf);
}

struct ic__range_helper {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    ic_range_fn fn;
    void *ctx;
    uint32_t chunk;
    uint32_t next;  /* first index nobody has claimed */
    uint32_t ready; /* indices below this are ready */
    uint32_t busy;  /* first index of the chunk the helper works on, or `next` when idle */
    bool closing;   /* finishing: claim partial chunks, then leave */
    bool stopping;  /* abandoning: claim nothing more */
};

/* Claims the next chunk (under the lock); a shorter one only with `partial`. */
static bool claim(ic__range_helper *h, bool partial, uint32_t *begin, uint32_t *end) {
    uint32_t left = h->ready - h->next;
    if (h->stopping || left == 0 || (!partial && left < h->chunk)) return false;
    *begin = h->next;
    *end = h->next + (left < h->chunk ? left : h->chunk);
    h->next = *end;
    return true;
}

static void *helper_main(void *arg) {
    ic__range_helper *h = arg;
    ic_thread_set_name("imagekit-help");
    pthread_mutex_lock(&h->lock);
    for (;;) {
        uint32_t begin, end;
        if (claim(h, h->closing, &begin, &end)) {
            h->busy = begin;
            pthread_mutex_unlock(&h->lock);
            h->fn(h->ctx, begin, end);
            pthread_mutex_lock(&h->lock);
            h->busy = h->next;
        } else if (h->closing || h->stopping) {
            break;
        } else {
            pthread_cond_wait(&h->wake, &h->lock);
        }
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

ic__range_helper *ic__range_helper_start(ic_range_fn fn, void *ctx, uint32_t start, uint32_t chunk) {
    ic__range_helper *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->fn = fn;
    h->ctx = ctx;
    h->chunk = chunk ? chunk : 1;
    h->next = h->ready = h->busy = start;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->wake, NULL);
    if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
        pthread_cond_destroy(&h->wake);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
    }
    return h;
}

uint32_t ic__range_helper_ready(const ic__range_helper *h) {
    return h->ready; /* written by the caller's thread only */
}

void ic__range_helper_extend(ic__range_helper *h, uint32_t end) {
    pthread_mutex_lock(&h->lock);
    if (end > h->ready) h->ready = end;
    bool wake = h->ready - h->next >= h->chunk;
    pthread_mutex_unlock(&h->lock);
    if (wake) pthread_cond_signal(&h->wake);
}

uint32_t ic__range_helper_done(ic__range_helper *h) {
    pthread_mutex_lock(&h->lock);
    uint32_t done = h->busy < h->next ? h->busy : h->next;
    pthread_mutex_unlock(&h->lock);
    return done;
}

/* Waits for the helper thread to leave, and frees `h`. */
static void end_thread(ic__range_helper *h) {
    pthread_join(h->thread, NULL);
    pthread_cond_destroy(&h->wake);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void ic__range_helper_finish(ic__range_helper *h, bool complete) {
    pthread_mutex_lock(&h->lock);
    if (complete) {
        h->closing = true;
    } else {
        h->stopping = true;
    }
    pthread_cond_signal(&h->wake);
    uint32_t begin, end;
    while (complete && claim(h, true, &begin, &end)) {
        pthread_mutex_unlock(&h->lock);
        h->fn(h->ctx, begin, end);
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    end_thread(h);
}

void ic__range_helper_drain(ic__range_helper *h) {
    pthread_mutex_lock(&h->lock);
    h->closing = true;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
    end_thread(h);
}
