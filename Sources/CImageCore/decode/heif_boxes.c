/*
 * heif_boxes.c — the orientation of a HEIF file's primary item, read from its
 * ISO-BMFF boxes: meta → pitm (the primary item), iprp → ipco (the properties)
 * and ipma (which properties an item has, in order). libheif 1.15 applies irot
 * and imir but does not report them, and ImageKit reports an orientation.
 *
 * Only the primary item's own properties count (not those of an item an 'iden'
 * or grid item derives from). Every read is bounded by its box.
 */
#include <string.h>

#include "ic_decode_internal.h"

typedef struct box {
    const uint8_t *body;
    size_t size;
} box;

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }

/* The first box of type `type` among the boxes in [p, p + n), or false. */
static bool find_box(const uint8_t *p, size_t n, const char *type, box *out) {
    size_t at = 0;
    while (n - at >= 8) {
        uint64_t size = be32(p + at);
        size_t header = 8;
        if (size == 1) {
            if (n - at < 16) return false;
            size = (uint64_t)be32(p + at + 8) << 32 | be32(p + at + 12);
            header = 16;
        } else if (size == 0) {
            size = n - at;
        }
        if (size < header || size > n - at) return false;
        if (memcmp(p + at + 4, type, 4) == 0) {
            out->body = p + at + header;
            out->size = (size_t)size - header;
            return true;
        }
        at += (size_t)size;
    }
    return false;
}

/* The `index`-th (1-based) child box of ipco, or false. */
static bool nth_box(const box *ipco, uint32_t index, char type[4], box *out) {
    const uint8_t *p = ipco->body;
    size_t n = ipco->size, at = 0;
    for (uint32_t i = 1; n - at >= 8; i++) {
        uint32_t size = be32(p + at);
        if (size < 8 || size > n - at) return false;
        if (i == index) {
            memcpy(type, p + at + 4, 4);
            out->body = p + at + 8;
            out->size = size - 8;
            return true;
        }
        at += size;
    }
    return false;
}

/* A rotation/mirror as "mirror left-right (m), then rotate r x 90 degrees anticlockwise". */
typedef struct turn {
    unsigned m;
    unsigned r;
} turn;

static void apply(turn *t, const char type[4], const box *b) {
    if (memcmp(type, "irot", 4) == 0 && b->size >= 1) {
        t->r = (t->r + (b->body[0] & 3)) & 3;
    } else if (memcmp(type, "imir", 4) == 0 && b->size >= 1) {
        /* As libheif 1.15 applies it: axis 1 mirrors left-right (F), axis 0 top-bottom (F
         * then R(2)). Mirroring after a rotation: F·R(r) = R(-r)·F. */
        t->m ^= 1;
        t->r = (4 - t->r) & 3;
        if (!(b->body[0] & 1)) t->r = (t->r + 2) & 3;
    }
}

static uint8_t exif_value(turn t) {
    static const uint8_t plain[4] = {1, 8, 3, 6};
    static const uint8_t mirrored[4] = {2, 5, 4, 7};
    return t.m ? mirrored[t.r] : plain[t.r];
}

uint8_t ic_heif_orientation(const uint8_t *data, size_t size) {
    box meta, pitm, iprp, ipco, ipma;
    if (!find_box(data, size, "meta", &meta) || meta.size < 4) return 1;
    const uint8_t *mp = meta.body + 4; /* full box: version and flags */
    size_t mn = meta.size - 4;
    if (!find_box(mp, mn, "pitm", &pitm) || pitm.size < 6) return 1;
    uint32_t primary = pitm.body[0] == 0 ? be16(pitm.body + 4)
                                         : (pitm.size >= 8 ? be32(pitm.body + 4) : 0);
    if (!find_box(mp, mn, "iprp", &iprp) || !find_box(iprp.body, iprp.size, "ipco", &ipco) ||
        !find_box(iprp.body, iprp.size, "ipma", &ipma) || ipma.size < 8) {
        return 1;
    }
    const uint8_t *p = ipma.body;
    size_t n = ipma.size;
    unsigned version = p[0];
    bool wide_index = (p[3] & 1) != 0;
    uint32_t entries = be32(p + 4);
    size_t at = 8;
    for (uint32_t e = 0; e < entries; e++) {
        size_t id_bytes = version < 1 ? 2 : 4;
        if (n - at < id_bytes + 1) return 1;
        uint32_t item = version < 1 ? be16(p + at) : be32(p + at);
        at += id_bytes;
        unsigned count = p[at++];
        size_t each = wide_index ? 2 : 1;
        if ((n - at) / each < count) return 1;
        if (item != primary) {
            at += count * each;
            continue;
        }
        turn t = {0, 0};
        for (unsigned i = 0; i < count; i++, at += each) {
            uint32_t index = wide_index ? be16(p + at) & 0x7FFF : p[at] & 0x7F;
            char type[4];
            box prop;
            if (index && nth_box(&ipco, index, type, &prop)) apply(&t, type, &prop);
        }
        return exif_value(t);
    }
    return 1;
}
