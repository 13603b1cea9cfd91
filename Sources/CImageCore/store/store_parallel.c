/*
 * store_parallel.c — a large read split into parts: the first on the calling
 * thread, the others on threads started for the call.
 */
#include <pthread.h>
#include <stdbool.h>

#include "ic_store_internal.h"

/* One thread's part of a job. */
typedef struct worker {
    ic_store_part_job job;
    void *arg;
    ic_source source;
    uint32_t index, count;
    ic_status status;
    ic_error error;
    pthread_t thread;
    bool started;
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    w->status = w->job(w->arg, &w->source, w->index, w->count, &w->error);
    ic_source_release(&w->source);
    return NULL;
}

ic_status ic_store_run_parts(uint32_t count, ic_store_part_job job, void *arg, ic_source *s,
                             ic_error *err) {
    worker helpers[IC_STORE_MAX_PARTS - 1];
    for (uint32_t i = 1; i < count; i++) {
        worker *w = &helpers[i - 1];
        *w = (worker){.job = job, .arg = arg,
                      .source = {.fd = s->fd, .mem = s->mem, .size = s->size, .pool = s->pool},
                      .index = i, .count = count};
        w->started = pthread_create(&w->thread, NULL, worker_main, w) == 0;
    }
    ic_status st = job(arg, s, 0, count, err);
    for (uint32_t i = 1; i < count; i++) {
        worker *w = &helpers[i - 1];
        if (w->started) {
            pthread_join(w->thread, NULL);
        } else {
            worker_main(w); /* no thread could start: do its part here */
        }
        if (st == IC_OK && w->status != IC_OK) {
            st = w->status;
            if (err) *err = w->error;
        }
    }
    return st;
}
