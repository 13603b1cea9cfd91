/*
 * budget.c — a memory budget and the cancellation flag it carries (ic_budget.h).
 */
#include <stdlib.h>

#include "ic_budget.h"

void ic__budget_init(ic__budget *b, uint64_t limit, const int *cancel_flag) {
    b->limit = limit;
    b->current = 0;
    b->peak = 0;
    b->cancel_flag = cancel_flag;
}

bool ic__budget_try_charge(ic__budget *b, uint64_t bytes) {
    if (b->limit && (bytes > b->limit || b->current > b->limit - bytes)) return false;
    b->current += bytes;
    if (b->current > b->peak) b->peak = b->current;
    return true;
}

void ic__budget_refund(ic__budget *b, uint64_t bytes) {
    b->current = bytes > b->current ? 0 : b->current - bytes;
}

void *ic__budget_try_alloc(ic__budget *b, size_t size) {
    if (!ic__budget_try_charge(b, size)) return NULL;
    void *p = malloc(size ? size : 1);
    if (!p) ic__budget_refund(b, size);
    return p;
}

void ic__budget_free(ic__budget *b, void *p, size_t size) {
    if (!p) return;
    free(p);
    ic__budget_refund(b, size);
}

bool ic__budget_cancelled(const ic__budget *b) {
    return b->cancel_flag && __atomic_load_n(b->cancel_flag, __ATOMIC_ACQUIRE) != 0;
}
