/*
 * fetch_transfer.c — one transfer: its easy handle, the curl callbacks that
 * collect the head and body, and the outcome it reports.
 *
 * Everything here except ic__xfer_create runs on the engine thread. The
 * callbacks only copy bytes and check limits; the caller's callbacks get the
 * head once (before the first body byte), the body, throttled progress and
 * one completion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/ic_common_internal.h"
#include "ic_fetch_internal.h"

/* Only these schemes, for the request and for every redirect. */
static const char k_protocols[] = "http,https";

/* First body buffer when the length is unknown. */
#define IC_FETCH_INITIAL_BODY (64u * 1024u)

/* ---- Setup (caller's thread). ---- */

static bool append_header(ic__xfer *x, const char *line) {
    struct curl_slist *next = curl_slist_append(x->header_list, line);
    if (!next) return false;
    x->header_list = next;
    return true;
}

static bool append_header_pair(ic__xfer *x, const char *name, const char *value) {
    size_t n = strlen(name) + strlen(value) + 3;
    char *line = malloc(n);
    if (!line) return false;
    snprintf(line, n, "%s: %s", name, value);
    bool ok = append_header(x, line);
    free(line);
    return ok;
}

static size_t on_curl_header(char *buf, size_t size, size_t count, void *userdata);
static size_t on_curl_write(char *buf, size_t size, size_t count, void *userdata);

