/*
 * ic_fetch.h — HTTP(S) downloads on one libcurl multi thread.
 *
 * An ic_fetch engine owns one thread that runs curl_multi_poll over every
 * transfer in flight. Any thread may start or cancel transfers: requests go
 * through a locked queue and curl_multi_wakeup, so the engine thread picks
 * them up at once. Connections are reused, HTTP/2 streams are multiplexed
 * when the server offers it, and only http and https are allowed, for the
 * request and for every redirect.
 *
 * Callbacks run on the engine thread with the request's ctx. They must do
 * little (append bytes, signal a waiter) and never block: every transfer of
 * the engine waits while one runs. on_complete is called exactly once for
 * every transfer ic_fetch_start accepted, and no callback of that transfer
 * follows it.
 */
#ifndef IC_FETCH_H
#define IC_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"
#include "ic_fetch_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A download engine: one thread, one curl multi handle, one connection pool. */
typedef struct ic_fetch ic_fetch;

/** Engine-wide settings. Initialise with ic_fetch_config_init. */
typedef struct ic_fetch_config {
    /** Most connections open at once, all hosts together (0: no limit). */
    uint32_t max_connections;
    /** Most connections open at once to one host (0: no limit). */
    uint32_t max_host_connections;
    /** Most idle connections kept for reuse (0: libcurl's default). */
    uint32_t max_idle_connections;
    /**
     * Most bytes of released body buffers kept for reuse (default 8 MiB; 0 keeps
     * none). Reused buffers spare the page faults of fresh memory.
     */
    size_t max_pooled_body_bytes;
    /** Shortest interval between two on_progress calls of a transfer, in ms. Default 100. */
    uint32_t progress_interval_ms;
    /** Name of the engine thread (Linux keeps 15 bytes). Default "imagekit-fetch". */
    const char *thread_name;
} ic_fetch_config;

/** Fills cfg with the defaults. */
void ic_fetch_config_init(ic_fetch_config *cfg);

/** How a transfer ended. The numeric values are stable. */
typedef enum ic_fetch_result {
    /** A response arrived whole and its status is acceptable. */
    IC_FETCH_OK = 0,
    /** ic_fetch_cancel (or ic_fetch_destroy) stopped the transfer. */
    IC_FETCH_CANCELLED = 1,
    /** A timeout fired: connect, total, or too slow for the low-speed limit. */
    IC_FETCH_TIMEOUT = 2,
    /** The host name could not be resolved. */
    IC_FETCH_DNS = 3,
    /** No connection could be made (refused, unreachable). */
    IC_FETCH_CONNECT = 4,
    /** The TLS handshake or certificate verification failed. */
    IC_FETCH_TLS = 5,
    /** The body is larger than max_body_bytes (by Content-Length or by count). */
    IC_FETCH_TOO_LARGE = 6,
    /** More redirects than max_redirects. */
    IC_FETCH_TOO_MANY_REDIRECTS = 7,
    /** The URL or a redirect uses a scheme other than http or https. */
    IC_FETCH_DISALLOWED_PROTOCOL = 8,
    /** The final status is outside [status_min, status_end). The body is discarded. */
    IC_FETCH_HTTP_STATUS = 9,
    /** The connection broke: reset, closed early, body shorter than Content-Length, bad framing,
     *  a status line without a three-digit status. */
    IC_FETCH_NETWORK = 10,
    /** The URL cannot be parsed. */
    IC_FETCH_BAD_URL = 11,
    /** on_head or on_body asked to stop. */
    IC_FETCH_ABORTED = 12,
    /** Any other failure (see curl_code and message). */
    IC_FETCH_OTHER = 13,
    /** The destination policy refused the address (or host) to connect to; nothing was sent to it. */
    IC_FETCH_DESTINATION_REFUSED = 14
} ic_fetch_result;

/** A short constant name for a result, e.g. "timeout". Never NULL. */
const char *ic_fetch_result_name(ic_fetch_result result);

/** HTTP method of a request. */
typedef enum ic_fetch_method {
    IC_FETCH_GET = 0,
    IC_FETCH_HEAD = 1
} ic_fetch_method;

/** One response header; neither string is NUL-terminated. */
typedef struct ic_fetch_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} ic_fetch_header;

/** The head of the final response (after redirects). Valid only during the callback. */
typedef struct ic_fetch_head {
    /** HTTP status, e.g. 200. */
    int status;
    /** 10, 11, 20 or 30 for HTTP/1.0, 1.1, 2 and 3. */
    int http_version;
    /** Headers in the order received (repeated names stay repeated). */
    const ic_fetch_header *headers;
    size_t header_count;
    /** Content-Length, or -1 when the response has none. */
    int64_t content_length;
    /** The URL that answered (the last redirect's target), NUL-terminated. */
    const char *url;
} ic_fetch_head;

