/*
 * fetch_addr.c — IP addresses for the destination policy: parsing (strict, and
 * the lenient spellings URL hosts allow), writing, host normalisation and the
 * class of an address.
 *
 * IPv4 is kept in its IPv4-mapped IPv6 form, so one prefix table and one
 * comparison serve both families, and ::ffff:127.0.0.1 is 127.0.0.1.
 */
#include <stdio.h>
#include <string.h>

#include "ic_fetch_policy.h"

/* ---- Small helpers. ---- */

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void set_v4(ic_net_addr *out, uint32_t v) {
    memset(out->bytes, 0, 10);
    out->bytes[10] = 0xFF;
    out->bytes[11] = 0xFF;
    out->bytes[12] = (uint8_t)(v >> 24);
    out->bytes[13] = (uint8_t)(v >> 16);
    out->bytes[14] = (uint8_t)(v >> 8);
    out->bytes[15] = (uint8_t)v;
    out->family = 4;
}

static bool is_mapped(const uint8_t *b) {
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    return memcmp(b, prefix, 12) == 0;
}

/* Strict dotted quad: four decimal parts 0–255 without leading zeros. */
static bool parse_dotted(const char *s, size_t len, uint32_t *out) {
    uint32_t v = 0;
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part > 0) {
            if (i >= len || s[i] != '.') return false;
            i++;
        }
        size_t start = i;
        uint32_t n = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 3) n = n * 10 + (uint32_t)(s[i++] - '0');
        size_t digits = i - start;
        if (digits == 0 || n > 255 || (digits > 1 && s[start] == '0')) return false;
        v = v << 8 | n;
    }
    if (i != len) return false;
    *out = v;
    return true;
}

/* IPv6 without brackets or zone. */
static bool parse_v6(const char *s, size_t len, uint8_t out[16]) {
    uint16_t groups[8];
    int count = 0, gap = -1;
    size_t i = 0;
    if (len >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
        if (i == len) {
            memset(out, 0, 16);
            return true;
        }
    } else if (len > 0 && s[0] == ':') {
        return false;
    }
    while (i < len) {
        if (count == 8) return false;
        /* A trailing IPv4 part fills the last two groups. */
        size_t j = i;
        while (j < len && s[j] != ':' && s[j] != '.') j++;
        if (j < len && s[j] == '.') {
            uint32_t v4;
            if (count > 6 || !parse_dotted(s + i, len - i, &v4)) return false;
            groups[count++] = (uint16_t)(v4 >> 16);
            groups[count++] = (uint16_t)v4;
            i = len;
            break;
        }
        size_t start = i;
        uint32_t g = 0;
        while (i < len && i - start < 4 && hex_value(s[i]) >= 0) g = g << 4 | (uint32_t)hex_value(s[i++]);
        if (i == start) return false;
        groups[count++] = (uint16_t)g;
        if (i == len) break;
        if (s[i] != ':') return false;
        i++;
        if (i < len && s[i] == ':') {
            if (gap >= 0) return false;
            gap = count;
            i++;
            if (i == len) break;
        } else if (i == len) {
            return false; /* a single trailing ':' */
        }
    }
    uint16_t full[8] = {0};
    if (gap < 0) {
        if (count != 8) return false;
        memcpy(full, groups, sizeof full);
    } else {
        if (count > 7) return false;
        for (int k = 0; k < gap; k++) full[k] = groups[k];
        for (int k = gap; k < count; k++) full[8 - (count - k)] = groups[k];
    }
    for (int k = 0; k < 8; k++) {
        out[2 * k] = (uint8_t)(full[k] >> 8);
        out[2 * k + 1] = (uint8_t)full[k];
    }
    return true;
}

/* Drops brackets and a zone ("%eth0", "%25eth0"); false when brackets do not pair. */
static bool strip_v6_decoration(const char **s, size_t *len) {
    const char *p = *s;
    size_t n = *len;
    if (n > 0 && p[0] == '[') {
        if (n < 2 || p[n - 1] != ']') return false;
        p++;
        n -= 2;
    }
    const char *zone = memchr(p, '%', n);
    if (zone) {
        size_t at = (size_t)(zone - p);
        /* In a URL the '%' is itself encoded: "%25eth0". */
        size_t id = n - at >= 3 && zone[1] == '2' && zone[2] == '5' ? 3 : 1;
        if (n - at <= id) return false; /* an empty zone */
        n = at;
    }
    *s = p;
    *len = n;
    return true;
}