/* Sets every option of the easy handle; false when libcurl refused one. */
static bool configure(ic__xfer *x, const ic_fetch_request *req) {
    CURL *e = x->easy;
    CURLcode rc = CURLE_OK;
    const char *failed = "";
#define SET(opt, val)                                                                           \
    do {                                                                                        \
        if (rc == CURLE_OK && (rc = curl_easy_setopt(e, opt, val)) != CURLE_OK) failed = #opt;  \
    } while (0)
    SET(CURLOPT_URL, req->url);
    SET(CURLOPT_PROTOCOLS_STR, k_protocols);
    SET(CURLOPT_REDIR_PROTOCOLS_STR, k_protocols);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PRIVATE, (void *)x);
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    SET(CURLOPT_HEADERFUNCTION, on_curl_header);
    SET(CURLOPT_HEADERDATA, (void *)x);
    SET(CURLOPT_WRITEFUNCTION, on_curl_write);
    SET(CURLOPT_WRITEDATA, (void *)x);
    /* Fewer, larger reads. A recycled handle that still holds its buffer (after a
     * failed transfer) refuses a new size and simply keeps the one it has. */
    (void)curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 64L * 1024L);
    if (req->method == IC_FETCH_HEAD) SET(CURLOPT_NOBODY, 1L);
    if (req->max_redirects > 0) {
        SET(CURLOPT_FOLLOWLOCATION, 1L);
        SET(CURLOPT_MAXREDIRS, (long)req->max_redirects);
    }
    if (req->connect_timeout_ms) SET(CURLOPT_CONNECTTIMEOUT_MS, (long)req->connect_timeout_ms);
    if (req->timeout_ms) SET(CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
    if (req->low_speed_bytes && req->low_speed_seconds) {
        SET(CURLOPT_LOW_SPEED_LIMIT, (long)req->low_speed_bytes);
        SET(CURLOPT_LOW_SPEED_TIME, (long)req->low_speed_seconds);
    }
    if (req->accept_encoding) SET(CURLOPT_ACCEPT_ENCODING, "");
    if (req->insecure) {
        SET(CURLOPT_SSL_VERIFYPEER, 0L);
        SET(CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (req->ca_file) SET(CURLOPT_CAINFO, req->ca_file);
    if (req->client_cert) {
        SET(CURLOPT_SSLCERT, req->client_cert);
        SET(CURLOPT_SSLCERTTYPE, "PEM");
        SET(CURLOPT_SSLKEY, req->client_key ? req->client_key : req->client_cert);
        SET(CURLOPT_SSLKEYTYPE, "PEM");
        if (req->client_key_password) SET(CURLOPT_KEYPASSWD, req->client_key_password);
    }
    if (req->cookies) SET(CURLOPT_COOKIEFILE, "");
    /* Refuses a too long Content-Length before the body (HEAD has no body to refuse). */
    if (req->method != IC_FETCH_HEAD) SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->max_body);
    if (req->range) SET(CURLOPT_RANGE, req->range);
    if (req->username) {
        SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        SET(CURLOPT_USERNAME, req->username);
        SET(CURLOPT_PASSWORD, req->password ? req->password : "");
    }
    /* Wait for an HTTP/2 connection in progress rather than open another one. */
    if (strncasecmp(req->url, "https:", 6) == 0) SET(CURLOPT_PIPEWAIT, 1L);
    if (x->header_list) SET(CURLOPT_HTTPHEADER, x->header_list);
#undef SET
    if (rc != CURLE_OK) {
        snprintf(x->message, sizeof x->message, "%s: %s", failed, curl_easy_strerror(rc));
        return false;
    }
    return true;
}

ic_status ic__xfer_create(const ic_fetch_request *req, CURL *easy, ic__body_pool *pool, ic__conn_watch *conns,
                         uint32_t progress_interval_ms, ic__xfer **out, ic_error *err) {
    *out = NULL;
    ic__xfer *x = calloc(1, sizeof *x);
    if (!x) {
        if (easy) curl_easy_cleanup(easy);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot allocate a transfer");
    }
    x->cb = req->callbacks;
    x->ctx = req->ctx;
    x->cookies = req->cookies != 0;
    x->pool = pool;
    x->max_body = req->max_body_bytes ? req->max_body_bytes : IC_FETCH_DEFAULT_MAX_BODY;
    x->buffers_body = !req->callbacks.on_body || req->keep_body;
    x->status_min = req->status_min;
    x->status_end = req->status_end;
    x->progress_interval_ms = progress_interval_ms;
    x->expected = -1;
    x->easy = easy ? easy : curl_easy_init();
    if (!x->easy) {
        free(x);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot create a curl handle");
    }
    bool ok = true;
    for (size_t i = 0; ok && i < req->header_count; i++) {
        if (!req->headers[i]) {
            ic__xfer_destroy(x);
            return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: header %zu is NULL", i);
        }
        ok = append_header(x, req->headers[i]);
    }
    if (ok && req->if_none_match) ok = append_header_pair(x, "If-None-Match", req->if_none_match);
    if (ok && req->if_modified_since)
        ok = append_header_pair(x, "If-Modified-Since", req->if_modified_since);
    if (!ok) {
        ic__xfer_destroy(x);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot copy the request headers");
    }
    ic_status guarded = ic__fetch_guard_create(x->easy, req, conns, &x->guard, err);
    if (guarded != IC_OK) {
        ic__xfer_destroy(x);
        return guarded;
    }
    if (!configure(x, req)) {
        ic_status st = ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: libcurl refused an option: %s",
                                    x->message);
        ic__xfer_destroy(x);
        return st;
    }
    *out = x;
    return IC_OK;
}

CURL *ic__xfer_take_handle(ic__xfer *x) {
    CURL *e = x->easy;
    if (!e || x->cookies) return NULL;
    x->easy = NULL;
    curl_easy_reset(e);
    return e;
}

void ic__xfer_destroy(ic__xfer *x) {
    if (!x) return;
    if (x->easy) curl_easy_cleanup(x->easy);
    ic__fetch_guard_destroy(x->guard);
    curl_slist_free_all(x->header_list);
    free(x->raw_headers);
    free(x->fields);
    ic_fetch_body_release(x->body);
    free(x);
}

/* ---- The response head. ---- */

