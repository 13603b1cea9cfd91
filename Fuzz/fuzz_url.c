/*
 * fuzz_url.c — URL hosts and destination policies: how the policy reads a host
 * (normalisation, the lenient IPv4 spellings, IPv6 literals), how it writes and
 * classes addresses, what it decides, and the lists it is built from.
 *
 * The input is split at its first NUL: the part before is a host (and, inside
 * "http://HOST/", a URL read by libcurl's parser as the engine reads it); the
 * part after is a policy's allow-list, one entry a line. Checked: normalising
 * is idempotent; an address survives writing and reading back; every refusal
 * says why; a policy that builds answers without crashing.
 */
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "fuzz_common.h"

static void check_host(const char *host, size_t len) {
    char out[IC_NET_HOST_TEXT];
    size_t n = ic_net_host_normalize(host, len, out, sizeof out);
    if (n) {
        if (n >= sizeof out || strlen(out) != n) __builtin_trap();
        char again[IC_NET_HOST_TEXT];
        size_t m = ic_net_host_normalize(out, n, again, sizeof again);
        if (m != n || memcmp(out, again, n) != 0) __builtin_trap(); /* not idempotent */
    }
    ic_net_addr a;
    if (ic_net_host_address(host, len, &a)) {
        if (n == 0) __builtin_trap(); /* an address host is a valid host */
        if ((int)ic_net_addr_classify(&a) > IC_NET_RESERVED) __builtin_trap();
        char text[IC_NET_ADDR_TEXT];
        size_t t = ic_net_addr_format(&a, text, sizeof text);
        ic_net_addr back;
        if (t == 0 || !ic_net_addr_parse(text, t, &back) || memcmp(back.bytes, a.bytes, 16) != 0) __builtin_trap();
    }
    if (ic_net_addr_parse(host, len, &a)) {
        char text[IC_NET_ADDR_TEXT];
        size_t t = ic_net_addr_format(&a, text, sizeof text);
        ic_net_addr back;
        if (t == 0 || !ic_net_addr_parse(text, t, &back) || memcmp(back.bytes, a.bytes, 16) != 0 ||
            back.family != a.family) {
            __builtin_trap();
        }
    }
}

static void check_decision(const ic_fetch_policy *p, const char *host, size_t len, const ic_net_addr *addr) {
    char why[IC_FETCH_POLICY_REASON];
    if (!ic_fetch_policy_check(p, host, len, addr, why, sizeof why) && why[0] == '\0') __builtin_trap();
}

/* The host libcurl's URL parser finds in "http://HOST/", as the engine asks for it. */
static void check_url(const ic_fetch_policy *p, const char *host, size_t len) {
    char *url = malloc(len + 9);
    if (!url) return;
    memcpy(url, "http://", 7);
    memcpy(url + 7, host, len);
    url[len + 7] = '/';
    url[len + 8] = '\0';
    CURLU *u = curl_url();
    char *found = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &found, 0) == CURLUE_OK && found) {
        check_host(found, strlen(found));
        check_decision(p, found, strlen(found), NULL);
        static const char *const addrs[] = {"127.0.0.1", "10.0.0.1", "93.184.216.34", "::1", "fd00:ec2::254"};
        for (size_t i = 0; i < sizeof addrs / sizeof *addrs; i++) {
            ic_net_addr a;
            if (!ic_net_addr_parse(addrs[i], strlen(addrs[i]), &a)) __builtin_trap();
            check_decision(p, found, strlen(found), &a);
        }
        curl_free(found);
    }
    curl_url_cleanup(u);
    free(url);
}

/* A policy whose allow-list is `text`, one entry a line (at most 64 entries). */
static ic_fetch_policy *policy_from(const char *text, size_t len) {
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *entries[64];
    size_t count = 0;
    for (char *line = copy; count < 64;) {
        entries[count++] = line;
        char *nl = strchr(line, '\n');
        if (!nl) break;
        *nl = '\0';
        line = nl + 1;
    }
    ic_fetch_policy_spec spec;
    ic_fetch_policy_spec_init(&spec);
    spec.allow = (uint32_t)len & 7u;
    spec.allow_list = entries;
    spec.allow_count = len ? count : 0;
    spec.deny_list = entries;
    spec.deny_count = len > 1 && count > 1 ? 1 : 0;
    ic_fetch_policy *p = NULL;
    ic_error err;
    ic_status st = ic_fetch_policy_create(&spec, &p, &err);
    if (st != IC_OK && (p != NULL || err.message[0] == '\0')) __builtin_trap();
    free(copy);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t host_len = nul ? (size_t)(nul - text) : size;
    check_host(text, host_len);
    ic_fetch_policy *p = nul ? policy_from(nul + 1, size - host_len - 1) : NULL;
    const ic_fetch_policy *policy = p ? p : ic_fetch_policy_default();
    ic_net_addr a;
    check_decision(policy, text, host_len, NULL);
    if (ic_net_host_address(text, host_len, &a)) check_decision(policy, NULL, 0, &a);
    check_url(policy, text, host_len);
    ic_fetch_policy_release(p);
    return 0;
}
