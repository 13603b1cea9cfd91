/*
 * fetch_policy.c — destination policies: the lists a policy is built from and
 * the decision whether a host and an address may be reached.
 *
 * A policy never changes after ic_fetch_policy_create, so transfers on the
 * engine thread read it without a lock; only its reference count moves.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/ic_common_internal.h"
#include "ic_fetch_policy.h"

/* An address prefix; `bits` counts in the 128-bit space (IPv4 /n is 96 + n). */
typedef struct policy_prefix {
    uint8_t bytes[16];
    uint8_t bits;
} policy_prefix;

/* A host name, or with `wildcard` every name below it ("*.internal" holds "internal"). */
typedef struct policy_name {
    char *name;
    size_t len;
    bool wildcard;
} policy_name;

/* An origin: one scheme, one host (a name, a wildcard name or an address) and one port. */
typedef struct policy_origin {
    bool https;
    uint16_t port;
    bool is_address;
    ic_net_addr address; /* when is_address */
    policy_name name;    /* otherwise */
} policy_origin;

typedef struct policy_list {
    policy_prefix *prefixes;
    size_t prefix_count;
    policy_name *names;
    size_t name_count;
    policy_origin *origins; /* allow-list only */
    size_t origin_count;
} policy_list;

struct ic_fetch_policy {
    atomic_size_t refs;
    bool is_static; /* the default policy: never counted, never freed */
    uint32_t allow;
    policy_list allowed;
    policy_list denied;
};

static ic_fetch_policy g_default_policy = {.is_static = true};

void ic_fetch_policy_spec_init(ic_fetch_policy_spec *spec) {
    memset(spec, 0, sizeof *spec);
}

const ic_fetch_policy *ic_fetch_policy_default(void) {
    return &g_default_policy;
}

static void list_free(policy_list *l) {
    for (size_t i = 0; i < l->name_count; i++) free(l->names[i].name);
    for (size_t i = 0; i < l->origin_count; i++) free(l->origins[i].name.name);
    free(l->origins);
    free(l->names);
    free(l->prefixes);
}

ic_fetch_policy *ic_fetch_policy_retain(const ic_fetch_policy *p) {
    ic_fetch_policy *mp = (ic_fetch_policy *)p;
    if (mp && !mp->is_static) atomic_fetch_add(&mp->refs, 1);
    return mp;
}

void ic_fetch_policy_release(const ic_fetch_policy *p) {
    ic_fetch_policy *mp = (ic_fetch_policy *)p;
    if (!mp || mp->is_static) return;
    if (atomic_fetch_sub(&mp->refs, 1) != 1) return;
    list_free(&mp->allowed);
    list_free(&mp->denied);
    free(mp);
}

/* ---- Building. ---- */

/* Reads "ADDRESS/BITS" or a bare address (all bits) into a prefix. */
static bool parse_prefix(const char *entry, size_t len, policy_prefix *out) {
    const char *slash = memchr(entry, '/', len);
    size_t addr_len = slash ? (size_t)(slash - entry) : len;
    ic_net_addr a;
    if (!ic_net_addr_parse(entry, addr_len, &a)) return false;
    unsigned max = a.family == 4 ? 32 : 128, bits = max;
    if (slash) {
        const char *d = slash + 1, *end = entry + len;
        if (d == end || end - d > 3) return false;
        bits = 0;
        for (; d < end; d++) {
            if (*d < '0' || *d > '9') return false;
            bits = bits * 10 + (unsigned)(*d - '0');
        }
        if (bits > max) return false;
    }
    if (a.family == 4) bits += 96;
    /* Host bits are cleared, so 10.1.2.3/8 reads as 10.0.0.0/8. */
    for (unsigned i = 0; i < 16; i++) {
        unsigned keep = bits > 8 * i ? bits - 8 * i : 0;
        if (keep < 8) a.bytes[i] &= (uint8_t)(0xFF00u >> keep);
    }
    memcpy(out->bytes, a.bytes, 16);
    out->bits = (uint8_t)bits;
    return true;
}

/* Reads "name" or "*.name" into a lowercase name without its final dot. */
static bool parse_name(const char *entry, size_t len, policy_name *out) {
    bool wildcard = len > 2 && entry[0] == '*' && entry[1] == '.';
    if (wildcard) {
        entry += 2;
        len -= 2;
    }
    char text[IC_NET_HOST_TEXT];
    ic_net_addr a;
    size_t n = ic_net_host_normalize(entry, len, text, sizeof text);
    /* Addresses are prefixes, not names; a wildcard over an address means nothing. */
    if (n == 0 || ic_net_host_address(entry, len, &a)) return false;
    out->name = malloc(n + 1);
    if (!out->name) return false;
    memcpy(out->name, text, n + 1);
    out->len = n;
    out->wildcard = wildcard;
    return true;
}