static size_t on_curl_header(char *buf, size_t size, size_t count, void *userdata) {
    ic__xfer *x = userdata;
    size_t len = size * count;
    /* Trailers after the body are not part of the head. */
    if (x->head_ready) return len;
    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        x->raw_len = 0; /* a new response (after a redirect or a 1xx) */
        return len;
    }
    if (len == 0 || buf[0] == '\r' || buf[0] == '\n') return len;
    if (x->raw_len + len > x->raw_cap) {
        size_t cap = x->raw_cap ? x->raw_cap * 2 : 1024;
        while (cap < x->raw_len + len) cap *= 2;
        char *grown = realloc(x->raw_headers, cap);
        if (!grown) {
            x->out_of_memory = true;
            return 0;
        }
        x->raw_headers = grown;
        x->raw_cap = cap;
    }
    memcpy(x->raw_headers + x->raw_len, buf, len);
    x->raw_len += len;
    return len;
}

/* Extends `field`'s value over the continuation line [line, eol): a line that starts with a
 * space or tab continues the field above it (obsolete line folding, RFC 9112 section 5.2). The
 * line break and the white space around it become spaces, so the value reads as one. */
static void unfold(ic_fetch_header *field, char *line, const char *eol) {
    const char *start = line, *stop = eol;
    while (start < stop && ic__is_space(*start)) start++;
    while (stop > start && ic__is_space(stop[-1])) stop--;
    if (start == stop) return; /* nothing but white space */
    if (field->value_len == 0) {
        field->value = start;
    } else {
        for (char *c = (char *)field->value + field->value_len; c < start; c++) *c = ' ';
    }
    field->value_len = (size_t)(stop - field->value);
}

/* Splits the stored header lines into fields pointing into raw_headers. A folded line continues
 * the field above it; one that follows no field is ignored, as is a line without a name. */
static bool parse_fields(ic__xfer *x) {
    size_t lines = 0;
    for (size_t i = 0; i < x->raw_len; i++) lines += x->raw_headers[i] == '\n';
    if (lines == 0) return true;
    x->fields = calloc(lines, sizeof *x->fields);
    if (!x->fields) return false;
    char *p = x->raw_headers, *end = x->raw_headers + x->raw_len;
    ic_fetch_header *last = NULL; /* the field on the line above */
    while (p < end) {
        char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        if (*p == ' ' || *p == '\t') {
            if (last) unfold(last, p, eol);
            p = eol + 1;
            continue;
        }
        last = NULL;
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        if (colon && colon > p) {
            const char *v = colon + 1, *ve = eol;
            while (v < ve && ic__is_space(*v)) v++;
            while (ve > v && ic__is_space(ve[-1])) ve--;
            last = &x->fields[x->field_count++];
            last->name = p;
            last->name_len = (size_t)(colon - p);
            last->value = v;
            last->value_len = (size_t)(ve - v);
        }
        p = eol + 1;
    }
    return true;
}

static bool has_field(const ic__xfer *x, const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < x->field_count; i++) {
        if (x->fields[i].name_len == n && strncasecmp(x->fields[i].name, name, n) == 0) return true;
    }
    return false;
}

static int http_version_number(long v) {
    switch (v) {
    case CURL_HTTP_VERSION_1_0: return 10;
    case CURL_HTTP_VERSION_1_1: return 11;
    case CURL_HTTP_VERSION_2_0: return 20;
    case CURL_HTTP_VERSION_3: return 30;
    default: return 0;
    }
}

/* Room for `need` body bytes: exactly that when `exact` (a known length), else by doubling. */
static bool reserve_body(ic__xfer *x, size_t need, bool exact) {
    if (need <= x->body_cap) return true;
    size_t cap = need;
    if (!exact) {
        cap = x->body_cap ? x->body_cap : IC_FETCH_INITIAL_BODY;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        if (cap > x->max_body && need <= x->max_body) cap = (size_t)x->max_body;
    }
    uint8_t *grown = x->body ? ic__body_resize(x->body, cap) : ic__body_alloc(x->pool, cap);
    if (!grown) return false;
    x->body = grown;
    x->body_cap = ic__body_capacity(grown);
    return true;
}

/*
 * Builds the head of the final response and offers it to on_head. Returns
 * false when the transfer must stop (on_head refused it, or no memory).
 */
