/*
 * fetch.c — the fetch engine: one thread running curl_multi_poll, fed by a
 * locked queue and curl_multi_wakeup.
 *
 * Other threads only touch the queue, the cancellation marks and the list of
 * live transfers, all under `lock`; the curl handles belong to the engine
 * thread once submitted. The lock is never held while a callback runs, so a
 * callback may start or cancel transfers (or destroy the engine).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ic_common_internal.h"
#include "ic_fetch_internal.h"

/* Easy handles kept for reuse (each keeps its receive buffer and allocations). */
#define IC_FETCH_IDLE_HANDLES 32

struct ic_fetch {
    CURLM *multi;
    CURLSH *share; /* the cookie jar of requests that opt in */
    ic__body_pool *bodies;
    ic__conn_watch *conns; /* idle HTTP/1 connections, engine thread only */
    pthread_t thread;
    pthread_mutex_t lock;
    char thread_name[16];

    /* Guarded by lock. */
    ic__xfer *live;                   /* every transfer not yet completed */
    ic__xfer *queue_head, *queue_tail; /* submitted, not yet in the multi handle */
    uint64_t next_id;
    bool wake_pending;
    bool cancel_pending;
    bool stopping;
    bool self_destroy; /* destroyed from a callback: the thread frees the engine */
    bool loop_running;  /* loop_thread is set */
    pthread_t loop_thread;
    CURL *idle[IC_FETCH_IDLE_HANDLES];
    size_t idle_count;

    uint32_t progress_interval_ms;

    atomic_uint_fast64_t started;
    atomic_uint_fast64_t completed;
    atomic_uint_fast32_t queued;
    atomic_uint_fast32_t active;
    atomic_uint_fast32_t easy_handles;
    atomic_uint_fast32_t idle_handles;
};

/* curl_global_init runs once per process; its result is kept for every later create. */
static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init_result = CURLE_OK;

static void curl_init_once(void) { g_curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT); }

const char *ic_fetch_result_name(ic_fetch_result result) {
    switch (result) {
    case IC_FETCH_OK: return "ok";
    case IC_FETCH_CANCELLED: return "cancelled";
    case IC_FETCH_TIMEOUT: return "timeout";
    case IC_FETCH_DNS: return "DNS failure";
    case IC_FETCH_CONNECT: return "connect failure";
    case IC_FETCH_TLS: return "TLS failure";
    case IC_FETCH_TOO_LARGE: return "too large";
    case IC_FETCH_TOO_MANY_REDIRECTS: return "too many redirects";
    case IC_FETCH_DISALLOWED_PROTOCOL: return "disallowed protocol";
    case IC_FETCH_HTTP_STATUS: return "HTTP status";
    case IC_FETCH_NETWORK: return "network failure";
    case IC_FETCH_BAD_URL: return "bad URL";
    case IC_FETCH_ABORTED: return "aborted";
    case IC_FETCH_OTHER: return "other failure";
    case IC_FETCH_DESTINATION_REFUSED: return "destination refused";
    }
    return "unknown result";
}

void ic_fetch_config_init(ic_fetch_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->progress_interval_ms = 100;
    cfg->max_pooled_body_bytes = 8u * 1024u * 1024u;
    cfg->thread_name = "imagekit-fetch";
}

void ic_fetch_request_init(ic_fetch_request *req) {
    memset(req, 0, sizeof *req);
    req->method = IC_FETCH_GET;
    req->max_redirects = IC_FETCH_DEFAULT_MAX_REDIRECTS;
    req->max_body_bytes = IC_FETCH_DEFAULT_MAX_BODY;
    req->status_min = 200;
    req->status_end = 300;
}

/* ---- Lock held. ---- */

/* Whether the caller is the engine thread (so inside a callback). */
static bool on_engine_thread(const ic_fetch *f) {
    return f->loop_running && pthread_equal(pthread_self(), f->loop_thread);
}


