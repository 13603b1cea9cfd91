/*
 * store_parallel.c — a large read split into parts, run by the caller's
 * ic_store_run_parts_fn on the caller's threads (the store starts none).
 * Each part reads through a source of its own and reports its own status.
 */
#include "../common/ic_common_internal.h"
#include "ic_store_internal.h"

/* One part: its source (part 0 reads through the caller's) and how it ended. */
typedef struct part {
    ic__source own;
    ic__source *source;
    ic_status status;
    ic_error error;
} part;

/* The job and its parts, shared by every call of run_part. */
typedef struct fan_out {
    ic_store_part_job job;
    void *arg;
    uint32_t count;
    part parts[IC_STORE_MAX_PARTS];
} fan_out;

/* The ic_store_part_fn handed to the caller's runner. */
static void run_part(void *arg, uint32_t index) {
    fan_out *f = arg;
    if (index >= f->count) return;
    part *p = &f->parts[index];
    p->status = f->job(f->arg, p->source, index, f->count, &p->error);
}

ic_status ic__store_run_parts(const ic_store_read_options *o, uint32_t count, ic_store_part_job job,
                             void *arg, ic__source *s, ic_error *err) {
    fan_out f = {.job = job, .arg = arg, .count = count};
    for (uint32_t i = 0; i < count; i++) {
        part *p = &f.parts[i];
        p->own = (ic__source){.fd = s->fd, .mem = s->mem, .size = s->size, .pool = s->pool};
        p->source = i == 0 ? s : &p->own;
        /* What a part the runner never ran reports. */
        p->status = ic__set_error(&p->error, IC_ERR_INTERNAL, "store: part %u of %u of a read did not run", i,
                                 count);
    }
    o->run_parts(o->run_parts_context, count, run_part, &f);
    ic_status st = IC_OK;
    for (uint32_t i = 0; i < count; i++) {
        part *p = &f.parts[i];
        ic__source_release(&p->own);
        if (st == IC_OK && p->status != IC_OK) {
            st = p->status;
            if (err) *err = p->error;
        }
    }
    return st;
}