/** Timing and size figures of one transfer (from curl_easy_getinfo). Times are µs from the start. */
typedef struct ic_fetch_metrics {
    /** Name resolved. */
    uint64_t dns_us;
    /** TCP connected. */
    uint64_t connect_us;
    /** TLS handshake done (0 for plain HTTP or a reused connection). */
    uint64_t tls_us;
    /** First response byte received. */
    uint64_t first_byte_us;
    /** Whole transfer, redirects included. */
    uint64_t total_us;
    /** Time spent on redirects before the final request. */
    uint64_t redirect_us;
    /** Body bytes received (after content decoding). */
    uint64_t body_bytes;
    /** Body bytes as they came over the wire (before content decoding). */
    uint64_t wire_body_bytes;
    /** Header bytes received, all responses together. */
    uint64_t header_bytes;
    /** Redirects followed. */
    uint32_t redirects;
    /** New connections opened (0 when an existing connection was reused). */
    uint32_t new_connections;
} ic_fetch_metrics;

/** What on_complete receives. */
typedef struct ic_fetch_outcome {
    ic_fetch_result result;
    /** The CURLcode behind the result (0 when curl itself reported success). */
    int curl_code;
    /** A sentence explaining a failure ("" on success). Valid only during the callback. */
    const char *message;
    /** The final response head, or NULL when none arrived. */
    const ic_fetch_head *head;
    /**
     * The body when the request had no on_body callback (or set keep_body): body_len bytes. To
     * keep it, copy the pointer and set body to NULL; release it later (from
     * any thread, also after ic_fetch_destroy) with ic_fetch_body_release.
     * Otherwise the engine releases it after the callback.
     */
    uint8_t *body;
    size_t body_len;
    ic_fetch_metrics metrics;
} ic_fetch_outcome;

/** Callbacks of one transfer; all run on the engine thread with the request's ctx. */
typedef struct ic_fetch_callbacks {
    /**
     * Optional: the final response head, before its first body byte (or at
     * the end when there is no body). Return 0 to go on, non-zero to stop the
     * transfer with IC_FETCH_ABORTED.
     */
    int (*on_head)(void *ctx, const ic_fetch_head *head);
    /**
     * Optional: the body as it arrives, in place of buffering it (or as well,
     * with the request's keep_body). Return 0 to go on, non-zero to stop with
     * IC_FETCH_ABORTED. Not called for a status outside the acceptable range.
     * max_body_bytes holds for the running total whether or not the body is
     * kept, and a body shorter than its Content-Length still fails with
     * IC_FETCH_NETWORK.
     */
    int (*on_body)(void *ctx, const uint8_t *data, size_t len);
    /** Optional: body bytes so far and the expected total (-1 unknown), throttled. */
    void (*on_progress)(void *ctx, uint64_t received, int64_t expected);
    /** Required: the end of the transfer. The outcome may be modified (to take the body). */
    void (*on_complete)(void *ctx, ic_fetch_outcome *outcome);
} ic_fetch_callbacks;

/** Default for ic_fetch_request.max_body_bytes: 64 MiB. */
#define IC_FETCH_DEFAULT_MAX_BODY (64ull * 1024 * 1024)
/** Default for ic_fetch_request.max_redirects. */
#define IC_FETCH_DEFAULT_MAX_REDIRECTS 5

