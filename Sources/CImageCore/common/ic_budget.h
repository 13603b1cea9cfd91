/*
 * ic_budget.h — a memory budget with a cancellation flag (common/): the bytes one
 * piece of work (a decode) may hold at once, what it holds now and at most, and the
 * caller's flag that stops it. The decoder owns one; color/ and the format code
 * borrow it, never the decoder. Not installed.
 */
#ifndef IC_BUDGET_H
#define IC_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Bytes counted against a limit, and the flag that cancels the work. */
typedef struct ic__budget {
    /** Most bytes held at once; 0: no limit. */
    uint64_t limit;
    /** Bytes held now. */
    uint64_t current;
    /** Most bytes held at once so far. */
    uint64_t peak;
    /** The caller's cancellation flag (see ic_cancel_flag_set), or NULL. */
    const int *cancel_flag;
} ic__budget;

/** An empty budget of `limit` bytes (0: none) that stops when *cancel_flag is set. */
void ic__budget_init(ic__budget *b, uint64_t limit, const int *cancel_flag);

/** Counts `bytes` against the limit; false, with nothing counted, when they do not fit. */
bool ic__budget_try_charge(ic__budget *b, uint64_t bytes);

/** Returns bytes counted by ic__budget_try_charge. */
void ic__budget_refund(ic__budget *b, uint64_t bytes);

/**
 * Checks and charges `size` bytes and allocates them in one call: NULL, with nothing
 * counted, when they do not fit or malloc fails (the caller says which it cares about).
 */
void *ic__budget_try_alloc(ic__budget *b, size_t size);

/** Frees memory from ic__budget_try_alloc and refunds its `size` bytes; NULL is allowed. */
void ic__budget_free(ic__budget *b, void *p, size_t size);

/** True once the caller's cancellation flag is set (read with acquire ordering). */
bool ic__budget_cancelled(const ic__budget *b);

#endif /* IC_BUDGET_H */