static void live_link(ic_fetch *f, ic__xfer *x) {
    x->live_prev = NULL;
    x->live_next = f->live;
    if (f->live) f->live->live_prev = x;
    f->live = x;
}

static void live_unlink(ic_fetch *f, ic__xfer *x) {
    if (x->live_prev) x->live_prev->live_next = x->live_next;
    else f->live = x->live_next;
    if (x->live_next) x->live_next->live_prev = x->live_prev;
    x->live_prev = x->live_next = NULL;
}

/* ---- Engine thread. ---- */

/* Takes x out of curl and the live list, reports its outcome and frees it. */
static void finish(ic_fetch *f, ic__xfer *x, CURLcode code, bool cancelled) {
    if (x->in_multi && !cancelled && code == CURLE_OK) ic__conn_watch_note(f->conns, x->easy);
    if (x->in_multi) {
        curl_multi_remove_handle(f->multi, x->easy);
        x->in_multi = false;
        atomic_fetch_sub(&f->active, 1);
    }
    pthread_mutex_lock(&f->lock);
    live_unlink(f, x);
    pthread_mutex_unlock(&f->lock);
    ic__xfer_complete(x, code, cancelled);
    CURL *reusable = ic__xfer_take_handle(x);
    if (reusable) {
        pthread_mutex_lock(&f->lock);
        if (f->idle_count < IC_FETCH_IDLE_HANDLES) {
            f->idle[f->idle_count++] = reusable;
            reusable = NULL;
            atomic_fetch_add(&f->idle_handles, 1);
        }
        pthread_mutex_unlock(&f->lock);
        if (reusable) curl_easy_cleanup(reusable);
    }
    ic__xfer_destroy(x);
    atomic_fetch_sub(&f->easy_handles, 1);
    atomic_fetch_add(&f->completed, 1);
}

/* Hands newly submitted transfers to curl and stops the ones cancelled; false once stopping. */
static bool take_requests(ic_fetch *f) {
    pthread_mutex_lock(&f->lock);
    ic__xfer *queued = f->queue_head;
    f->queue_head = f->queue_tail = NULL;
    f->wake_pending = false;
    ic__xfer *cancelled = NULL;
    if (f->cancel_pending) {
        f->cancel_pending = false;
        for (ic__xfer *x = f->live; x; x = x->live_next) {
            if (x->cancel_requested && !x->cancel_taken) {
                x->cancel_taken = true;
                x->cancel_next = cancelled;
                cancelled = x;
            }
        }
    }
    bool stopping = f->stopping;
    pthread_mutex_unlock(&f->lock);

    while (queued) {
        ic__xfer *x = queued;
        queued = x->queue_next;
        atomic_fetch_sub(&f->queued, 1);
        if (x->cancel_taken) continue; /* finished below without ever starting */
        CURLMcode mc = CURLM_OK;
        if (x->cookies && curl_easy_setopt(x->easy, CURLOPT_SHARE, f->share) != CURLE_OK) {
            mc = CURLM_OUT_OF_MEMORY;
        }
        if (mc == CURLM_OK) mc = curl_multi_add_handle(f->multi, x->easy);
        if (mc != CURLM_OK) {
            snprintf(x->errbuf, sizeof x->errbuf, "fetch: cannot start the transfer: %s",
                     curl_multi_strerror(mc));
            finish(f, x, CURLE_FAILED_INIT, false);
            continue;
        }
        x->in_multi = true;
        atomic_fetch_add(&f->active, 1);
    }
    while (cancelled) {
        ic__xfer *x = cancelled;
        cancelled = x->cancel_next;
        finish(f, x, CURLE_OK, true);
    }
    return !stopping;
}

static bool requests_pending(ic_fetch *f) {
    pthread_mutex_lock(&f->lock);
    bool pending = f->queue_head != NULL || f->cancel_pending;
    pthread_mutex_unlock(&f->lock);
    return pending;
}