/* Whether `entry` is written as an origin ("http://…" or "https://…"). */
static bool is_origin_entry(const char *entry, size_t len) {
    return (len > 7 && strncasecmp(entry, "http://", 7) == 0) || (len > 8 && strncasecmp(entry, "https://", 8) == 0);
}

/*
 * Reads "http://HOST[:PORT][/]" or "https://HOST[:PORT][/]" (HOST a name, a
 * "*.name" wildcard, an address, an IPv6 address in brackets; PORT 1-65535,
 * the scheme's when absent). No user, path, query or fragment.
 */
static bool parse_origin(const char *entry, size_t len, policy_origin *out) {
    memset(out, 0, sizeof *out);
    out->https = len > 8 && strncasecmp(entry, "https://", 8) == 0;
    const char *p = entry + (out->https ? 8 : 7), *end = entry + len;
    if (end > p && end[-1] == '/') end--;
    for (const char *c = p; c < end; c++) {
        if (*c == '/' || *c == '?' || *c == '#' || *c == '@' || *c == '\\') return false;
    }
    const char *host_end;
    if (p < end && *p == '[') {
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (!close) return false;
        host_end = close + 1;
    } else {
        host_end = memchr(p, ':', (size_t)(end - p));
        if (!host_end) host_end = end;
    }
    unsigned port = out->https ? 443 : 80;
    if (host_end < end) {
        if (*host_end != ':' || end - host_end < 2 || end - host_end > 6) return false;
        port = 0;
        for (const char *d = host_end + 1; d < end; d++) {
            if (*d < '0' || *d > '9') return false;
            port = port * 10 + (unsigned)(*d - '0');
        }
        if (port == 0 || port > 65535) return false;
    }
    out->port = (uint16_t)port;
    size_t host_len = (size_t)(host_end - p);
    if (host_len == 0 || host_len >= IC_NET_HOST_TEXT) return false;
    if (ic_net_host_address(p, host_len, &out->address)) {
        out->is_address = true;
        return true;
    }
    return parse_name(p, host_len, &out->name);
}

/* Builds one list; only with `origins` may entries be origins. */
static ic_status build_list(const char *const *entries, size_t count, const char *what, bool origins, policy_list *l,
                            ic_error *err) {
    if (count == 0) return IC_OK;
    if (!entries) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch policy: the %s has a count but no entries", what);
    if (count > IC_FETCH_POLICY_MAX_ENTRIES) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch policy: the %s has %zu entries, over the limit of %u",
                            what, count, IC_FETCH_POLICY_MAX_ENTRIES);
    }
    l->prefixes = calloc(count, sizeof *l->prefixes);
    l->names = calloc(count, sizeof *l->names);
    l->origins = origins ? calloc(count, sizeof *l->origins) : NULL;
    if (!l->prefixes || !l->names || (origins && !l->origins)) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch policy: cannot allocate the %s", what);
    for (size_t i = 0; i < count; i++) {
        const char *e = entries[i];
        if (!e) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch policy: entry %zu of the %s is NULL", i, what);
        size_t len = strlen(e);
        if (is_origin_entry(e, len)) {
            if (!origins) {
                return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                                    "fetch policy: %s entry \"%.80s\" is an origin; the %s takes host names, addresses "
                                    "and CIDR prefixes", what, e, what);
            }
            if (memchr(e, '@', len)) { /* never echoed: the user part may hold a password */
                return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                                    "fetch policy: %s entry %zu is an origin with a user part, which an origin cannot have",
                                    what, i);
            }
            if (!parse_origin(e, len, &l->origins[l->origin_count])) {
                return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                                    "fetch policy: %s entry \"%.80s\" is not an origin (scheme://host[:port], no path "
                                    "or user)", what, e);
            }
            l->origin_count++;
        } else if (len > 0 && len < IC_NET_HOST_TEXT && parse_prefix(e, len, &l->prefixes[l->prefix_count])) {
            l->prefix_count++;
        } else if (len > 0 && len < IC_NET_HOST_TEXT && parse_name(e, len, &l->names[l->name_count])) {
            l->name_count++;
        } else {
            return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                                "fetch policy: %s entry \"%.80s\" is not a host name, an IP address or a CIDR prefix",
                                what, e);
        }
    }
    return IC_OK;
}

