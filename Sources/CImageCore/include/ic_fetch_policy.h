/*
 * ic_fetch_policy.h — which network destinations a download may reach.
 *
 * A service that fetches URLs its users send must not let them reach the
 * machine itself, its private networks or the cloud's metadata service
 * (server-side request forgery). An ic_fetch_policy says which address
 * classes a transfer may connect to — public addresses always; loopback,
 * private and link-local ones only when allowed — plus an allow-list of host
 * names, addresses, CIDR prefixes and origins, and a deny-list of host names,
 * addresses and CIDR prefixes. Cloud metadata
 * addresses (169.254.169.254, fd00:ec2::254, …) are refused unless the
 * allow-list names them exactly.
 *
 * The fetch engine checks the policy on the address it is about to connect
 * to, after name resolution, for the first request and every redirect, and
 * again before each request sent on a reused connection (see ic_fetch.h), so
 * every spelling of an address (2130706433, 0x7f.1, [::ffff:127.0.0.1], a name
 * that resolves to 10.0.0.5) meets the same check and a refused destination
 * receives no byte. The functions below are the same checks, for callers and
 * tests that want to ask without a transfer.
 */
#ifndef IC_FETCH_POLICY_H
#define IC_FETCH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Addresses. ---- */

/** An IP address. IPv4 is held in its IPv4-mapped IPv6 form (::ffff:a.b.c.d). */
typedef struct ic_net_addr {
    /** The 16 address bytes in network order. */
    uint8_t bytes[16];
    /** 4 when the address was given as IPv4, 6 when as IPv6 (an IPv4-mapped one included). */
    uint8_t family;
} ic_net_addr;

/** Room for any address written by ic_net_addr_format, NUL included. */
#define IC_NET_ADDR_TEXT 48
/** Room for any host written by ic_net_host_normalize, NUL included. */
#define IC_NET_HOST_TEXT 256

/**
 * Parses an IP address in its usual written form: four decimal parts for IPv4
 * (192.0.2.1, no leading zeros), or IPv6 with an optional trailing IPv4 part,
 * optional brackets and an optional zone ("%eth0" or URL-encoded "%25eth0",
 * ignored). Returns false for anything else.
 */
bool ic_net_addr_parse(const char *text, size_t len, ic_net_addr *out);

/**
 * Writes `a` as text: dotted quad for IPv4, RFC 5952 form for IPv6 (lowercase,
 * longest zero run as "::", IPv4-mapped as ::ffff:a.b.c.d). Returns the length
 * written; `out` needs IC_NET_ADDR_TEXT bytes (0 and "" when cap is smaller).
 */
size_t ic_net_addr_format(const ic_net_addr *a, char *out, size_t cap);

/**
 * Reads a URL host as an address the way URL parsers and inet_aton do: IPv4
 * in one to four parts, each decimal, octal (leading 0) or hexadecimal (0x),
 * with an optional final dot (2130706433, 0x7f.1, 0177.0.0.1, 127.1), or an
 * IPv6 literal in brackets. Returns false for a host name or a malformed host.
 */
bool ic_net_host_address(const char *host, size_t len, ic_net_addr *out);

/**
 * Writes the canonical form of a URL host, for comparing hosts: an address
 * host as ic_net_addr_format writes it (IPv6 in brackets), a host name in
 * lowercase without its final dot. Names are ASCII letters, digits, '-' and
 * '_' in dot-separated labels of 1–63 bytes, at most 253 in all (convert
 * internationalised names to punycode first). Returns the length written, or
 * 0 when `host` is not a valid host (a name whose last label is a number but
 * which is no IPv4 address, like "a.0x7g", is not) or `cap` is below
 * IC_NET_HOST_TEXT.
 */
size_t ic_net_host_normalize(const char *host, size_t len, char *out, size_t cap);

/** What kind of destination an address is. The numeric values are stable. */
typedef enum ic_net_class {
    /** Reachable on the internet: anything not below. */
    IC_NET_PUBLIC = 0,
    /** This machine: 127.0.0.0/8, ::1, and the unspecified 0.0.0.0 and :: (connecting to them reaches it). */
    IC_NET_LOOPBACK = 1,
    /** Private networks: 10/8, 172.16/12, 192.168/16, CGNAT 100.64/10, IPv6 ULA fc00::/7, site-local fec0::/10, local NAT64 64:ff9b:1::/48. */
    IC_NET_PRIVATE = 2,
    /** Link-local: 169.254.0.0/16, fe80::/10. */
    IC_NET_LINK_LOCAL = 3,
    /**
     * Cloud metadata and platform endpoints: 169.254.169.254 and fd00:ec2::254 (AWS,
     * GCP, Azure, OpenStack, DigitalOcean, …), 169.254.169.253/123 and fd00:ec2::253/123
     * (AWS DNS and time), 169.254.170.2/23 and fd00:ec2::23 (AWS ECS/EKS credentials),
     * 100.100.100.200 (Alibaba), 192.0.0.192 (Oracle), 168.63.129.16 (Azure).
     */
    IC_NET_METADATA = 4,
    /** Multicast: 224.0.0.0/4, ff00::/8. */
    IC_NET_MULTICAST = 5,
    /**
     * Not a destination on any network: 0.0.0.0/8 (but 0.0.0.0), 240.0.0.0/4 and
     * broadcast, documentation (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32,
     * 3fff::/20), benchmarking 198.18/15, 192.0.0/24, 192.88.99/24, ::/96 (IPv4-compatible),
     * 100::/64, 2001::/23, 5f00::/16, and IPv6 outside 2000::/3 not named above.
     */
    IC_NET_RESERVED = 6
} ic_net_class;