static void reap_done(ic_fetch *f) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(f->multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        ic__xfer *x = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode code = msg->data.result; /* msg is invalid once the handle is removed */
        if (x) finish(f, x, code, false);
    }
}

/* Cancels everything still live, after the last request was taken. */
static void cancel_all(ic_fetch *f) {
    for (;;) {
        pthread_mutex_lock(&f->lock);
        ic__xfer *x = f->live;
        if (x) x->cancel_taken = true;
        pthread_mutex_unlock(&f->lock);
        if (!x) break;
        finish(f, x, CURLE_OK, true);
    }
}

static void release(ic_fetch *f) {
    for (size_t i = 0; i < f->idle_count; i++) curl_easy_cleanup(f->idle[i]);
    if (f->multi) curl_multi_cleanup(f->multi);
    if (f->share) curl_share_cleanup(f->share);
    ic__body_pool_close(f->bodies);
    ic__conn_watch_destroy(f->conns);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static void *engine_main(void *arg) {
    ic_fetch *f = arg;
    /* A peer closing a socket must give EPIPE here, never kill the process. */
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
    pthread_mutex_lock(&f->lock);
    f->loop_thread = pthread_self();
    f->loop_running = true;
    pthread_mutex_unlock(&f->lock);

    while (take_requests(f)) {
        int running = 0;
        curl_multi_perform(f->multi, &running);
        reap_done(f);
        /* Callbacks that started or cancelled transfers sent no wakeup: go round again. */
        if (requests_pending(f)) continue;
        /* curl shortens the wait to its own next timeout; wakeups end it early. */
        curl_multi_poll(f->multi, NULL, 0, 10000, NULL);
    }
    cancel_all(f);

    pthread_mutex_lock(&f->lock);
    bool self_destroy = f->self_destroy;
    pthread_mutex_unlock(&f->lock);
    if (self_destroy) {
        pthread_detach(pthread_self());
        release(f);
    }
    return NULL;
}

/* ---- Public API. ---- */

ic_status ic_fetch_create(const ic_fetch_config *cfg, ic_fetch **out, ic_error *err) {
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: no place for the engine");
    *out = NULL;
    ic_fetch_config defaults;
    if (!cfg) {
        ic_fetch_config_init(&defaults);
        cfg = &defaults;
    }
    pthread_once(&g_curl_once, curl_init_once);
    if (g_curl_init_result != CURLE_OK) {
        return ic__set_error(err, IC_ERR_INTERNAL, "fetch: curl_global_init failed: %s",
                            curl_easy_strerror(g_curl_init_result));
    }
    ic_fetch *f = calloc(1, sizeof *f);
    if (!f) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot allocate the engine");
    pthread_mutex_init(&f->lock, NULL);
    f->progress_interval_ms = cfg->progress_interval_ms;
    snprintf(f->thread_name, sizeof f->thread_name, "%s", cfg->thread_name ? cfg->thread_name : "imagekit-fetch");
    f->multi = curl_multi_init();
    f->share = curl_share_init();
    f->bodies = ic__body_pool_create(cfg->max_pooled_body_bytes);
    f->conns = ic__conn_watch_create();
    if (!f->multi || !f->share || !f->bodies || !f->conns) {
        release(f);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot create the curl multi handle");
    }
    curl_share_setopt(f->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    curl_multi_setopt(f->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    if (cfg->max_connections) curl_multi_setopt(f->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)cfg->max_connections);
    if (cfg->max_host_connections) {
        curl_multi_setopt(f->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)cfg->max_host_connections);
    }
    if (cfg->max_idle_connections) curl_multi_setopt(f->multi, CURLMOPT_MAXCONNECTS, (long)cfg->max_idle_connections);
    int rc = pthread_create(&f->thread, NULL, engine_main, f);
    if (rc != 0) {
        release(f);
        return ic__set_error(err, IC_ERR_INTERNAL, "fetch: cannot start the engine thread: %s", strerror(rc));
    }
    /* Named here rather than by the thread itself, so the name is there when create returns. */
    (void)pthread_setname_np(f->thread, f->thread_name);
    *out = f;
    return IC_OK;
}

void ic_fetch_destroy(ic_fetch *f) {
    if (!f) return;
    pthread_mutex_lock(&f->lock);
    bool from_callback = on_engine_thread(f);
    f->stopping = true;
    f->self_destroy = from_callback;
    pthread_mutex_unlock(&f->lock);
    if (from_callback) return; /* engine_main frees f when the callback returns */
    curl_multi_wakeup(f->multi);
    pthread_join(f->thread, NULL);
    release(f);
}

ic_status ic_fetch_start(ic_fetch *f, const ic_fetch_request *req, uint64_t *id, ic_error *err) {
    if (!f || !req || !req->url || !req->callbacks.on_complete) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: a request needs an engine, a URL and on_complete");
    }
    if (req->headers == NULL && req->header_count > 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: header_count is set but headers is NULL");
    }
    pthread_mutex_lock(&f->lock);
    CURL *recycled = NULL;
    if (f->idle_count) {
        recycled = f->idle[--f->idle_count];
        atomic_fetch_sub(&f->idle_handles, 1);
    }
    pthread_mutex_unlock(&f->lock);
    ic__xfer *x;
    ic_status st = ic__xfer_create(req, recycled, f->bodies, f->conns, f->progress_interval_ms, &x, err);
    if (st != IC_OK) return st;

    pthread_mutex_lock(&f->lock);
    if (f->stopping) {
        pthread_mutex_unlock(&f->lock);
        ic__xfer_destroy(x);
        return ic__set_error(err, IC_ERR_CANCELLED, "fetch: the engine is stopping");
    }
    x->id = ++f->next_id;
    if (id) *id = x->id;
    live_link(f, x);
    if (f->queue_tail) f->queue_tail->queue_next = x;
    else f->queue_head = x;
    f->queue_tail = x;
    /* The engine thread itself (a callback) looks at the queue before it polls again. */
    bool wake = !f->wake_pending && !on_engine_thread(f);
    if (wake) f->wake_pending = true;
    atomic_fetch_add(&f->started, 1);
    atomic_fetch_add(&f->queued, 1);
    atomic_fetch_add(&f->easy_handles, 1);
    pthread_mutex_unlock(&f->lock);
    if (wake) curl_multi_wakeup(f->multi);
    return IC_OK;
}