bool ic_net_addr_parse(const char *text, size_t len, ic_net_addr *out) {
    if (!text || !out || len == 0) return false;
    uint32_t v4;
    if (memchr(text, ':', len) == NULL) {
        if (!parse_dotted(text, len, &v4)) return false;
        set_v4(out, v4);
        return true;
    }
    const char *s = text;
    size_t n = len;
    if (!strip_v6_decoration(&s, &n) || !parse_v6(s, n, out->bytes)) return false;
    out->family = 6;
    return true;
}

size_t ic_net_addr_format(const ic_net_addr *a, char *out, size_t cap) {
    if (!out || cap == 0) return 0;
    out[0] = '\0';
    if (!a || cap < IC_NET_ADDR_TEXT) return 0;
    const uint8_t *b = a->bytes;
    int n;
    if (is_mapped(b)) {
        n = snprintf(out, cap, "%s%u.%u.%u.%u", a->family == 4 ? "" : "::ffff:", b[12], b[13], b[14], b[15]);
        return n > 0 ? (size_t)n : 0;
    }
    /* The longest run of two or more zero groups (the first of equals) becomes "::". */
    int best = -1, best_len = 0;
    for (int g = 0; g < 8;) {
        if (b[2 * g] == 0 && b[2 * g + 1] == 0) {
            int start = g;
            while (g < 8 && b[2 * g] == 0 && b[2 * g + 1] == 0) g++;
            if (g - start > best_len) {
                best = start;
                best_len = g - start;
            }
        } else {
            g++;
        }
    }
    if (best_len < 2) best = -1;
    size_t pos = 0;
    for (int g = 0; g < 8; g++) {
        if (g == best) {
            out[pos++] = ':';
            out[pos++] = ':';
            g += best_len - 1;
            continue;
        }
        if (pos > 0 && out[pos - 1] != ':') out[pos++] = ':';
        pos += (size_t)snprintf(out + pos, cap - pos, "%x", (unsigned)(b[2 * g] << 8 | b[2 * g + 1]));
    }
    out[pos] = '\0';
    return pos;
}

/* ---- URL hosts. ---- */

/* Whether a label reads as a number the IPv4 parser takes (decimal, or 0x with hex digits). */
static bool label_is_number(const char *s, size_t len) {
    if (len == 0) return false;
    if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        for (size_t i = 2; i < len; i++) {
            if (hex_value(s[i]) < 0) return false;
        }
        return true;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
}

/* One part of a lenient IPv4 host; false when it is not a number or passes 2^32 - 1. */
static bool parse_v4_part(const char *s, size_t len, uint64_t *out) {
    unsigned base = 10;
    if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        len -= 2;
    } else if (len >= 2 && s[0] == '0') {
        base = 8;
        s++;
        len--;
    }
    if (len == 0 && base != 16) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        int d = hex_value(s[i]);
        if (d < 0 || (unsigned)d >= base) return false;
        v = v * base + (unsigned)d;
        if (v > 0xFFFFFFFFu) return false;
    }
    *out = v;
    return true;
}

/* The last label of a host without its final dot. */
static void last_label(const char *s, size_t len, const char **label, size_t *label_len) {
    size_t i = len;
    while (i > 0 && s[i - 1] != '.') i--;
    *label = s + i;
    *label_len = len - i;
}

/* Lenient IPv4 (WHATWG's IPv4 parser, as curl and inet_aton read hosts), final dot removed. */
static bool parse_v4_host(const char *s, size_t len, uint32_t *out) {
    uint64_t parts[4];
    size_t count = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') continue;
        if (count == 4 || !parse_v4_part(s + start, i - start, &parts[count])) return false;
        count++;
        start = i + 1;
    }
    if (count == 0) return false;
    for (size_t i = 0; i + 1 < count; i++) {
        if (parts[i] > 255) return false;
    }
    uint64_t limit = (uint64_t)1 << (8 * (5 - count));
    if (parts[count - 1] >= limit) return false;
    uint64_t v = parts[count - 1];
    for (size_t i = 0; i + 1 < count; i++) v |= parts[i] << (8 * (3 - i));
    *out = (uint32_t)v;
    return true;
}

