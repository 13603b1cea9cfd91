/*
 * fetch_guard.c — the destination policy of one transfer, enforced through
 * libcurl's callbacks on the engine thread:
 *
 * - before a host name is resolved (CURLOPT_RESOLVER_START_FUNCTION): the host
 *   alone — deny-listed names and localhost names never reach the resolver;
 * - before a socket is opened (CURLOPT_OPENSOCKETFUNCTION): the resolved address
 *   about to be connected to, so a refused destination gets no packet at all;
 * - before each request is sent (CURLOPT_PREREQFUNCTION): the address of the
 *   connection it goes over, which also covers a connection that a transfer
 *   under another policy opened and left for reuse; there, too, a reused
 *   connection with unread input is shut down (fetch_conns.c).
 *
 * Each check reads the host of the URL being fetched now, so a redirect is
 * checked as its own destination. Through a proxy the connection is the
 * proxy's, which the operator chose: then only the host is checked (an
 * address host by its class, a name by the lists), and the proxy must refuse
 * what it resolves to internal addresses itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "../common/ic_common_internal.h"
#include "ic_fetch_internal.h"
#include "ic_fetch_policy.h"

/* A transfer reports the refusal in its message buffer whole. */
_Static_assert(sizeof(((ic__xfer *)0)->message) >= IC_FETCH_POLICY_REASON, "ic__xfer.message cannot hold a refusal");

struct ic__fetch_guard {
    CURL *easy;
    const ic_fetch_policy *policy; /* retained, or the default */
    ic__conn_watch *conns;          /* the engine's, outlives the transfer; may be NULL */
    bool via_proxy;
    struct curl_slist *resolve;
    CURLU *url;        /* reused to read the host of the current URL */
    char *last_url;    /* the URL last read, its host, scheme and port: the */
    char *last_host;   /* callbacks of one request read the same URL up to */
    char *last_scheme; /* three times */
    int last_port;
    bool refused;
    char reason[IC_FETCH_POLICY_REASON];
};

/* Keeps the first refusal: the one that explains the failure. */
static void refuse(ic__fetch_guard *g, const char *why) {
    if (g->refused) return;
    g->refused = true;
    snprintf(g->reason, sizeof g->reason, "%s", why);
}

/* Reads the host, scheme and port of the URL being fetched now (the latest redirect's); false when it cannot. */
static bool read_current(ic__fetch_guard *g) {
    char *url = NULL, *host = NULL, *scheme = NULL, *port = NULL;
    if (curl_easy_getinfo(g->easy, CURLINFO_EFFECTIVE_URL, &url) != CURLE_OK || !url) return false;
    if (g->last_url && strcmp(g->last_url, url) == 0) return true;
    bool ok = curl_url_set(g->url, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(g->url, CURLUPART_HOST, &host, 0) == CURLUE_OK && host &&
              curl_url_get(g->url, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK && scheme &&
              curl_url_get(g->url, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK && port;
    char *url_copy = ok ? strdup(url) : NULL, *host_copy = ok ? strdup(host) : NULL;
    char *scheme_copy = ok ? strdup(scheme) : NULL;
    int port_number = ok ? atoi(port) : 0;
    curl_free(host);
    curl_free(scheme);
    curl_free(port);
    if (!url_copy || !host_copy || !scheme_copy) {
        free(url_copy);
        free(host_copy);
        free(scheme_copy);
        return false;
    }
    free(g->last_url);
    free(g->last_host);
    free(g->last_scheme);
    g->last_url = url_copy;
    g->last_host = host_copy;
    g->last_scheme = scheme_copy;
    g->last_port = port_number;
    return true;
}

/* Checks the destination of the URL being fetched now (with `addr` when known). */
static bool check(ic__fetch_guard *g, const ic_net_addr *addr) {
    if (!read_current(g)) {
        refuse(g, "the destination's host cannot be read from the URL");
        return false;
    }
    char why[IC_FETCH_POLICY_REASON];
    bool allowed = ic_fetch_policy_check_origin(g->policy, g->last_scheme, g->last_host, strlen(g->last_host),
                                                g->last_port, addr, why, sizeof why);
    if (!allowed) refuse(g, why);
    return allowed;
}

static int on_resolver_start(void *resolver_state, void *reserved, void *userdata) {
    (void)resolver_state;
    (void)reserved;
    return check(userdata, NULL) ? 0 : 1;
}

static curl_socket_t on_open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    ic__fetch_guard *g = clientp;
    if (!g->via_proxy) {
        ic_net_addr a;
        if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
            const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)&address->addr;
            memset(a.bytes, 0, 10);
            a.bytes[10] = a.bytes[11] = 0xFF;
            memcpy(a.bytes + 12, &in->sin_addr, 4);
            a.family = 4;
        } else if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
            const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)&address->addr;
            memcpy(a.bytes, &in6->sin6_addr, 16);
            a.family = 6;
        } else {
            refuse(g, "the destination's address is not an IP address");
            return CURL_SOCKET_BAD;
        }
        if (!check(g, &a)) return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

