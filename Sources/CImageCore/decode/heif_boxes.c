/*
 * heif_boxes.c — what ImageKit reads from a HEIF file's ISO-BMFF boxes itself, before or
 * besides libheif 1.15: meta → pitm (the primary item), iinf (the items' types), iloc (their
 * data), iref (what derived items derive from), iprp → ipco (the properties) and ipma (which
 * properties an item has, in order).
 *
 * - The primary item's orientation: libheif applies irot and imir but does not report them,
 *   and ImageKit reports an orientation. Only the primary item's own properties count (not
 *   those of an item an 'iden' or grid item derives from).
 * - The number of file-level meta boxes (a HEIF file has one).
 * - The largest picture an HEVC parameter set in the file declares (in every hvcC property
 *   and in every hvc1 item's data, gathered from its extents as libheif gathers them).
 * - The derived images (grid, iovl, iden): the largest canvas one declares, and what decoding
 *   each costs, its inputs followed to a bounded depth.
 *
 * Every read is bounded by its box.
 */
#include <stdlib.h>
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

/* The next box of `rest` (its type and body), which it leaves; false at the end or at a box
 * that does not fit. */
static bool next_box(box *rest, char type[4], box *out) {
    const uint8_t *p = rest->body;
    size_t n = rest->size;
    if (n < 8) return false;
    uint64_t size = be32(p);
    size_t header = 8;
    if (size == 1) {
        if (n < 16) return false;
        size = (uint64_t)be32(p + 8) << 32 | be32(p + 12);
        header = 16;
    } else if (size == 0) {
        size = n;
    }
    if (size < header || size > n) return false;
    memcpy(type, p + 4, 4);
    out->body = p + header;
    out->size = (size_t)size - header;
    rest->body += size;
    rest->size -= (size_t)size;
    return true;
}

/* The first box of type `type` among the boxes in [p, p + n), or false. */
static bool find_box(const uint8_t *p, size_t n, const char *type, box *out) {
    box rest = {p, n};
    char t[4];
    while (next_box(&rest, t, out)) {
        if (memcmp(t, type, 4) == 0) return true;
    }
    return false;
}

