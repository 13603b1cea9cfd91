/*
 * fuzz_head.c — a response as the fetch engine receives it: any bytes answer one
 * transfer, read by libcurl and by the engine's own callbacks (status line, header
 * lines, fields, Content-Length and Content-Encoding, the acceptable statuses, the
 * body limit, buffered or streamed bodies), then reported as the outcome.
 *
 * The transfer is the engine's own (ic__xfer_create, ic__xfer_complete, with its
 * destination checks allowing loopback), run with curl_easy_perform against a
 * listener on 127.0.0.1: once libcurl has connected, the harness accepts the
 * connection and writes the whole response into it (from libcurl's pre-request
 * callback, so one thread does everything). The first input byte picks the
 * request's options. Checked: every header field is a non-empty name without ':'
 * or line breaks and a trimmed value, a body never passes its limit, and a
 * failure always says why.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../Sources/CImageCore/fetch/ic_fetch_internal.h"
#include "fuzz_common.h"

static ic__body_pool *g_pool;
static const ic_fetch_policy *g_policy; /* loopback allowed: the request names 127.0.0.1 */
static int g_listener = -1;
static char g_url[64];

/* The response of the current input and the server end it went out on. */
static const uint8_t *g_response;
static size_t g_response_len;
static int g_server = -1;

/* libcurl is connected: take the connection and answer it in full before the request goes out. */
static int answer(void *clientp, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)clientp;
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    if (g_server < 0) {
        g_server = accept4(g_listener, NULL, NULL, SOCK_CLOEXEC);
        if (g_server < 0) __builtin_trap();
        fcntl(g_server, F_SETFL, O_NONBLOCK);
        size_t written = 0;
        while (written < g_response_len) {
            ssize_t n = write(g_server, g_response + written, g_response_len - written);
            if (n <= 0) break;
            written += (size_t)n;
        }
        shutdown(g_server, SHUT_WR);
    }
    return CURL_PREREQFUNC_OK;
}

typedef struct probe {
    uint64_t max_body;
    uint64_t streamed;
    bool completed;
} probe;

static void check_head(const ic_fetch_head *h) {
    if (h->status < 100 || h->status > 999) __builtin_trap(); /* a head without one is no response */
    if (h->header_count > 0 && !h->headers) __builtin_trap();
    for (size_t i = 0; i < h->header_count; i++) {
        const ic_fetch_header *f = &h->headers[i];
        if (f->name_len == 0 || memchr(f->name, ':', f->name_len) || memchr(f->name, '\n', f->name_len)) {
            __builtin_trap();
        }
        if (f->value_len > 0) {
            const char *v = f->value;
            char first = v[0], last = v[f->value_len - 1];
            if (first == ' ' || first == '\t' || last == ' ' || last == '\t' || last == '\r') __builtin_trap();
            if (memchr(v, '\n', f->value_len)) __builtin_trap();
        }
    }
    if (!h->url) __builtin_trap();
}

static int on_head(void *ctx, const ic_fetch_head *head) {
    (void)ctx;
    check_head(head);
    return 0;
}

static int on_body(void *ctx, const uint8_t *data, size_t len) {
    probe *p = ctx;
    volatile uint8_t sink = len ? data[0] ^ data[len - 1] : 0;
    (void)sink;
    p->streamed += len;
    if (p->streamed > p->max_body) __builtin_trap();
    return 0;
}

static void on_complete(void *ctx, ic_fetch_outcome *o) {
    probe *p = ctx;
    p->completed = true;
    if ((int)o->result < IC_FETCH_OK || (int)o->result > IC_FETCH_DESTINATION_REFUSED) __builtin_trap();
    if (o->result != IC_FETCH_OK && (!o->message || o->message[0] == '\0')) __builtin_trap();
    if (o->head) check_head(o->head);
    if (o->body_len > p->max_body || (o->body_len > 0 && !o->body)) __builtin_trap();
    if (o->body_len > 0) {
        volatile uint8_t sink = o->body[0] ^ o->body[o->body_len - 1];
        (void)sink;
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    g_pool = ic__body_pool_create(1u << 20);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t addr_len = sizeof addr;
    g_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (g_listener < 0 || bind(g_listener, (struct sockaddr *)&addr, addr_len) != 0 || listen(g_listener, 4) != 0 ||
        getsockname(g_listener, (struct sockaddr *)&addr, &addr_len) != 0) {
        __builtin_trap();
    }
    snprintf(g_url, sizeof g_url, "http://127.0.0.1:%u/image", (unsigned)ntohs(addr.sin_port));
    ic_fetch_policy_spec spec;
    ic_fetch_policy_spec_init(&spec);
    spec.allow = IC_FETCH_ALLOW_LOOPBACK;
    ic_fetch_policy *policy = NULL;
    ic_error err;
    if (!g_pool || ic_fetch_policy_create(&spec, &policy, &err) != IC_OK) __builtin_trap();
    g_policy = policy;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t knobs = data[0];
    g_response = data + 1;
    g_response_len = size - 1;
    g_server = -1;

    probe p = {.max_body = (knobs & 1) ? 64 : 4096};
    ic_fetch_request req;
    ic_fetch_request_init(&req);
    req.url = g_url;
    req.method = (knobs & 2) ? IC_FETCH_HEAD : IC_FETCH_GET;
    req.accept_encoding = (knobs >> 2) & 1;
    req.max_body_bytes = p.max_body;
    req.max_redirects = 0; /* a redirect is the answer: there is no second connection */
    req.timeout_ms = 2000;
    if ((knobs >> 3) & 1) req.status_min = req.status_end = 0;
    req.policy = g_policy;
    req.callbacks.on_head = (knobs >> 4) & 1 ? on_head : NULL;
    req.callbacks.on_body = (knobs >> 5) & 1 ? on_body : NULL;
    req.callbacks.on_complete = on_complete;
    req.ctx = &p;

    ic__xfer *x = NULL;
    ic_error err;
    if (ic__xfer_create(&req, NULL, g_pool, NULL, 100, &x, &err) != IC_OK) __builtin_trap();
    curl_easy_setopt(x->easy, CURLOPT_PREREQFUNCTION, answer);
    curl_easy_setopt(x->easy, CURLOPT_FORBID_REUSE, 1L);
    CURLcode code = curl_easy_perform(x->easy);
    ic__xfer_complete(x, code, false);
    if (!p.completed) __builtin_trap();
    ic__xfer_destroy(x);
    if (g_server >= 0) close(g_server);
    return 0;
}