/* The host without one final dot (a lone "." stays). */
static size_t without_final_dot(const char *host, size_t len) {
    return len > 1 && host[len - 1] == '.' ? len - 1 : len;
}

bool ic_net_host_address(const char *host, size_t len, ic_net_addr *out) {
    if (!host || !out || len == 0) return false;
    if (host[0] == '[') return memchr(host, ':', len) != NULL && ic_net_addr_parse(host, len, out);
    if (memchr(host, ':', len)) return ic_net_addr_parse(host, len, out);
    len = without_final_dot(host, len);
    const char *label;
    size_t label_len;
    last_label(host, len, &label, &label_len);
    uint32_t v;
    if (!label_is_number(label, label_len) || !parse_v4_host(host, len, &v)) return false;
    set_v4(out, v);
    return true;
}

static bool name_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

size_t ic_net_host_normalize(const char *host, size_t len, char *out, size_t cap) {
    if (!out || cap == 0) return 0;
    out[0] = '\0';
    if (!host || len == 0 || cap < IC_NET_HOST_TEXT) return 0;
    if (host[0] == '[' || memchr(host, ':', len)) {
        ic_net_addr a;
        if (!ic_net_addr_parse(host, len, &a) || a.family != 6) return 0;
        out[0] = '[';
        size_t n = ic_net_addr_format(&a, out + 1, cap - 2);
        out[n + 1] = ']';
        out[n + 2] = '\0';
        return n + 2;
    }
    size_t n = without_final_dot(host, len);
    const char *label;
    size_t label_len;
    last_label(host, n, &label, &label_len);
    if (label_is_number(label, label_len)) {
        ic_net_addr a;
        if (!ic_net_host_address(host, len, &a)) return 0;
        return ic_net_addr_format(&a, out, cap);
    }
    if (n > 253) return 0;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)host[i];
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c - 'A' + 'a');
        if (c == '.') {
            if (run == 0) return 0;
            run = 0;
        } else if (name_byte(c) && run < 63) {
            run++;
        } else {
            return 0;
        }
        out[i] = (char)c;
    }
    if (run == 0) return 0;
    out[n] = '\0';
    return n;
}

/* ---- Classes. ---- */

typedef struct prefix_class {
    uint8_t bytes[16];
    uint8_t bits;
    uint8_t cls; /* ic_net_class, or EMBEDDED_V4_* to class the IPv4 address inside */
} prefix_class;

/* The IPv4 address inside a NAT64 (bytes 12–15) or 6to4 (bytes 2–5) address. */
enum { EMBEDDED_V4_AT_12 = 100, EMBEDDED_V4_AT_2 = 101 };

#define V4(a, b, c, d) {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, a, b, c, d}
#define V4_BITS(n) (uint8_t)(96 + (n))