void ic_fetch_cancel(ic_fetch *f, uint64_t id) {
    if (!f) return;
    bool wake = false;
    pthread_mutex_lock(&f->lock);
    for (ic__xfer *x = f->live; x; x = x->live_next) {
        if (x->id != id) continue;
        if (!x->cancel_requested) {
            x->cancel_requested = true;
            f->cancel_pending = true;
            wake = !f->wake_pending && !on_engine_thread(f);
            if (wake) f->wake_pending = true;
        }
        break;
    }
    pthread_mutex_unlock(&f->lock);
    if (wake) curl_multi_wakeup(f->multi);
}

void ic_fetch_get_stats(ic_fetch *f, ic_fetch_stats *stats) {
    memset(stats, 0, sizeof *stats);
    if (!f) return;
    stats->started = atomic_load(&f->started);
    stats->completed = atomic_load(&f->completed);
    stats->queued = (uint32_t)atomic_load(&f->queued);
    stats->active = (uint32_t)atomic_load(&f->active);
    stats->easy_handles = (uint32_t)atomic_load(&f->easy_handles);
    stats->idle_handles = (uint32_t)atomic_load(&f->idle_handles);
    size_t bodies = 0, bytes = 0;
    ic__body_pool_outstanding(f->bodies, &bodies, &bytes);
    stats->bodies_out = (uint32_t)bodies;
    stats->body_bytes_out = bytes;
}