ic_status ic_fetch_policy_create(const ic_fetch_policy_spec *spec, ic_fetch_policy **out, ic_error *err) {
    if (!spec || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch policy: no spec or no place for the policy");
    *out = NULL;
    const uint32_t known = IC_FETCH_ALLOW_LOOPBACK | IC_FETCH_ALLOW_PRIVATE | IC_FETCH_ALLOW_LINK_LOCAL;
    if (spec->allow & ~known) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "fetch policy: unknown allow bits 0x%x", spec->allow & ~known);
    }
    ic_fetch_policy *p = calloc(1, sizeof *p);
    if (!p) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "fetch policy: cannot allocate the policy");
    atomic_init(&p->refs, 1);
    p->allow = spec->allow;
    ic_status st = build_list(spec->allow_list, spec->allow_count, "allow-list", true, &p->allowed, err);
    if (st == IC_OK) st = build_list(spec->deny_list, spec->deny_count, "deny-list", false, &p->denied, err);
    if (st != IC_OK) {
        ic_fetch_policy_release(p);
        return st;
    }
    *out = p;
    return IC_OK;
}

/* ---- Deciding. ---- */

static bool name_entry_matches(const policy_name *e, const char *name, size_t len);

static bool name_matches(const policy_list *l, const char *name, size_t len) {
    for (size_t i = 0; i < l->name_count; i++) {
        if (name_entry_matches(&l->names[i], name, len)) return true;
    }
    return false;
}

static bool name_entry_matches(const policy_name *e, const char *name, size_t len) {
    if (!e->wildcard) return e->len == len && memcmp(e->name, name, len) == 0;
    return len > e->len + 1 && name[len - e->len - 1] == '.' && memcmp(name + len - e->len, e->name, e->len) == 0;
}

/*
 * Whether an origin of the list is the destination: its scheme and port, and its
 * name (`name`, empty for an address host) or its address (`a`, exactly).
 */
static bool origin_matches(const policy_list *l, const char *scheme, int port, const char *name, size_t name_len,
                           const ic_net_addr *a) {
    if (!scheme || port <= 0) return false;
    bool https = strcasecmp(scheme, "https") == 0;
    if (!https && strcasecmp(scheme, "http") != 0) return false;
    for (size_t i = 0; i < l->origin_count; i++) {
        const policy_origin *o = &l->origins[i];
        if (o->https != https || o->port != port) continue;
        if (o->is_address ? a && memcmp(a->bytes, o->address.bytes, 16) == 0
                          : name_len && name_entry_matches(&o->name, name, name_len)) {
            return true;
        }
    }
    return false;
}

/* Whether a prefix of the list holds `a`; with `exact`, only a prefix that is `a` itself. */
static bool prefix_matches(const policy_list *l, const uint8_t *a, bool exact) {
    for (size_t i = 0; i < l->prefix_count; i++) {
        const policy_prefix *e = &l->prefixes[i];
        if (exact && e->bits != 128) continue;
        unsigned whole = e->bits / 8, rest = e->bits % 8;
        if (memcmp(a, e->bytes, whole) != 0) continue;
        if (rest && ((a[whole] ^ e->bytes[whole]) & (uint8_t)(0xFF << (8 - rest)))) continue;
        return true;
    }
    return false;
}

/*
 * The IPv4 address a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address carries, mapped;
 * false for other addresses. Lists match it as well as the address itself.
 */
static bool carried_v4(const uint8_t *a, uint8_t out[16]) {
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
    const uint8_t *v4;
    if (memcmp(a, nat64, 12) == 0) v4 = a + 12;
    else if (a[0] == 0x20 && a[1] == 0x02) v4 = a + 2;
    else return false;
    memset(out, 0, 10);
    out[10] = out[11] = 0xFF;
    memcpy(out + 12, v4, 4);
    return true;
}

static bool list_has_address(const policy_list *l, const ic_net_addr *a, bool exact) {
    uint8_t inner[16];
    return prefix_matches(l, a->bytes, exact) || (carried_v4(a->bytes, inner) && prefix_matches(l, inner, exact));
}

/* RFC 6761: "localhost" and names below it are this machine. */
static bool is_localhost_name(const char *name, size_t len) {
    static const char k[] = "localhost";
    const size_t k_len = sizeof k - 1;
    if (len < k_len || memcmp(name + len - k_len, k, k_len) != 0) return false;
    return len == k_len || name[len - k_len - 1] == '.';
}