/** One request. Initialise with ic_fetch_request_init; ic_fetch_start copies every string. */
typedef struct ic_fetch_request {
    /** http:// or https:// URL. */
    const char *url;
    ic_fetch_method method;
    /** Extra request headers as "Name: value" lines ("Name:" removes a header curl adds). */
    const char *const *headers;
    size_t header_count;
    /** Connect timeout, ms (0: libcurl's 300 s). */
    uint32_t connect_timeout_ms;
    /** Whole-transfer timeout, ms (0: none). */
    uint32_t timeout_ms;
    /** Abort when slower than low_speed_bytes per second for low_speed_seconds (0: off). */
    uint32_t low_speed_bytes;
    uint32_t low_speed_seconds;
    /** Most redirects to follow (default 5; 0: report the redirect response itself). */
    uint32_t max_redirects;
    /** Non-zero: advertise and decode every content encoding libcurl supports (gzip, br, …). */
    int accept_encoding;
    /** Non-zero: skip TLS certificate and host name verification. */
    int insecure;
    /** PEM file of CA certificates to verify against, in place of the system's (NULL: system). */
    const char *ca_file;
    /** Non-zero: send and store cookies in the engine's cookie jar. */
    int cookies;
    /** Largest body accepted, bytes (default 64 MiB; 0 also means the default). */
    uint64_t max_body_bytes;
    /** Acceptable statuses: [status_min, status_end). Both 0: any status. Default [200, 300). */
    int status_min;
    int status_end;
    /** Optional Range, If-None-Match and If-Modified-Since values (NULL: not sent). */
    const char *range;
    const char *if_none_match;
    const char *if_modified_since;
    /** Optional basic-auth credentials (sent only to the request's host). */
    const char *username;
    const char *password;
    /**
     * Optional TLS client certificate: a PEM file holding the certificate (and the
     * key, unless client_key names another PEM file), and the key's password.
     */
    const char *client_cert;
    const char *client_key;
    const char *client_key_password;
    /**
     * Which destinations the transfer may connect to, checked on every address it
     * connects to, for the request and every redirect (retained by ic_fetch_start).
     * NULL: ic_fetch_policy_default(), public addresses only.
     */
    const ic_fetch_policy *policy;
    /**
     * Optional proxy URL ("http://proxy.internal:3128"). NULL: no proxy, and the
     * environment's proxy variables are ignored. Through a proxy the policy sees only
     * the URL's host (an address host by its class, a name by the lists): the proxy
     * resolves names and must refuse internal destinations itself.
     */
    const char *proxy;
    /**
     * Optional "HOST:PORT:ADDRESS[,ADDRESS…]" entries (libcurl's CURLOPT_RESOLVE):
     * connect to these addresses for HOST:PORT instead of resolving it. The policy
     * checks them like resolved ones. They stay in the engine's DNS cache, so later
     * transfers to HOST:PORT use them too.
     */
    const char *const *resolve;
    size_t resolve_count;
    ic_fetch_callbacks callbacks;
    /**
     * With an on_body callback: non-zero also gathers the body and hands it to
     * on_complete (outcome.body), as without on_body. 0 (the default): a
     * request with on_body keeps nothing.
     */
    int keep_body;
    void *ctx;
} ic_fetch_request;

/** Fills req with the defaults (GET, 5 redirects, 64 MiB cap, statuses [200, 300)). */
void ic_fetch_request_init(ic_fetch_request *req);

/** Releases a body taken from an ic_fetch_outcome (NULL is ignored). */
void ic_fetch_body_release(uint8_t *body);

/** Counters for tests and metrics. */
typedef struct ic_fetch_stats {
    /** Transfers ic_fetch_start accepted. */
    uint64_t started;
    /** on_complete calls made. */
    uint64_t completed;
    /** Transfers submitted but not yet handed to curl. */
    uint32_t queued;
    /** Transfers in the curl multi handle. */
    uint32_t active;
    /** curl easy handles held by transfers (queued or active). */
    uint32_t easy_handles;
    /** curl easy handles kept for reuse by later transfers (released by ic_fetch_destroy). */
    uint32_t idle_handles;
    /** Bodies handed to receivers and not yet released with ic_fetch_body_release. */
    uint32_t bodies_out;
    /** Bytes of body buffers allocated and not yet released: those being filled by
     * transfers and those handed out (idle pooled buffers are not counted). */
    uint64_t body_bytes_out;
} ic_fetch_stats;

/** Starts an engine and its thread. cfg may be NULL for the defaults. */
ic_status ic_fetch_create(const ic_fetch_config *cfg, ic_fetch **out, ic_error *err);

/**
 * Stops the engine: every transfer still running completes with
 * IC_FETCH_CANCELLED, then the thread, the connections and the handles are
 * released. Called from a callback (on the engine thread itself), the engine
 * finishes stopping once the callback returns.
 */
void ic_fetch_destroy(ic_fetch *fetch);

/**
 * Queues a transfer. On success *id names it for ic_fetch_cancel and
 * on_complete will be called exactly once (possibly before this returns).
 * Fails (and calls nothing) on a bad request or once the engine is stopping.
 */
ic_status ic_fetch_start(ic_fetch *fetch, const ic_fetch_request *req, uint64_t *id, ic_error *err);

/**
 * Cancels a transfer: it completes with IC_FETCH_CANCELLED soon, on the
 * engine thread, and its connection is closed (HTTP/1) or its stream reset
 * (HTTP/2). Does nothing if the transfer has already completed.
 */
void ic_fetch_cancel(ic_fetch *fetch, uint64_t id);

/** Reads the engine's counters. */
void ic_fetch_get_stats(ic_fetch *fetch, ic_fetch_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* IC_FETCH_H */