/* The `index`-th (1-based) child box of ipco, or false. */
static bool nth_box(const box *ipco, uint32_t index, char type[4], box *out) {
    box rest = *ipco;
    for (uint32_t i = 1; next_box(&rest, type, out); i++) {
        if (i == index) return true;
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

/* The (file-level) meta box's children, or false. */
static bool meta_children(const uint8_t *data, size_t size, box *children) {
    box meta;
    if (!find_box(data, size, "meta", &meta) || meta.size < 4) return false;
    children->body = meta.body + 4;
    children->size = meta.size - 4;
    return true;
}

/* The primary item's id and the meta box's children, or false. */
static bool primary_item(const uint8_t *data, size_t size, box *children, uint32_t *id) {
    box pitm;
    if (!meta_children(data, size, children)) return false;
    if (!find_box(children->body, children->size, "pitm", &pitm) || pitm.size < 6) return false;
    if (pitm.body[0] == 0) {
        *id = be16(pitm.body + 4);
    } else {
        if (pitm.size < 8) return false;
        *id = be32(pitm.body + 4);
    }
    return true;
}

/* One item's properties (its ipma entry, in order), one at a time. */
typedef struct prop_walk {
    box ipco;
    const uint8_t *at;
    unsigned left;
    bool wide;
} prop_walk;

static bool props_begin(const box *children, uint32_t id, prop_walk *w) {
    box iprp, ipma;
    if (!find_box(children->body, children->size, "iprp", &iprp) ||
        !find_box(iprp.body, iprp.size, "ipco", &w->ipco) || !find_box(iprp.body, iprp.size, "ipma", &ipma) ||
        ipma.size < 8) {
        return false;
    }
    const uint8_t *p = ipma.body;
    size_t n = ipma.size;
    size_t id_bytes = p[0] < 1 ? 2 : 4;
    size_t each = (p[3] & 1) ? 2 : 1;
    uint32_t entries = be32(p + 4);
    size_t at = 8;
    for (uint32_t e = 0; e < entries; e++) {
        if (n - at < id_bytes + 1) return false;
        uint32_t item = id_bytes == 2 ? be16(p + at) : be32(p + at);
        at += id_bytes;
        unsigned count = p[at++];
        if ((n - at) / each < count) return false;
        if (item == id) {
            w->at = p + at;
            w->left = count;
            w->wide = each == 2;
            return true;
        }
        at += count * each;
    }
    return false;
}

static bool next_prop(prop_walk *w, char type[4], box *prop) {
    while (w->left > 0) {
        uint32_t index = w->wide ? be16(w->at) & 0x7FFF : w->at[0] & 0x7F;
        w->at += w->wide ? 2 : 1;
        w->left--;
        if (index && nth_box(&w->ipco, index, type, prop)) return true;
    }
    return false;
}

uint8_t ic_heif_orientation(const uint8_t *data, size_t size) {
    box children, prop;
    uint32_t primary;
    prop_walk w;
    char type[4];
    if (!primary_item(data, size, &children, &primary) || !props_begin(&children, primary, &w)) return 1;
    turn t = {0, 0};
    while (next_prop(&w, type, &prop)) apply(&t, type, &prop);
    return exif_value(t);
}

/* ---- Items: their types and their data. ---- */

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
    box infe;
    char t[4];
    while (next_box(&w->entries, t, &infe)) {
        if (memcmp(t, "infe", 4) != 0 || infe.size < 4 || (infe.body[0] != 2 && infe.body[0] != 3)) continue;
        size_t id_bytes = infe.body[0] == 2 ? 2 : 4;
        if (infe.size >= 4 + id_bytes + 2 + 4) {
            *id = id_bytes == 2 ? be16(infe.body + 4) : be32(infe.body + 4);
            *type = infe.body + 4 + id_bytes + 2;
            return true;
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

/* An unsigned big-endian field of `bytes` (2, 4 or 8) bytes at *at, bounded by `end`. */
static bool field(const uint8_t **at, const uint8_t *end, unsigned bytes, uint64_t *out) {
    if (bytes != 2 && bytes != 4 && bytes != 8) return false;
    if ((size_t)(end - *at) < bytes) return false;
    *out = bytes == 0   ? 0
           : bytes == 2 ? be16(*at)
           : bytes == 4 ? be32(*at)
                        : (uint64_t)be32(*at) << 32 | be32(*at + 4);
    *at += bytes;
    return true;
}

/* An iloc offset, length, base offset or index whose size iloc gives as `bytes`: libheif 1.15
 * reads one of 4 or 8 bytes, and for any other size reads nothing and takes 0. */
static bool sized_field(const uint8_t **at, const uint8_t *end, unsigned bytes, uint64_t *out) {
    if (bytes == 4 || bytes == 8) return field(at, end, bytes, out);
    *out = 0;
    return true;
}

/* libheif 1.15's limit on an item's extents (MAX_ILOC_EXTENTS_PER_ITEM): with more, it
 * reads no file at all. */
#define MAX_EXTENTS 32

/* An item's data as libheif 1.15 reads it: its extents, one after the other. */
typedef struct item_data {
    box part[MAX_EXTENTS];
    unsigned parts;
    uint64_t size;
} item_data;

/* Copies `n` bytes from `at` in the item's data to `out`; false past its end. */
static bool item_read(const item_data *d, uint64_t at, uint8_t *out, size_t n) {
    if (at > d->size || n > d->size - at) return false;
    for (unsigned i = 0; i < d->parts && n > 0; i++) {
        if (at >= d->part[i].size) {
            at -= d->part[i].size;
            continue;
        }
        size_t take = d->part[i].size - (size_t)at < n ? d->part[i].size - (size_t)at : n;
        memcpy(out, d->part[i].body + at, take);
        out += take;
        n -= take;
        at = 0;
    }
    return true;
}

/* Item `id`'s data from iloc (its first entry), as libheif 1.15 gathers it: every extent in
 * the file (construction method 0) or in idat (1), a length of 0 being no bytes, fields sized
 * and versions read as libheif reads them (see sized_field); false when
 * libheif could not read it either (no entry, another method, too many extents, out of
 * bounds). An extent in idat may reach a few bytes past idat's body, as libheif allows (it
 * compares with the box's size, header included): a superset of what libheif reads. */
static bool item_extents(const uint8_t *data, size_t size, const box *children, uint32_t id, item_data *out) {
    box iloc;
    if (!find_box(children->body, children->size, "iloc", &iloc) || iloc.size < 8) return false;
    const uint8_t *p = iloc.body, *end = iloc.body + iloc.size;
    uint8_t version = p[0]; /* libheif 1.15 reads a version above 2 as 2 */
    unsigned offset_size = p[4] >> 4, length_size = p[4] & 15, base_size = p[5] >> 4;
    unsigned index_size = version >= 2 ? p[5] & 15 : 0; /* libheif 1.15 reads indices from version 2 */
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
        uint64_t data_reference_index, base, extents;
        if (!field(&p, end, 2, &data_reference_index) || !sized_field(&p, end, base_size, &base) ||
            !field(&p, end, 2, &extents) || extents > MAX_EXTENTS) {
            return false;
        }
        bool wanted = item == id;
        const uint8_t *from = data;
        size_t from_size = size;
        if (wanted && method == 1) {
            box idat;
            if (!find_box(children->body, children->size, "idat", &idat)) return false;
            from = idat.body;
            from_size = idat.size + 16 < (size_t)(data + size - idat.body) ? idat.size + 16
                                                                            : (size_t)(data + size - idat.body);
        } else if (wanted && method > 1) {
            return false;
        }
        out->parts = 0;
        out->size = 0;
        for (uint64_t e = 0; e < extents; e++) {
            uint64_t index, offset, length;
            if (!sized_field(&p, end, index_size, &index) || !sized_field(&p, end, offset_size, &offset) ||
                !sized_field(&p, end, length_size, &length)) {
                return false;
            }
            if (!wanted) continue;
            if (base > from_size || offset > from_size - base || length > from_size - base - offset) return false;
            out->part[out->parts++] = (box){from + base + offset, (size_t)length};
            out->size += length;
        }
        if (wanted) return true;
    }
    return false;
}

/* The canvas item `id` (of `type`) declares when it is a grid or overlay: 1 and the size,
 * 0 when it is neither, -1 when its data cannot be read. */
static int item_canvas(const uint8_t *data, size_t size, const box *children, uint32_t id, const char type[4],
                       uint32_t *width, uint32_t *height) {
    size_t skip;
    if (memcmp(type, "grid", 4) == 0) {
        skip = 4; /* version, flags, rows - 1, columns - 1 */
    } else if (memcmp(type, "iovl", 4) == 0) {
        skip = 2 + 8; /* version, flags; libheif reads four 16-bit fill values, whatever the channels */
    } else {
        return 0;
    }
    item_data payload;
    uint8_t head[18];
    if (!item_extents(data, size, children, id, &payload) || !item_read(&payload, 0, head, 2)) return -1;
    bool wide = head[1] & 1;
    if (!item_read(&payload, 0, head, skip + (wide ? 8 : 4))) return -1;
    const uint8_t *q = head + skip;
    *width = wide ? be32(q) : be16(q);
    *height = wide ? be32(q + 4) : be16(q + 2);
    return 1;
}

bool ic_heif_has_item_type(const uint8_t *data, size_t size, const char type[4]) {
    box children;
    item_walk walk;
    uint32_t item;
    const uint8_t *kind;
    if (!meta_children(data, size, &children) || !items_begin(&children, &walk)) return false;
    while (next_item(&walk, &item, &kind)) {
        if (memcmp(kind, type, 4) == 0) return true;
    }
    return false;
}

/* ---- The HEVC pictures libde265 will allocate. ---- */

/* A picture's samples, twice over (luma and chroma: 4:0:0, 4:2:0, 4:2:2, 4:4:4). */
static uint64_t twice_samples(const ic_hevc_picture *p) {
    static const unsigned per_pixel[4] = {2, 3, 4, 6};
    return (uint64_t)p->width * p->height * per_pixel[p->chroma_format & 3];
}

/* Keeps in *best the larger of it and the picture the NAL unit `nal` declares, if it is an
 * SPS libde265 accepts. */
static void consider(const uint8_t *nal, size_t n, ic_hevc_picture *best, bool *found) {
    ic_hevc_picture pic;
    if (ic_hevc_sps_picture(nal, n, &pic) && (!*found || twice_samples(&pic) > twice_samples(best))) {
        *best = pic;
        *found = true;
    }
}

/* The NAL units of an hvcC box (its arrays, each NAL with a 16-bit length), as libheif 1.15
 * reads them. */
static void hvcc_pictures(const box *hvcc, ic_hevc_picture *best, bool *found) {
    if (hvcc->size < 23) return;
    const uint8_t *p = hvcc->body + 23, *end = hvcc->body + hvcc->size;
    unsigned arrays = hvcc->body[22];
    for (unsigned a = 0; a < arrays; a++) {
        if (end - p < 3) return;
        unsigned units = be16(p + 1);
        p += 3;
        for (unsigned u = 0; u < units; u++) {
            if (end - p < 2) return;
            size_t n = be16(p);
            p += 2;
            if (n > (size_t)(end - p)) return;
            consider(p, n, best, found);
            p += n;
        }
    }
}

/* The NAL units of an hvc1 item's data (each with a 32-bit length, as libheif 1.15's libde265
 * plugin reads them: it stops at a length past the end, and then decodes nothing). */
static void item_pictures(const item_data *d, ic_hevc_picture *best, bool *found) {
    uint64_t at = 0;
    uint8_t head[IC_HEVC_SPS_BYTES];
    while (d->size - at >= 4) {
        item_read(d, at, head, 4);
        uint64_t n = be32(head);
        at += 4;
        if (n > d->size - at) return;
        size_t take = n < sizeof head ? (size_t)n : sizeof head;
        item_read(d, at, head, take);
        consider(head, take, best, found);
        at += n;
    }
}

bool ic_heif_largest_hevc_picture(const uint8_t *data, size_t size, ic_hevc_picture *out) {
    box children, iprp, ipco;
    bool found = false;
    if (!meta_children(data, size, &children)) return false;
    if (find_box(children.body, children.size, "iprp", &iprp) && find_box(iprp.body, iprp.size, "ipco", &ipco)) {
        box rest = ipco, property;
        char type[4];
        while (next_box(&rest, type, &property)) {
            if (memcmp(type, "hvcC", 4) == 0) hvcc_pictures(&property, out, &found);
        }
    }
    item_walk walk;
    uint32_t item;
    const uint8_t *kind;
    item_data payload;
    if (items_begin(&children, &walk)) {
        while (next_item(&walk, &item, &kind)) {
            if (memcmp(kind, "hvc1", 4) == 0 && item_extents(data, size, &children, item, &payload)) {
                item_pictures(&payload, out, &found);
            }
        }
    }
    return found;
}

/* ---- Derived images (grid, iovl, iden): their canvases and what decoding them costs. ---- */

/* An overlay's inputs may cover its canvas this many times over (layers). */
#define MAX_OVERLAY_LAYERS 16

/* iref's entries one at a time, as libheif 1.15 reads them: each a box header (whose size it
 * does not use), the item it is from, a count and as many ids as come before the end. */
typedef struct ref_walk {
    const uint8_t *at;
    const uint8_t *end;
    unsigned id_bytes;
} ref_walk;

/* One iref entry: its type, the item it is from and the ids it refers to. */
typedef struct item_refs {
    char type[4];
    uint32_t from;
    const uint8_t *ids;
    uint32_t count;
    unsigned id_bytes;
} item_refs;

static bool refs_begin(const box *children, ref_walk *w) {
    box iref;
    if (!find_box(children->body, children->size, "iref", &iref) || iref.size < 4) return false;
    w->id_bytes = iref.body[0] == 0 ? 2 : 4;
    w->at = iref.body + 4;
    w->end = iref.body + iref.size;
    return true;
}

static bool next_refs(ref_walk *w, item_refs *r) {
    if (w->end - w->at < 8) return false;
    bool large = be32(w->at) == 1, uuid = memcmp(w->at + 4, "uuid", 4) == 0;
    size_t header = 8 + (large ? 8 : 0) + (uuid ? 16 : 0);
    if ((size_t)(w->end - w->at) < header + w->id_bytes + 2) return false;
    memcpy(r->type, w->at + 4, 4);
    const uint8_t *p = w->at + header;
    r->from = w->id_bytes == 2 ? be16(p) : be32(p);
    r->count = be16(p + w->id_bytes);
    r->ids = p + w->id_bytes + 2;
    r->id_bytes = w->id_bytes;
    size_t available = (size_t)(w->end - r->ids) / w->id_bytes;
    if (r->count > available) r->count = (uint32_t)available;
    w->at = r->ids + (size_t)r->count * w->id_bytes;
    return true;
}

static uint32_t ref_at(const item_refs *r, uint32_t i) {
    const uint8_t *p = r->ids + (size_t)i * r->id_bytes;
    return r->id_bytes == 2 ? be16(p) : be32(p);
}

/* Item `from`'s dimg references: the first such entry, as libheif 1.15 takes them. */
static bool derived_inputs(const box *children, uint32_t from, item_refs *out) {
    ref_walk w;
    if (!refs_begin(children, &w)) return false;
    while (next_refs(&w, out)) {
        if (memcmp(out->type, "dimg", 4) == 0 && out->from == from) return true;
    }
    return false;
}

/* An auxiliary image and the image it belongs to (an auxl reference with one id). libheif
 * 1.15 decodes an image's alpha with it, and that image's alpha with that: every such pair is
 * followed, alpha or not, a superset of what libheif links. */
typedef struct aux_link {
    uint32_t master;
    uint32_t aux;
} aux_link;

static int by_master(const void *a, const void *b) {
    uint32_t x = ((const aux_link *)a)->master, y = ((const aux_link *)b)->master;
    return x < y ? -1 : x > y;
}

/* What decoding an item costs: the pixels libde265 decodes, and the item's size (its SPS
 * picture, or its canvas). */
typedef struct item_cost {
    uint64_t pixels;
    uint32_t width;
    uint32_t height;
} item_cost;

typedef struct cost_scan {
    const uint8_t *data;
    size_t size;
    box children;
    uint32_t visits;
    aux_link *links; /* sorted by master */
    size_t link_count;
    bool have_last; /* the last coded item costed, at the depth it was: a bomb repeats one tile */
    uint32_t last_id;
    unsigned last_depth;
    item_cost last;
    ic_heif_derived *out;
} cost_scan;

/* The largest picture an SPS of coded item `id` declares: in its hvcC properties or its data. */
static bool coded_picture(const cost_scan *s, uint32_t id, ic_hevc_picture *pic) {
    bool found = false;
    prop_walk w;
    char type[4];
    box prop;
    item_data payload;
    if (props_begin(&s->children, id, &w)) {
        while (next_prop(&w, type, &prop)) {
            if (memcmp(type, "hvcC", 4) == 0) hvcc_pictures(&prop, pic, &found);
        }
    }
    if (item_extents(s->data, s->size, &s->children, id, &payload)) item_pictures(&payload, pic, &found);
    return found;
}

static ic_heif_derived_status too_deep(cost_scan *s, uint32_t id) {
    s->out->item = id;
    return IC_HEIF_DERIVED_TOO_DEEP;
}

/* Costs item `id` at `depth` into *cost: IC_HEIF_DERIVED_OK, or why libheif must not decode
 * the file. Its auxiliary images are followed too (for the depth; their pixels are not
 * counted). An item libheif cannot decode (unknown, unreadable) costs nothing. */
static ic_heif_derived_status cost_of(cost_scan *s, uint32_t id, unsigned depth, item_cost *cost) {
    if (++s->visits > IC_HEIF_MAX_DERIVATION_VISITS) return IC_HEIF_DERIVED_TOO_MANY;
    if (s->have_last && s->last_id == id && s->last_depth <= depth) {
        *cost = s->last;
        return IC_HEIF_DERIVED_OK;
    }
    *cost = (item_cost){0, 0, 0};
    aux_link key = {id, 0};
    const aux_link *link = s->link_count ? bsearch(&key, s->links, s->link_count, sizeof key, by_master) : NULL;
    while (link && link > s->links && link[-1].master == id) link--;
    for (; link && link < s->links + s->link_count && link->master == id; link++) {
        if (depth >= IC_HEIF_MAX_DERIVATION_DEPTH) return too_deep(s, id);
        item_cost aux;
        ic_heif_derived_status st = cost_of(s, link->aux, depth + 1, &aux);
        if (st != IC_HEIF_DERIVED_OK) return st;
    }
    char type[4];
    if (!item_type(&s->children, id, type)) return IC_HEIF_DERIVED_OK;
    if (memcmp(type, "hvc1", 4) == 0) {
        ic_hevc_picture pic;
        if (coded_picture(s, id, &pic)) *cost = (item_cost){(uint64_t)pic.width * pic.height, pic.width, pic.height};
        s->have_last = true;
        s->last_id = id;
        s->last_depth = depth;
        s->last = *cost;
        return IC_HEIF_DERIVED_OK;
    }
    bool identity = memcmp(type, "iden", 4) == 0;
    uint32_t canvas_w = 0, canvas_h = 0;
    if (!identity && item_canvas(s->data, s->size, &s->children, id, type, &canvas_w, &canvas_h) <= 0) {
        return IC_HEIF_DERIVED_OK;
    }
    item_refs refs;
    if (!derived_inputs(&s->children, id, &refs) || refs.count == 0) return IC_HEIF_DERIVED_OK;
    if (depth >= IC_HEIF_MAX_DERIVATION_DEPTH) return too_deep(s, id);
    uint32_t inputs = identity ? 1 : refs.count; /* iden derives from its first */
    uint64_t sum = 0;
    uint32_t in_w = 0, in_h = 0;
    for (uint32_t i = 0; i < inputs; i++) {
        item_cost input;
        ic_heif_derived_status st = cost_of(s, ref_at(&refs, i), depth + 1, &input);
        if (st != IC_HEIF_DERIVED_OK) return st;
        sum += input.pixels;
        if (input.width > in_w) in_w = input.width;
        if (input.height > in_h) in_h = input.height;
    }
    if (identity) {
        *cost = (item_cost){sum, in_w, in_h};
        return IC_HEIF_DERIVED_OK;
    }
    /* Tiles cover a grid's canvas with at most one partly shown row and column: they decode at
     * most (W + tile width)(H + tile height) pixels; an overlay's inputs, a few layers of it. */
    uint64_t bound = ((uint64_t)canvas_w + in_w) * ((uint64_t)canvas_h + in_h);
    if (memcmp(type, "iovl", 4) == 0) bound *= MAX_OVERLAY_LAYERS;
    if (sum > bound) {
        s->out->item = id;
        s->out->inputs = inputs;
        s->out->decoded_pixels = sum;
        s->out->canvas_width = canvas_w;
        s->out->canvas_height = canvas_h;
        return IC_HEIF_DERIVED_OVERDRAWN;
    }
    *cost = (item_cost){sum, canvas_w, canvas_h};
    return IC_HEIF_DERIVED_OK;
}

/* The file's auxl links with one id, sorted by master, in s->links (malloc'd; NULL when none);
 * false when they cannot be held. */
static bool gather_aux_links(cost_scan *s) {
    ref_walk w;
    item_refs r;
    size_t count = 0;
    s->links = NULL;
    s->link_count = 0;
    if (!refs_begin(&s->children, &w)) return true;
    while (next_refs(&w, &r)) count += memcmp(r.type, "auxl", 4) == 0 && r.count == 1;
    if (count == 0) return true;
    s->links = malloc(count * sizeof *s->links);
    if (!s->links) return false;
    refs_begin(&s->children, &w);
    while (next_refs(&w, &r)) {
        if (memcmp(r.type, "auxl", 4) == 0 && r.count == 1) s->links[s->link_count++] = (aux_link){ref_at(&r, 0), r.from};
    }
    qsort(s->links, s->link_count, sizeof *s->links, by_master);
    return true;
}

ic_heif_derived_status ic_heif_derived_images(const uint8_t *data, size_t size, ic_heif_derived *out) {
    memset(out, 0, sizeof *out);
    cost_scan s = {.data = data, .size = size, .visits = 0, .have_last = false, .out = out};
    uint32_t primary = 0;
    bool has_primary = primary_item(data, size, &s.children, &primary);
    if (!has_primary && !meta_children(data, size, &s.children)) return IC_HEIF_DERIVED_OK;
    item_walk walk;
    if (!items_begin(&s.children, &walk)) return IC_HEIF_DERIVED_OK;
    if (!gather_aux_links(&s)) return IC_HEIF_DERIVED_TOO_MANY;
    ic_heif_derived_status st = IC_HEIF_DERIVED_OK;
    uint32_t item, w, h;
    const uint8_t *kind;
    /* Every item is a place libheif may start decoding (the primary image, a thumbnail, an
     * alpha): each is costed from depth 0. */
    while (st == IC_HEIF_DERIVED_OK && next_item(&walk, &item, &kind)) {
        char type[4];
        memcpy(type, kind, 4);
        int canvas = item_canvas(data, size, &s.children, item, type, &w, &h);
        if (canvas < 0 && has_primary && item == primary) {
            st = IC_HEIF_DERIVED_UNREADABLE;
            break;
        }
        if (canvas > 0 && (uint64_t)w * h >= (uint64_t)out->largest_width * out->largest_height) {
            out->largest_width = w;
            out->largest_height = h;
        }
        item_cost cost;
        st = cost_of(&s, item, 0, &cost);
    }
    free(s.links);
    return st;
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