static bool class_allowed(const ic_fetch_policy *p, ic_net_class c) {
    switch (c) {
    case IC_NET_PUBLIC: return true;
    case IC_NET_LOOPBACK: return (p->allow & IC_FETCH_ALLOW_LOOPBACK) != 0;
    case IC_NET_PRIVATE: return (p->allow & IC_FETCH_ALLOW_PRIVATE) != 0;
    case IC_NET_LINK_LOCAL: return (p->allow & IC_FETCH_ALLOW_LINK_LOCAL) != 0;
    case IC_NET_METADATA:
    case IC_NET_MULTICAST:
    case IC_NET_RESERVED: return false;
    }
    return false;
}

bool ic_fetch_policy_check(const ic_fetch_policy *p, const char *host, size_t host_len, const ic_net_addr *addr,
                           char *why, size_t cap) {
    return ic_fetch_policy_check_origin(p, NULL, host, host_len, 0, addr, why, cap);
}

bool ic_fetch_policy_check_origin(const ic_fetch_policy *p, const char *scheme, const char *host, size_t host_len,
                                  int port, const ic_net_addr *addr, char *why, size_t cap) {
    char scratch[IC_FETCH_POLICY_REASON];
    if (!why || cap == 0) {
        why = scratch;
        cap = sizeof scratch;
    }
    why[0] = '\0';
    if (!p) p = &g_default_policy;

    /* The host: a name (normalised), or an address in any spelling. */
    char name[IC_NET_HOST_TEXT] = "";
    size_t name_len = 0;
    ic_net_addr host_addr;
    bool host_is_addr = false;
    bool international = false;
    for (size_t i = 0; host && i < host_len; i++) international |= (unsigned char)host[i] >= 0x80;
    if (international) {
        /* The resolver sees its punycode form, which no list entry can be matched against here. */
        if (p->denied.name_count > 0) {
            snprintf(why, cap,
                     "destination host \"%.*s\" is an internationalised name, which a deny-list of names cannot check",
                     (int)(host_len > 200 ? 200 : host_len), host);
            return false;
        }
        snprintf(name, sizeof name, "%.*s", (int)(host_len > 200 ? 200 : host_len), host);
    } else if (host && host_len > 0) {
        host_is_addr = ic_net_host_address(host, host_len, &host_addr);
        name_len = ic_net_host_normalize(host, host_len, name, sizeof name);
        if (name_len == 0) {
            snprintf(why, cap, "destination host \"%.*s\" is not a valid host name",
                     (int)(host_len > 200 ? 200 : host_len), host);
            return false;
        }
        if (host_is_addr) name_len = 0; /* names below are host names only */
    }
    const ic_net_addr *a = addr ? addr : (host_is_addr ? &host_addr : NULL);

    /* How the destination reads in a sentence: the address, and the name it came from. */
    char shown[IC_NET_ADDR_TEXT + IC_NET_HOST_TEXT + 8];
    char addr_text[IC_NET_ADDR_TEXT] = "";
    if (a) ic_net_addr_format(a, addr_text, sizeof addr_text);
    if (a && name[0] && !host_is_addr) snprintf(shown, sizeof shown, "%s (%s)", addr_text, name);
    else snprintf(shown, sizeof shown, "%s", a ? addr_text : name);
    if (international) name_len = 0; /* shown, never matched */

    if ((name_len && name_matches(&p->denied, name, name_len)) || (a && list_has_address(&p->denied, a, false))) {
        snprintf(why, cap, "destination %s is on the policy's deny-list", shown);
        return false;
    }
    if (name_len && name_matches(&p->allowed, name, name_len)) return true;
    if (origin_matches(&p->allowed, scheme, port, name, name_len, a)) return true;
    if (!a && !(name_len && is_localhost_name(name, name_len))) return true; /* checked again once resolved */

    ic_net_class c = a ? ic_net_addr_classify(a) : IC_NET_LOOPBACK;
    if (name_len && is_localhost_name(name, name_len) && c != IC_NET_LOOPBACK) c = IC_NET_LOOPBACK;
    if (a && c == IC_NET_METADATA) {
        if (list_has_address(&p->allowed, a, true)) return true;
        snprintf(why, cap, "destination %s is %s, which the policy allows only when its allow-list names it",
                 shown, ic_net_class_name(c));
        return false;
    }
    if ((a && list_has_address(&p->allowed, a, false)) || class_allowed(p, c)) return true;
    snprintf(why, cap, "destination %s is %s, which the policy does not allow", shown, ic_net_class_name(c));
    return false;
}
