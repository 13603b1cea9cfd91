/*
 * heif_boxes.c — the orientation of a HEIF file's primary item, and the canvas of a
 * derived (grid, overlay) primary image, read from its
 * ISO-BMFF boxes: meta → pitm (the primary item), iprp → ipco (the properties)
 * and ipma (which properties an item has, in order). libheif 1.15 applies irot
 * and imir but does not report them, and ImageKit reports an orientation.
 *
 * Only the primary item's own properties count (not those of an item an 'iden'
 * or grid item derives from). Also the number of file-level meta boxes (a HEIF
 * file has one). Every read is bounded by its box.
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

/* The primary item's id and the meta box's children, or false. */
static bool primary_item(const uint8_t *data, size_t size, box *children, uint32_t *id) {
    box meta, pitm;
    if (!find_box(data, size, "meta", &meta) || meta.size < 4) return false;
    children->body = meta.body + 4;
    children->size = meta.size - 4;
    if (!find_box(children->body, children->size, "pitm", &pitm) || pitm.size < 6) return false;
    if (pitm.body[0] == 0) {
        *id = be16(pitm.body + 4);
    } else {
        if (pitm.size < 8) return false;
        *id = be32(pitm.body + 4);
    }
    return true;
}

uint8_t ic_heif_orientation(const uint8_t *data, size_t size) {
    box children, iprp, ipco, ipma;
    uint32_t primary;
    if (!primary_item(data, size, &children, &primary)) return 1;
    if (!find_box(children.body, children.size, "iprp", &iprp) || !find_box(iprp.body, iprp.size, "ipco", &ipco) ||
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

/* ---- The canvas of a derived primary image (grid, iovl). ---- */

/* The infe entries of iinf (version 2 and 3) in `children`, one at a time: next_item gives
 * each entry's item id and type, false after the last. */
typedef struct item_walk {
    box entries;
} item_walk;

static bool items_begin(const box *children, item_walk *w) {
    box iinf;
    if (!find_box(children->body, children->size, "iinf", &iinf) || iinf.size < 6) return false;
    size_t at = iinf.body[0] == 0 ? 6 : 8;
    if (at > iinf.size) return false;
    w->entries = (box){iinf.body + at, iinf.size - at};
    return true;
}

static bool next_item(item_walk *w, uint32_t *id, const uint8_t **type) {
    while (w->entries.size >= 8) {
        box infe;
        if (!find_box(w->entries.body, w->entries.size, "infe", &infe)) return false;
        size_t used = (size_t)(infe.body + infe.size - w->entries.body);
        w->entries.body += used;
        w->entries.size -= used;
        if (infe.size >= 4 && (infe.body[0] == 2 || infe.body[0] == 3)) {
            size_t id_bytes = infe.body[0] == 2 ? 2 : 4;
            if (infe.size >= 4 + id_bytes + 2 + 4) {
                *id = id_bytes == 2 ? be16(infe.body + 4) : be32(infe.body + 4);
                *type = infe.body + 4 + id_bytes + 2;
                return true;
            }
        }
    }
    return false;
}

/* The item type of item `id` from iinf's infe entries, or false. */
static bool item_type(const box *children, uint32_t id, char type[4]) {
    item_walk w;
    uint32_t item;
    const uint8_t *t;
    if (!items_begin(children, &w)) return false;
    while (next_item(&w, &item, &t)) {
        if (item == id) {
            memcpy(type, t, 4);
            return true;
        }
    }
    return false;
}

/* An unsigned big-endian field of `bytes` (0, 2, 4 or 8) bytes at *at, bounded by `end`. */
static bool field(const uint8_t **at, const uint8_t *end, unsigned bytes, uint64_t *out) {
    if (bytes != 0 && bytes != 2 && bytes != 4 && bytes != 8) return false;
    if ((size_t)(end - *at) < bytes) return false;
    *out = bytes == 0   ? 0
           : bytes == 2 ? be16(*at)
           : bytes == 4 ? be32(*at)
                        : (uint64_t)be32(*at) << 32 | be32(*at + 4);
    *at += bytes;
    return true;
}

/* The payload of item `id` when iloc gives it as one extent in the file (construction
 * method 0) or in idat (1); false otherwise. */
static bool item_payload(const uint8_t *data, size_t size, const box *children, uint32_t id, box *out) {
    box iloc;
    if (!find_box(children->body, children->size, "iloc", &iloc) || iloc.size < 8) return false;
    const uint8_t *p = iloc.body, *end = iloc.body + iloc.size;
    uint8_t version = p[0];
    if (version > 2) return false;
    unsigned offset_size = p[4] >> 4, length_size = p[4] & 15, base_size = p[5] >> 4;
    unsigned index_size = version >= 1 ? p[5] & 15 : 0;
    p += 6;
    unsigned id_size = version < 2 ? 2 : 4; /* the item count and each item's id */
    uint64_t count;
    if (!field(&p, end, id_size, &count)) return false;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t item;
        unsigned method = 0;
        if (!field(&p, end, id_size, &item)) return false;
        if (version >= 1) {
            if (end - p < 2) return false;
            method = p[1] & 15;
            p += 2;
        }
        uint64_t data_reference_index, base, extents_left;
        if (!field(&p, end, 2, &data_reference_index) || !field(&p, end, base_size, &base) ||
            !field(&p, end, 2, &extents_left)) {
            return false;
        }
        uint64_t offset = 0, length = 0;
        for (uint64_t e = 0; e < extents_left; e++) {
            uint64_t index;
            if ((version >= 1 && !field(&p, end, index_size, &index)) || !field(&p, end, offset_size, &offset) ||
                !field(&p, end, length_size, &length)) {
                return false;
            }
        }
        if (item != id) continue;
        if (extents_left != 1 || method > 1) return false;
        const uint8_t *from = data;
        size_t from_size = size;
        box idat;
        if (method == 1) {
            if (!find_box(children->body, children->size, "idat", &idat)) return false;
            from = idat.body;
            from_size = idat.size;
        }
        if (base > from_size || offset > from_size - base) return false;
        uint64_t at = base + offset;
        if (length == 0) length = from_size - at;
        if (length > from_size - at) return false;
        out->body = from + at;
        out->size = (size_t)length;
        return true;
    }
    return false;
}

/* The canvas item `id` (of `type`) declares when it is a grid or overlay: 1 and the size,
 * 0 when it is neither, -1 when its data cannot be located. */
static int item_canvas(const uint8_t *data, size_t size, const box *children, uint32_t id, const char type[4],
                       uint32_t *width, uint32_t *height) {
    box payload;
    size_t skip;
    if (memcmp(type, "grid", 4) == 0) {
        skip = 4; /* version, flags, rows - 1, columns - 1 */
    } else if (memcmp(type, "iovl", 4) == 0) {
        skip = 2; /* version, flags; then the fill values, one 16-bit value per channel */
    } else {
        return 0;
    }
    if (!item_payload(data, size, children, id, &payload) || payload.size < skip) return -1;
    bool wide = payload.body[1] & 1;
    if (memcmp(type, "iovl", 4) == 0) {
        /* libheif reads four fill values of 16 bits whatever the image's channels. */
        skip += 8;
    }
    size_t need = skip + (wide ? 8 : 4);
    if (payload.size < need) return -1;
    const uint8_t *q = payload.body + skip;
    *width = wide ? be32(q) : be16(q);
    *height = wide ? be32(q + 4) : be16(q + 2);
    return 1;
}

int ic_heif_derived_canvas(const uint8_t *data, size_t size, uint32_t *width, uint32_t *height) {
    box children;
    uint32_t primary;
    char type[4];
    if (!primary_item(data, size, &children, &primary) || !item_type(&children, primary, type)) return 0;
    int found = item_canvas(data, size, &children, primary, type, width, height);
    if (found < 0) return -1;
    /* Every other grid or overlay item too (an overlay can be the primary image's alpha, which
     * libheif decodes at the canvas its data declares): the largest canvas is reported. */
    item_walk walk;
    uint32_t item, w, h;
    const uint8_t *item_kind;
    if (!items_begin(&children, &walk)) return found;
    while (next_item(&walk, &item, &item_kind)) {
        if (item != primary && item_canvas(data, size, &children, item, (const char *)item_kind, &w, &h) > 0 &&
            (found <= 0 || (uint64_t)w * h > (uint64_t)*width * *height)) {
            *width = w;
            *height = h;
            found = 1;
        }
    }
    return found;
}

unsigned ic_heif_meta_boxes(const uint8_t *data, size_t size) {
    unsigned count = 0;
    box meta;
    const uint8_t *p = data;
    size_t n = size;
    while (find_box(p, n, "meta", &meta)) {
        count++;
        size_t used = (size_t)(meta.body + meta.size - p);
        p += used;
        n -= used;
    }
    return count;
}