static int on_prereq(void *clientp, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    ic__fetch_guard *g = clientp;
    /* Leftover input of an earlier response: libcurl resends this request over a new connection. */
    (void)ic__conn_watch_check(g->conns, local_ip, local_port, primary_ip, primary_port);
    if (g->via_proxy) return check(g, NULL) ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT;
    ic_net_addr a;
    if (!primary_ip || !ic_net_addr_parse(primary_ip, strlen(primary_ip), &a)) {
        refuse(g, "the connection's address cannot be read");
        return CURL_PREREQFUNC_ABORT;
    }
    return check(g, &a) ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT;
}

ic_status ic__fetch_guard_create(CURL *easy, const ic_fetch_request *req, ic__conn_watch *conns, ic__fetch_guard **out,
                                ic_error *err) {
    *out = NULL;
    ic__fetch_guard *g = calloc(1, sizeof *g);
    if (!g) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot allocate a transfer's guard");
    g->easy = easy;
    g->conns = conns;
    g->policy = req->policy ? ic_fetch_policy_retain(req->policy) : ic_fetch_policy_default();
    g->via_proxy = req->proxy && req->proxy[0];
    g->url = curl_url();
    if (!g->url) {
        ic__fetch_guard_destroy(g);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot allocate a URL parser");
    }
    if (req->resolve_count > 0 && !req->resolve) {
        ic__fetch_guard_destroy(g);
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: resolve_count is set but resolve is NULL");
    }
    for (size_t i = 0; i < req->resolve_count; i++) {
        if (!req->resolve[i]) {
            ic__fetch_guard_destroy(g);
            return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: resolve entry %zu is NULL", i);
        }
        struct curl_slist *next = curl_slist_append(g->resolve, req->resolve[i]);
        if (!next) {
            ic__fetch_guard_destroy(g);
            return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch: cannot copy the resolve entries");
        }
        g->resolve = next;
    }
    CURLcode rc = CURLE_OK;
    const char *failed = "";
#define SET(opt, val)                                                                           \
    do {                                                                                        \
        if (rc == CURLE_OK && (rc = curl_easy_setopt(easy, opt, val)) != CURLE_OK) failed = #opt; \
    } while (0)
    SET(CURLOPT_RESOLVER_START_FUNCTION, on_resolver_start);
    SET(CURLOPT_RESOLVER_START_DATA, (void *)g);
    SET(CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    SET(CURLOPT_OPENSOCKETDATA, (void *)g);
    SET(CURLOPT_PREREQFUNCTION, on_prereq);
    SET(CURLOPT_PREREQDATA, (void *)g);
    /* "" turns proxies off, the environment's (http_proxy, …) included. */
    SET(CURLOPT_PROXY, g->via_proxy ? req->proxy : "");
    /* "" sends every host through the proxy, whatever no_proxy says. */
    if (g->via_proxy) SET(CURLOPT_NOPROXY, "");
    if (g->resolve) SET(CURLOPT_RESOLVE, g->resolve);
#undef SET
    if (rc != CURLE_OK) {
        ic__fetch_guard_destroy(g);
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch: libcurl refused an option: %s: %s", failed,
                            curl_easy_strerror(rc));
    }
    *out = g;
    return IC_OK;
}

const char *ic__fetch_guard_refusal(const ic__fetch_guard *g) {
    return g && g->refused ? g->reason : NULL;
}

void ic__fetch_guard_destroy(ic__fetch_guard *g) {
    if (!g) return;
    ic_fetch_policy_release(g->policy);
    curl_slist_free_all(g->resolve);
    curl_url_cleanup(g->url);
    free(g->last_url);
    free(g->last_host);
    free(g->last_scheme);
    free(g);
}