static bool deliver_head(ic__xfer *x) {
    x->head_ready = true;
    if (!parse_fields(x)) {
        x->out_of_memory = true;
        return false;
    }
    long status = 0, version = 0;
    curl_off_t length = -1;
    char *url = NULL;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(x->easy, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
    x->head.status = (int)status;
    x->head.http_version = http_version_number(version);
    x->head.headers = x->fields;
    x->head.header_count = x->field_count;
    x->head.content_length = length;
    x->head.url = url ? url : "";
    /* With a content encoding, Content-Length counts the encoded bytes. */
    x->expected = has_field(x, "content-encoding") ? -1 : length;
    /* libcurl takes "HTTP/22 200" for status 2 and "HTTP/2222…" for 2222… (or -1 past
     * INT_MAX): a status is three digits, anything else is no HTTP response. */
    if (status < 100 || status > 999) {
        x->bad_status = true;
        return false;
    }
    if (x->status_end > 0 && (status < x->status_min || status >= x->status_end)) {
        x->reject_status = true;
    }
    if (x->cb.on_head && x->cb.on_head(x->ctx, &x->head) != 0) {
        x->aborted = true;
        return false;
    }
    if (!x->reject_status && x->buffers_body && x->expected > 0 && (uint64_t)x->expected <= x->max_body &&
        !reserve_body(x, (size_t)x->expected, true)) {
        x->out_of_memory = true;
        return false;
    }
    return true;
}

/* ---- The body. ---- */

static void report_progress(ic__xfer *x) {
    x->progress_sent = true;
    x->progress_reported = x->received;
    x->cb.on_progress(x->ctx, x->received, x->expected);
}

static size_t on_curl_write(char *buf, size_t size, size_t count, void *userdata) {
    ic__xfer *x = userdata;
    size_t len = size * count;
    if (!x->head_ready && !deliver_head(x)) return 0;
    if (len > x->max_body - x->received) {
        x->too_large = true;
        return 0;
    }
    x->received += len;
    if (x->reject_status) return len; /* read on so the connection can be reused */
    if (x->cb.on_body && x->cb.on_body(x->ctx, (const uint8_t *)buf, len) != 0) {
        x->aborted = true;
        return 0;
    }
    if (x->buffers_body) {
        if (!reserve_body(x, x->body_len + len, false)) {
            x->out_of_memory = true;
            return 0;
        }
        memcpy(x->body + x->body_len, buf, len);
        x->body_len += len;
    }
    if (x->cb.on_progress) {
        uint64_t now = ic__monotonic_ms();
        if (!x->progress_sent || now - x->progress_at_ms >= x->progress_interval_ms) {
            x->progress_at_ms = now;
            report_progress(x);
        }
    }
    return len;
}

/* ---- The outcome. ---- */

static ic_fetch_result result_for_code(CURLcode code) {
    switch (code) {
    case CURLE_OK: return IC_FETCH_OK;
    case CURLE_OPERATION_TIMEDOUT: return IC_FETCH_TIMEOUT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return IC_FETCH_DNS;
    case CURLE_COULDNT_CONNECT: return IC_FETCH_CONNECT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED: return IC_FETCH_TLS;
    case CURLE_FILESIZE_EXCEEDED: return IC_FETCH_TOO_LARGE;
    case CURLE_TOO_MANY_REDIRECTS: return IC_FETCH_TOO_MANY_REDIRECTS;
    case CURLE_UNSUPPORTED_PROTOCOL: return IC_FETCH_DISALLOWED_PROTOCOL;
    case CURLE_URL_MALFORMAT: return IC_FETCH_BAD_URL;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_WEIRD_SERVER_REPLY: return IC_FETCH_NETWORK;
    default: return IC_FETCH_OTHER;
    }
}

static ic_fetch_result classify(ic__xfer *x, CURLcode code) {
    if (x->out_of_memory) {
        snprintf(x->message, sizeof x->message, "fetch: out of memory while receiving the response");
        return IC_FETCH_OTHER;
    }
    if (x->too_large || code == CURLE_FILESIZE_EXCEEDED) {
        snprintf(x->message, sizeof x->message, "the response body is larger than the %llu-byte limit",
                 (unsigned long long)x->max_body);
        return IC_FETCH_TOO_LARGE;
    }
    if (x->bad_status) {
        /* No URL in a message: the caller adds it, written safely (it may hold a password). */
        snprintf(x->message, sizeof x->message, "the response has no valid status (libcurl read %d)", x->head.status);
        return IC_FETCH_NETWORK;
    }
    if (x->aborted) {
        snprintf(x->message, sizeof x->message, "the transfer was stopped by its receiver");
        return IC_FETCH_ABORTED;
    }
    const char *refusal = ic__fetch_guard_refusal(x->guard);
    if (code != CURLE_OK && refusal) {
        snprintf(x->message, sizeof x->message, "%s", refusal);
        return IC_FETCH_DESTINATION_REFUSED;
    }
    if (code == CURLE_OK) {
        if (!x->reject_status) return IC_FETCH_OK;
        snprintf(x->message, sizeof x->message, "HTTP status %d", x->head.status);
        return IC_FETCH_HTTP_STATUS;
    }
    snprintf(x->message, sizeof x->message, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(code));
    return result_for_code(code);
}

static uint64_t info_off(CURL *e, CURLINFO what) {
    curl_off_t v = 0;
    return curl_easy_getinfo(e, what, &v) == CURLE_OK && v > 0 ? (uint64_t)v : 0;
}

static void collect_metrics(ic__xfer *x, ic_fetch_metrics *m) {
    CURL *e = x->easy;
    long redirects = 0, connects = 0, header_bytes = 0;
    m->dns_us = info_off(e, CURLINFO_NAMELOOKUP_TIME_T);
    m->connect_us = info_off(e, CURLINFO_CONNECT_TIME_T);
    m->tls_us = info_off(e, CURLINFO_APPCONNECT_TIME_T);
    m->first_byte_us = info_off(e, CURLINFO_STARTTRANSFER_TIME_T);
    m->total_us = info_off(e, CURLINFO_TOTAL_TIME_T);
    m->redirect_us = info_off(e, CURLINFO_REDIRECT_TIME_T);
    curl_easy_getinfo(e, CURLINFO_REDIRECT_COUNT, &redirects);
    curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &connects);
    curl_easy_getinfo(e, CURLINFO_HEADER_SIZE, &header_bytes);
    m->body_bytes = x->received;
    m->wire_body_bytes = info_off(e, CURLINFO_SIZE_DOWNLOAD_T);
    m->header_bytes = header_bytes > 0 ? (uint64_t)header_bytes : 0;
    m->redirects = redirects > 0 ? (uint32_t)redirects : 0;
    m->new_connections = connects > 0 ? (uint32_t)connects : 0;
}