/**
 * The class of `a`. IPv4 inside IPv6 is classed as the IPv4 address it carries:
 * IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
ic_net_class ic_net_addr_classify(const ic_net_addr *a);

/** A short name for a class as a sentence uses it ("loopback", "a cloud metadata address"). Never NULL. */
const char *ic_net_class_name(ic_net_class c);

/* ---- Policies. ---- */

/** An immutable, reference-counted destination policy; any thread may use it. */
typedef struct ic_fetch_policy ic_fetch_policy;

/** Bits of ic_fetch_policy_spec.allow: classes allowed besides public addresses. */
enum {
    IC_FETCH_ALLOW_LOOPBACK = 1u << 0,
    IC_FETCH_ALLOW_PRIVATE = 1u << 1,
    IC_FETCH_ALLOW_LINK_LOCAL = 1u << 2
};

/** Most entries of one list. */
#define IC_FETCH_POLICY_MAX_ENTRIES 65536u

/** Room for a refusal sentence from ic_fetch_policy_check, NUL included. */
#define IC_FETCH_POLICY_REASON 400

/**
 * What a policy allows. Entries of both lists are host names ("images.internal"),
 * wildcard names ("*.internal": every name below, not the name itself), addresses
 * ("10.0.0.5", "fd00::5") or CIDR prefixes ("10.0.0.0/8", "fd00::/8"). Such an
 * entry holds its hosts on every port and for both schemes.
 *
 * The allow-list also takes origins: "http://HOST[:PORT]" or "https://HOST[:PORT]"
 * (HOST a name, a wildcard name, an address or a bracketed IPv6 address; PORT the
 * scheme's default when absent; a trailing "/" but no user, path or query). An
 * origin allows exactly that scheme, host and port — a redirect from it to another
 * port or scheme of the same host is judged as any other destination — so an
 * operator trusting one origin of theirs writes it as an origin.
 *
 * The deny-list wins over everything. An allow-list name allows every address its
 * host resolves to; an allow-list address or prefix allows the addresses it holds,
 * whatever their class — but a cloud metadata address only when an entry is that
 * exact address (or a name resolving to it). Otherwise the address's class decides.
 * Names of the "localhost" family (RFC 6761: localhost, *.localhost, with or without
 * the final dot) count as loopback whatever they resolve to. Internationalised names
 * (any byte above 0x7F) match no entry, since the resolver sees their punycode form,
 * and a policy whose deny-list holds names refuses them.
 */
typedef struct ic_fetch_policy_spec {
    /** IC_FETCH_ALLOW_* bits; 0 (the default) allows public destinations only. */
    uint32_t allow;
    const char *const *allow_list;
    size_t allow_count;
    const char *const *deny_list;
    size_t deny_count;
} ic_fetch_policy_spec;

/** Fills spec with the default: public destinations only, empty lists. */
void ic_fetch_policy_spec_init(ic_fetch_policy_spec *spec);

/**
 * Builds a policy from `spec` (its strings are copied). Fails with
 * IC_ERR_INVALID_ARGUMENT, naming the entry, when an entry is not a host name,
 * wildcard name, address or CIDR prefix (or, in the allow-list, an origin), or a list holds more than
 * IC_FETCH_POLICY_MAX_ENTRIES entries.
 */
ic_status ic_fetch_policy_create(const ic_fetch_policy_spec *spec, ic_fetch_policy **out, ic_error *err);

/** The policy used when a request names none: public destinations only. Never freed. */
const ic_fetch_policy *ic_fetch_policy_default(void);

/** Adds a reference to `p` and returns it. */
ic_fetch_policy *ic_fetch_policy_retain(const ic_fetch_policy *p);

/** Drops a reference; the last one frees the policy. NULL is ignored. */
void ic_fetch_policy_release(const ic_fetch_policy *p);

/**
 * Whether a transfer to URL host `host` may connect to address `addr`.
 *
 * `host` is the host as a URL gives it (a name, an IPv4 address in any spelling,
 * or an IPv6 address in brackets; NULL when unknown). `addr` is the address about
 * to be connected to, or NULL when it is not known (before name resolution, or when
 * a proxy resolves it): then an address host is checked as that address and a name
 * against the lists and the localhost names only. Returns true when allowed;
 * otherwise writes why to `why` (cap bytes, IC_FETCH_POLICY_REASON is enough), e.g.
 * "destination 127.0.0.1 is loopback, which the policy does not allow".
 */
bool ic_fetch_policy_check(const ic_fetch_policy *p, const char *host, size_t host_len, const ic_net_addr *addr,
                           char *why, size_t cap);

/**
 * ic_fetch_policy_check for a URL of scheme `scheme` ("http" or "https") and port
 * `port` (the scheme's default when the URL names none), which the allow-list's
 * origins are matched against. ic_fetch_policy_check is this with no scheme and
 * port 0: then no origin matches.
 */
bool ic_fetch_policy_check_origin(const ic_fetch_policy *p, const char *scheme, const char *host, size_t host_len,
                                  int port, const ic_net_addr *addr, char *why, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* IC_FETCH_POLICY_H */
