/*
 * fetch_guard.h — a transfer's destination checks (fetch_guard.c), used by
 * fetch_transfer.c. Not installed.
 */
#ifndef IC_FETCH_GUARD_H
#define IC_FETCH_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "ic_fetch.h"

/** The destination policy of one transfer and what it refused. */
typedef struct ic_fetch_guard ic_fetch_guard;

/**
 * Installs the checks of req's policy (or the default policy) on `easy`, with
 * req's proxy (none: the environment's proxy variables are ignored too) and
 * resolve entries. Fails when an entry is NULL, libcurl refuses an option or
 * memory runs out.
 */
ic_status ic_fetch_guard_create(CURL *easy, const ic_fetch_request *req, ic_fetch_guard **out, ic_error *err);

/** The sentence of the first refusal, or NULL when the guard refused nothing. */
const char *ic_fetch_guard_refusal(const ic_fetch_guard *g);

/** Frees the guard (NULL is ignored). The easy handle must no longer run. */
void ic_fetch_guard_destroy(ic_fetch_guard *g);

#endif /* IC_FETCH_GUARD_H */