void ic__xfer_complete(ic__xfer *x, CURLcode code, bool cancelled) {
    ic_fetch_outcome out;
    memset(&out, 0, sizeof out);
    /* A response without a body (HEAD, 204, 304) has not shown its head yet. */
    if (!cancelled && code == CURLE_OK && !x->head_ready) (void)deliver_head(x);
    if (cancelled) {
        snprintf(x->message, sizeof x->message, "the transfer was cancelled");
        out.result = IC_FETCH_CANCELLED;
    } else {
        out.result = classify(x, code);
        out.curl_code = (int)code;
    }
    if (out.result == IC_FETCH_OK && x->cb.on_progress && (!x->progress_sent || x->progress_reported != x->received)) {
        report_progress(x);
    }
    out.message = out.result == IC_FETCH_OK ? "" : x->message;
    out.head = x->head_ready && !x->bad_status ? &x->head : NULL;
    if (out.result == IC_FETCH_OK && x->buffers_body) {
        if (x->body_cap > x->body_len + x->body_len / 4 && x->body_len > 0) {
            uint8_t *fit = ic__body_resize(x->body, x->body_len);
            if (fit) x->body = fit;
        }
        out.body = x->body;
        out.body_len = x->body_len;
        x->body = NULL;
    }
    collect_metrics(x, &out.metrics);
    x->cb.on_complete(x->ctx, &out);
    ic_fetch_body_release(out.body); /* NULL when the receiver took it */
}
