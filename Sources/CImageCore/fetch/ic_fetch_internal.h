/*
 * ic_fetch_internal.h — one transfer of the fetch engine (fetch_transfer.c),
 * shared with the engine loop (fetch.c), its destination checks
 * (fetch_guard.c) and the engine's idle connections (fetch_conns.c). Not installed.
 */
#ifndef IC_FETCH_INTERNAL_H
#define IC_FETCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "ic_fetch.h"

/* ---- Body buffers (fetch_body.c). ---- */

/** Recycled body buffers of one engine; outlives it until every body is released. */
typedef struct ic__body_pool ic__body_pool;

/** A pool keeping at most `max_bytes` of idle buffers; NULL when out of memory. */
ic__body_pool *ic__body_pool_create(size_t max_bytes);
/** The engine is done with the pool: idle buffers are freed, later releases free theirs. */
void ic__body_pool_close(ic__body_pool *p);
/** A buffer of at least `capacity` bytes (recycled when one fits); NULL when out of memory. */
uint8_t *ic__body_alloc(ic__body_pool *p, size_t capacity);
/** Resizes a buffer from ic__body_alloc (like realloc); NULL, leaving it unchanged, on failure. */
uint8_t *ic__body_resize(uint8_t *body, size_t capacity);
/** The usable size of a buffer from ic__body_alloc. */
size_t ic__body_capacity(uint8_t *body);
/** Buffers handed out and not yet released, and their capacity in bytes. */
void ic__body_pool_outstanding(ic__body_pool *p, size_t *count, size_t *bytes);

/* ---- Idle HTTP/1 connections (fetch_conns.c). ---- */

/** The sockets of an engine's idle HTTP/1 connections; engine thread only. */
typedef struct ic__conn_watch ic__conn_watch;

/** An empty watch; NULL when out of memory. */
ic__conn_watch *ic__conn_watch_create(void);
/** Frees the watch (NULL is ignored). */
void ic__conn_watch_destroy(ic__conn_watch *w);
/**
 * Notes the connection a completed transfer leaves in libcurl's pool, when the
 * response was HTTP/1 (call before the handle leaves the multi handle).
 */
void ic__conn_watch_note(ic__conn_watch *w, CURL *easy);
/**
 * Called before a request is sent over the connection between the two ends:
 * when it is a noted connection with unread input, shuts its socket down so
 * libcurl retries the request over a new connection, and returns true.
 */
bool ic__conn_watch_check(ic__conn_watch *w, const char *local_ip, int local_port, const char *peer_ip,
                         int peer_port);

/* ---- Destination checks (fetch_guard.c). ---- */

/** The destination policy of one transfer and what it refused. */
typedef struct ic__fetch_guard ic__fetch_guard;

/**
 * Installs the checks of req's policy (or the default policy) on `easy`, with
 * req's proxy (none: the environment's proxy variables are ignored too) and
 * resolve entries, and the engine's check of reused connections (`conns`, may
 * be NULL). Fails when an entry is NULL, libcurl refuses an option or memory
 * runs out.
 */
ic_status ic__fetch_guard_create(CURL *easy, const ic_fetch_request *req, ic__conn_watch *conns, ic__fetch_guard **out,
                                ic_error *err);

/** The sentence of the first refusal, or NULL when the guard refused nothing. */
const char *ic__fetch_guard_refusal(const ic__fetch_guard *g);

/** Frees the guard (NULL is ignored). The easy handle must no longer run. */
void ic__fetch_guard_destroy(ic__fetch_guard *g);

/* ---- Transfers (fetch_transfer.c). ---- */

/** One transfer from ic_fetch_start to on_complete. */
typedef struct ic__xfer ic__xfer;
struct ic__xfer {
    /* Owned by the engine: links and flags guarded by the engine lock. */
    ic__xfer *live_prev, *live_next; /* every transfer not yet completed */
    ic__xfer *queue_next;            /* submitted, waiting for the engine thread */
    ic__xfer *cancel_next;           /* picked up for cancellation */
    uint64_t id;
    bool cancel_requested;
    bool cancel_taken;

    /* Engine thread only from here on (set up by ic__xfer_create before submission). */
    bool in_multi;
    CURL *easy;
    struct curl_slist *header_list;
    ic__fetch_guard *guard;         /* destination policy checks (fetch_guard.c) */
    ic_fetch_callbacks cb;
    void *ctx;
    bool cookies;
    ic__body_pool *pool;
    uint64_t max_body;
    /* No on_body, or on_body with keep_body: the body is gathered for on_complete. */
    bool buffers_body;
    int status_min, status_end;
    uint32_t progress_interval_ms;

    /* Header lines of the latest response, "Name: value\r\n" each. */
    char *raw_headers;
    size_t raw_len, raw_cap;
    ic_fetch_header *fields;
    size_t field_count;
    ic_fetch_head head;
    bool head_ready;     /* head built and given to on_head */
    bool reject_status;  /* status outside [status_min, status_end): discard the body */
    bool bad_status;     /* libcurl read no three-digit status from the status line */
    bool too_large;
    bool aborted;        /* on_head or on_body said stop */
    bool out_of_memory;
    int64_t expected;    /* decoded size we expect, -1 unknown */

    uint8_t *body;
    size_t body_len, body_cap;
    uint64_t received;
    uint64_t progress_at_ms;
    uint64_t progress_reported;
    bool progress_sent;

    char errbuf[CURL_ERROR_SIZE];
    char message[CURL_ERROR_SIZE + 160]; /* room for a policy refusal (IC_FETCH_POLICY_REASON) */
};

/**
 * Builds a transfer around `easy` (a recycled handle, or NULL for a new one)
 * and configures it, on the caller's thread. Takes `easy` even on failure.
 */
ic_status ic__xfer_create(const ic_fetch_request *req, CURL *easy, ic__body_pool *pool, ic__conn_watch *conns,
                         uint32_t progress_interval_ms, ic__xfer **out, ic_error *err);

/**
 * Reports the end of the transfer to on_complete: `code` is curl's result,
 * or ignored when `cancelled`. The easy handle must be out of the multi handle.
 */
void ic__xfer_complete(ic__xfer *x, CURLcode code, bool cancelled);

/**
 * Takes the easy handle out of a completed transfer, reset for another request,
 * or returns NULL when it must not be reused (it carried the cookie jar).
 */
CURL *ic__xfer_take_handle(ic__xfer *x);

/** Frees the transfer, its easy handle (unless taken) and every buffer it still owns. */
void ic__xfer_destroy(ic__xfer *x);

#endif /* IC_FETCH_INTERNAL_H */