/* Most specific first: the first match decides. */
static const prefix_class k_classes[] = {
    /* Cloud metadata and platform endpoints (exact addresses). */
    {V4(169, 254, 169, 254), V4_BITS(32), IC_NET_METADATA},
    {V4(169, 254, 169, 253), V4_BITS(32), IC_NET_METADATA},
    {V4(169, 254, 169, 123), V4_BITS(32), IC_NET_METADATA},
    {V4(169, 254, 170, 2), V4_BITS(32), IC_NET_METADATA},
    {V4(169, 254, 170, 23), V4_BITS(32), IC_NET_METADATA},
    {V4(100, 100, 100, 200), V4_BITS(32), IC_NET_METADATA},
    {V4(192, 0, 0, 192), V4_BITS(32), IC_NET_METADATA},
    {V4(168, 63, 129, 16), V4_BITS(32), IC_NET_METADATA},
    {{0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128, IC_NET_METADATA},
    {{0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x53}, 128, IC_NET_METADATA},
    {{0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x23}, 128, IC_NET_METADATA},
    {{0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x23}, 128, IC_NET_METADATA},
    /* IPv4 (mapped). */
    {V4(0, 0, 0, 0), V4_BITS(32), IC_NET_LOOPBACK},
    {V4(0, 0, 0, 0), V4_BITS(8), IC_NET_RESERVED},
    {V4(10, 0, 0, 0), V4_BITS(8), IC_NET_PRIVATE},
    {V4(100, 64, 0, 0), V4_BITS(10), IC_NET_PRIVATE},
    {V4(127, 0, 0, 0), V4_BITS(8), IC_NET_LOOPBACK},
    {V4(169, 254, 0, 0), V4_BITS(16), IC_NET_LINK_LOCAL},
    {V4(172, 16, 0, 0), V4_BITS(12), IC_NET_PRIVATE},
    {V4(192, 0, 0, 0), V4_BITS(24), IC_NET_RESERVED},
    {V4(192, 0, 2, 0), V4_BITS(24), IC_NET_RESERVED},
    {V4(192, 88, 99, 0), V4_BITS(24), IC_NET_RESERVED},
    {V4(192, 168, 0, 0), V4_BITS(16), IC_NET_PRIVATE},
    {V4(198, 18, 0, 0), V4_BITS(15), IC_NET_RESERVED},
    {V4(198, 51, 100, 0), V4_BITS(24), IC_NET_RESERVED},
    {V4(203, 0, 113, 0), V4_BITS(24), IC_NET_RESERVED},
    {V4(224, 0, 0, 0), V4_BITS(4), IC_NET_MULTICAST},
    {V4(240, 0, 0, 0), V4_BITS(4), IC_NET_RESERVED},
    {V4(0, 0, 0, 0), 96, IC_NET_PUBLIC},
    /* IPv6. */
    {{0}, 128, IC_NET_LOOPBACK},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, IC_NET_LOOPBACK},
    {{0}, 96, IC_NET_RESERVED},
    {{0, 0x64, 0xff, 0x9b}, 96, EMBEDDED_V4_AT_12},
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, IC_NET_PRIVATE},
    {{0x01, 0x00}, 64, IC_NET_RESERVED},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, IC_NET_RESERVED},
    {{0x20, 0x01, 0x00, 0x00}, 23, IC_NET_RESERVED},
    {{0x20, 0x02}, 16, EMBEDDED_V4_AT_2},
    {{0x3f, 0xff}, 20, IC_NET_RESERVED},
    {{0x5f, 0x00}, 16, IC_NET_RESERVED},
    {{0x20}, 3, IC_NET_PUBLIC},
    {{0xfc}, 7, IC_NET_PRIVATE},
    {{0xfe, 0x80}, 10, IC_NET_LINK_LOCAL},
    {{0xfe, 0xc0}, 10, IC_NET_PRIVATE},
    {{0xff}, 8, IC_NET_MULTICAST},
};

/* Whether the first `bits` bits of a and b agree. */
static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned bits) {
    unsigned whole = bits / 8, rest = bits % 8;
    if (memcmp(a, b, whole) != 0) return false;
    if (rest == 0) return true;
    uint8_t mask = (uint8_t)(0xFF << (8 - rest));
    return (a[whole] & mask) == (b[whole] & mask);
}

static ic_net_class classify_bytes(const uint8_t *b, int depth) {
    for (size_t i = 0; i < sizeof k_classes / sizeof k_classes[0]; i++) {
        const prefix_class *p = &k_classes[i];
        if (!same_prefix(b, p->bytes, p->bits)) continue;
        if (p->cls < EMBEDDED_V4_AT_12) return (ic_net_class)p->cls;
        if (depth > 0) return IC_NET_RESERVED; /* IPv4 inside IPv4 inside IPv6 cannot happen */
        uint8_t inner[16] = V4(0, 0, 0, 0);
        memcpy(inner + 12, b + (p->cls == EMBEDDED_V4_AT_12 ? 12 : 2), 4);
        return classify_bytes(inner, depth + 1);
    }
    return IC_NET_RESERVED;
}

ic_net_class ic_net_addr_classify(const ic_net_addr *a) {
    return a ? classify_bytes(a->bytes, 0) : IC_NET_RESERVED;
}

const char *ic_net_class_name(ic_net_class c) {
    switch (c) {
    case IC_NET_PUBLIC: return "public";
    case IC_NET_LOOPBACK: return "loopback";
    case IC_NET_PRIVATE: return "private";
    case IC_NET_LINK_LOCAL: return "link-local";
    case IC_NET_METADATA: return "a cloud metadata address";
    case IC_NET_MULTICAST: return "multicast";
    case IC_NET_RESERVED: return "a reserved address";
    }
    return "of an unknown class";
}
