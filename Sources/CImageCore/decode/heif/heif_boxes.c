/*
 * heif_boxes.c — what ImageKit reads from a HEIF file's ISO-BMFF boxes itself, before or
 * besides libheif: meta → pitm (the primary item), iinf (the items' types), iloc (their
 * data), iref (what derived items derive from), iprp → ipco (the properties) and ipma (which
 * properties an item has, in order).
 *
 * - The primary item's orientation: libheif applies irot and imir but does not report them,
 *   and ImageKit reports an orientation. Only the primary item's own properties count (not
 *   those of an item an 'iden' or grid item derives from).
 * - The number of file-level meta boxes (a HEIF file has one).
 * - The largest picture an HEVC parameter set in the file declares (in every hvcC property
 *   and in every hvc1 item's data, gathered from its extents as libheif gathers them).
 * - The derived images (grid, iovl, iden): the largest canvas one declares, what decoding
 *   each costs, its inputs followed to a bounded depth, and whether a grid's tiles cover its
 *   canvas.
 *
 * Every read is bounded by its box.
 */
#include <stdlib.h>
#include <string.h>

#include "../../common/ic_bytes.h"
#include "ic_heif_internal.h"

typedef struct box {
    const uint8_t *body;
    size_t size;
} box;

/* The next box of `rest` (its type and body), which it leaves; false at the end or at a box
 * that does not fit. */
static bool next_box(box *rest, char type[4], box *out) {
    const uint8_t *p = rest->body;
    size_t n = rest->size;
    if (n < 8) return false;
    uint64_t size = ic__be32(p);
    size_t header = 8;
    if (size == 1) {
        if (n < 16) return false;
        size = (uint64_t)ic__be32(p + 8) << 32 | ic__be32(p + 12);
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
        /* As libheif applies it: axis 1 mirrors left-right (F), axis 0 top-bottom (F
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
        *id = ic__be16(pitm.body + 4);
    } else {
        if (pitm.size < 8) return false;
        *id = ic__be32(pitm.body + 4);
    }
    return true;
}

/* ipma's entries one at a time: each an item id and its property associations. */
typedef struct ipma_walk {
    box ipco;
    const uint8_t *at;
    const uint8_t *end;
    uint32_t left;
    size_t id_bytes;
    size_t each;
} ipma_walk;

static bool ipma_begin(const box *children, ipma_walk *w) {
    box iprp, ipma;
    if (!find_box(children->body, children->size, "iprp", &iprp) ||
        !find_box(iprp.body, iprp.size, "ipco", &w->ipco) || !find_box(iprp.body, iprp.size, "ipma", &ipma) ||
        ipma.size < 8) {
        return false;
    }
    w->id_bytes = ipma.body[0] < 1 ? 2 : 4;
    w->each = (ipma.body[3] & 1) ? 2 : 1;
    w->left = ic__be32(ipma.body + 4);
    w->at = ipma.body + 8;
    w->end = ipma.body + ipma.size;
    return true;
}

/* The next entry: its item id and where it starts (*entry); false after the last or at one
 * that does not fit. */
static bool next_ipma_entry(ipma_walk *w, uint32_t *id, const uint8_t **entry) {
    if (w->left == 0 || (size_t)(w->end - w->at) < w->id_bytes + 1) return false;
    size_t count = w->at[w->id_bytes];
    if ((size_t)(w->end - w->at - w->id_bytes - 1) / w->each < count) return false;
    *id = w->id_bytes == 2 ? ic__be16(w->at) : ic__be32(w->at);
    *entry = w->at;
    w->at += w->id_bytes + 1 + count * w->each;
    w->left--;
    return true;
}

/* One item's properties (its ipma entry, in order), one at a time. */
typedef struct prop_walk {
    box ipco;
    const uint8_t *at;
    unsigned left;
    bool wide;
} prop_walk;

/* The properties of the ipma entry at `entry` (from next_ipma_entry). */
static void props_from(const ipma_walk *ipma, const uint8_t *entry, prop_walk *w) {
    w->ipco = ipma->ipco;
    w->left = entry[ipma->id_bytes];
    w->at = entry + ipma->id_bytes + 1;
    w->wide = ipma->each == 2;
}

/* Item `id`'s properties: its first ipma entry, as libheif takes it. */
static bool props_begin(const box *children, uint32_t id, prop_walk *w) {
    ipma_walk ipma;
    uint32_t item;
    const uint8_t *entry;
    if (!ipma_begin(children, &ipma)) return false;
    while (next_ipma_entry(&ipma, &item, &entry)) {
        if (item == id) {
            props_from(&ipma, entry, w);
            return true;
        }
    }
    return false;
}

static bool next_prop(prop_walk *w, char type[4], box *prop) {
    while (w->left > 0) {
        uint32_t index = w->wide ? ic__be16(w->at) & 0x7FFF : w->at[0] & 0x7F;
        w->at += w->wide ? 2 : 1;
        w->left--;
        if (index && nth_box(&w->ipco, index, type, prop)) return true;
    }
    return false;
}

uint8_t ic__heif_orientation(const uint8_t *data, size_t size) {
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
            *id = id_bytes == 2 ? ic__be16(infe.body + 4) : ic__be32(infe.body + 4);
            *type = infe.body + 4 + id_bytes + 2;
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
           : bytes == 2 ? ic__be16(*at)
           : bytes == 4 ? ic__be32(*at)
                        : (uint64_t)ic__be32(*at) << 32 | ic__be32(*at + 4);
    *at += bytes;
    return true;
}

/* An iloc offset, length, base offset or index whose size iloc gives as `bytes`: libheif
 * reads one of 4 or 8 bytes, and for any other size reads nothing and takes 0. */
static bool sized_field(const uint8_t **at, const uint8_t *end, unsigned bytes, uint64_t *out) {
    if (bytes == 4 || bytes == 8) return field(at, end, bytes, out);
    *out = 0;
    return true;
}

/* libheif's limit on an item's extents (MAX_ILOC_EXTENTS_PER_ITEM): with more, it
 * reads no file at all. */
#define MAX_EXTENTS 32

/* An item's data as libheif reads it: its extents, one after the other. */
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

/* iloc's entries one at a time, read as libheif reads them (see sized_field): a version
 * above 2 reads as 2, indices only from version 2. */
typedef struct iloc_walk {
    const uint8_t *at;
    const uint8_t *end;
    uint64_t left;
    uint8_t version;
    unsigned offset_size;
    unsigned length_size;
    unsigned base_size;
    unsigned index_size;
    unsigned id_size; /* the item count and each item's id */
} iloc_walk;

static bool iloc_begin(const box *children, iloc_walk *w) {
    box iloc;
    if (!find_box(children->body, children->size, "iloc", &iloc) || iloc.size < 8) return false;
    const uint8_t *p = iloc.body;
    w->version = p[0];
    w->offset_size = p[4] >> 4;
    w->length_size = p[4] & 15;
    w->base_size = p[5] >> 4;
    w->index_size = w->version >= 2 ? p[5] & 15 : 0;
    w->id_size = w->version < 2 ? 2 : 4;
    w->at = p + 6;
    w->end = iloc.body + iloc.size;
    return field(&w->at, w->end, w->id_size, &w->left);
}

/* One iloc entry: its item, construction method, base offset and extents (still to read). */
typedef struct iloc_entry {
    uint32_t item;
    unsigned method;
    uint64_t base;
    uint64_t extents;
    const uint8_t *first_extent;
} iloc_entry;

/* The next entry, which it leaves behind; false after the last or at one libheif would not
 * read (it then reads no file at all). */
static bool next_iloc_entry(iloc_walk *w, iloc_entry *e) {
    uint64_t item, data_reference_index, index, offset, length;
    if (w->left == 0 || !field(&w->at, w->end, w->id_size, &item)) return false;
    e->item = (uint32_t)item;
    e->method = 0;
    if (w->version >= 1) {
        if (w->end - w->at < 2) return false;
        e->method = w->at[1] & 15;
        w->at += 2;
    }
    if (!field(&w->at, w->end, 2, &data_reference_index) || !sized_field(&w->at, w->end, w->base_size, &e->base) ||
        !field(&w->at, w->end, 2, &e->extents) || e->extents > MAX_EXTENTS) {
        return false;
    }
    e->first_extent = w->at;
    for (uint64_t i = 0; i < e->extents; i++) {
        if (!sized_field(&w->at, w->end, w->index_size, &index) || !sized_field(&w->at, w->end, w->offset_size, &offset) ||
            !sized_field(&w->at, w->end, w->length_size, &length)) {
            return false;
        }
    }
    w->left--;
    return true;
}

/* The data of iloc entry `e` (from walk `w`), as libheif gathers it: every extent in the
 * file (construction method 0) or in idat (1), a length of 0 being no bytes; false when
 * libheif could not read it either (another method, out of bounds). An extent in idat may
 * reach a few bytes past idat's body, as libheif allows (it compares with the box's size,
 * header included): a superset of what libheif reads. */
static bool entry_data(const uint8_t *data, size_t size, const box *children, const iloc_walk *w,
                       const iloc_entry *e, item_data *out) {
    const uint8_t *from = data;
    size_t from_size = size;
    if (e->method == 1) {
        box idat;
        if (!find_box(children->body, children->size, "idat", &idat)) return false;
        size_t left = (size_t)(data + size - idat.body);
        from = idat.body;
        from_size = idat.size + 16 < left ? idat.size + 16 : left;
    } else if (e->method > 1) {
        return false;
    }
    const uint8_t *p = e->first_extent;
    out->parts = 0;
    out->size = 0;
    for (uint64_t i = 0; i < e->extents; i++) {
        uint64_t index, offset, length;
        sized_field(&p, w->end, w->index_size, &index);
        sized_field(&p, w->end, w->offset_size, &offset);
        sized_field(&p, w->end, w->length_size, &length);
        if (e->base > from_size || offset > from_size - e->base || length > from_size - e->base - offset) return false;
        out->part[out->parts++] = (box){from + e->base + offset, (size_t)length};
        out->size += length;
    }
    return true;
}

/* ---- Items by id. ---- */

/* An item's entry in a box (its type in iinf, its ipma or iloc entry, its dimg references). */
typedef struct id_entry {
    uint32_t id;
    const uint8_t *at;
} id_entry;

/* A box's entries sorted by item id, the first in the box first (libheif takes the first
 * entry for an item in each of these boxes): a scan over every item finds each in log n.
 * Looking them up one by one along the boxes, a file of 20 000 items took a minute. */
typedef struct id_table {
    id_entry *v;
    size_t n;
    size_t capacity;
} id_table;

static bool table_add(id_table *t, uint32_t id, const uint8_t *at) {
    if (t->n == t->capacity) {
        size_t capacity = t->capacity ? t->capacity * 2 : 16;
        id_entry *v = realloc(t->v, capacity * sizeof *v);
        if (!v) return false;
        t->v = v;
        t->capacity = capacity;
    }
    t->v[t->n++] = (id_entry){id, at};
    return true;
}

static int by_id(const void *a, const void *b) {
    const id_entry *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Sorts a table by id, the first in the box first (an empty table has no array to sort). */
static void table_sort(id_table *t) {
    if (t->n > 1) qsort(t->v, t->n, sizeof *t->v, by_id);
}

/* Item `id`'s first entry, or NULL. */
static const uint8_t *table_find(const id_table *t, uint32_t id) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < t->n && t->v[lo].id == id ? t->v[lo].at : NULL;
}

/* A HEIF file's items: iinf's types, ipma's and iloc's entries, by item id. */
typedef struct heif_items {
    const uint8_t *data;
    size_t size;
    box children;
    id_table types; /* at: the item type (4 bytes) */
    ipma_walk ipma;
    id_table props; /* at: the ipma entry */
    iloc_walk iloc;
    id_table locations; /* at: the iloc entry */
} heif_items;

static void items_free(heif_items *ix) {
    free(ix->types.v);
    free(ix->props.v);
    free(ix->locations.v);
}

/* Indexes the items of the file's meta box; false (nothing held) without one or without
 * memory for the tables (*no_memory then set). */
static bool items_index(const uint8_t *data, size_t size, heif_items *ix, bool *no_memory) {
    memset(ix, 0, sizeof *ix);
    *no_memory = false;
    ix->data = data;
    ix->size = size;
    if (!meta_children(data, size, &ix->children)) return false;
    item_walk items;
    uint32_t id;
    const uint8_t *at;
    bool ok = true;
    if (items_begin(&ix->children, &items)) {
        while (ok && next_item(&items, &id, &at)) ok = table_add(&ix->types, id, at);
    }
    if (ipma_begin(&ix->children, &ix->ipma)) {
        ipma_walk w = ix->ipma;
        while (ok && next_ipma_entry(&w, &id, &at)) ok = table_add(&ix->props, id, at);
    }
    if (iloc_begin(&ix->children, &ix->iloc)) {
        iloc_walk w = ix->iloc;
        iloc_entry e;
        for (at = w.at; ok && next_iloc_entry(&w, &e); at = w.at) ok = table_add(&ix->locations, e.item, at);
    }
    if (!ok) {
        items_free(ix);
        *no_memory = true;
        return false;
    }
    table_sort(&ix->types);
    table_sort(&ix->props);
    table_sort(&ix->locations);
    return true;
}

/* Item `id`'s type, or false. */
static bool item_type(const heif_items *ix, uint32_t id, char type[4]) {
    const uint8_t *at = table_find(&ix->types, id);
    if (at) memcpy(type, at, 4);
    return at != NULL;
}

/* Item `id`'s properties, or false. */
static bool item_props(const heif_items *ix, uint32_t id, prop_walk *w) {
    const uint8_t *at = table_find(&ix->props, id);
    if (at) props_from(&ix->ipma, at, w);
    return at != NULL;
}

/* Item `id`'s data (see entry_data), or false. */
static bool item_payload(const heif_items *ix, uint32_t id, item_data *out) {
    const uint8_t *at = table_find(&ix->locations, id);
    if (!at) return false;
    iloc_walk w = ix->iloc;
    iloc_entry e;
    w.at = at;
    w.left = 1;
    return next_iloc_entry(&w, &e) && entry_data(ix->data, ix->size, &ix->children, &w, &e, out);
}

/* The canvas item `id` (of `type`) declares when it is a grid or overlay: 1 and the size,
 * 0 when it is neither, -1 when its data cannot be read. */
static int item_canvas(const heif_items *ix, uint32_t id, const char type[4], uint32_t *width, uint32_t *height) {
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
    if (!item_payload(ix, id, &payload) || !item_read(&payload, 0, head, 2)) return -1;
    bool wide = head[1] & 1;
    if (!item_read(&payload, 0, head, skip + (wide ? 8 : 4))) return -1;
    const uint8_t *q = head + skip;
    *width = wide ? ic__be32(q) : ic__be16(q);
    *height = wide ? ic__be32(q + 4) : ic__be16(q + 2);
    return 1;
}

/* A grid item's rows and columns (from its data's third and fourth bytes), or false. */
static bool grid_layout(const heif_items *ix, uint32_t id, uint32_t *rows, uint32_t *columns) {
    item_data payload;
    uint8_t head[4];
    if (!item_payload(ix, id, &payload) || !item_read(&payload, 0, head, 4)) return false;
    *rows = (uint32_t)head[2] + 1;
    *columns = (uint32_t)head[3] + 1;
    return true;
}

uint64_t ic__heif_item_count(const uint8_t *data, size_t size) {
    box children;
    item_walk walk;
    uint32_t item;
    const uint8_t *kind;
    uint64_t count = 0;
    if (!meta_children(data, size, &children) || !items_begin(&children, &walk)) return 0;
    while (next_item(&walk, &item, &kind)) count++;
    return count;
}

/* ---- The HEVC pictures libde265 will allocate. ---- */

/* A picture's samples, twice over (luma and chroma: 4:0:0, 4:2:0, 4:2:2, 4:4:4). */
static uint64_t twice_samples(const ic__hevc_picture *p) {
    static const unsigned per_pixel[4] = {2, 3, 4, 6};
    return (uint64_t)p->width * p->height * per_pixel[p->chroma_format & 3];
}

/* The SPS pictures of an item or a file, gathered one NAL unit at a time: the largest (in
 * samples), and the narrowest and shortest a decoder would put out. */
typedef struct sps_pictures {
    bool found;
    ic__hevc_picture largest;
    uint32_t least_visible_width;
    uint32_t least_visible_height;
} sps_pictures;

/* Adds the picture the NAL unit `nal` declares, if it is an SPS libde265 accepts. */
static void consider(const uint8_t *nal, size_t n, sps_pictures *acc) {
    ic__hevc_picture pic;
    if (!ic__hevc_sps_picture(nal, n, &pic)) return;
    if (!acc->found || twice_samples(&pic) > twice_samples(&acc->largest)) acc->largest = pic;
    if (!acc->found || pic.visible_width < acc->least_visible_width) acc->least_visible_width = pic.visible_width;
    if (!acc->found || pic.visible_height < acc->least_visible_height) acc->least_visible_height = pic.visible_height;
    acc->found = true;
}

/* The NAL units of an hvcC box (its arrays, each NAL with a 16-bit length), as libheif
 * reads them. */
static void hvcc_pictures(const box *hvcc, sps_pictures *acc) {
    if (hvcc->size < 23) return;
    const uint8_t *p = hvcc->body + 23, *end = hvcc->body + hvcc->size;
    unsigned arrays = hvcc->body[22];
    for (unsigned a = 0; a < arrays; a++) {
        if (end - p < 3) return;
        unsigned units = ic__be16(p + 1);
        p += 3;
        for (unsigned u = 0; u < units; u++) {
            if (end - p < 2) return;
            size_t n = ic__be16(p);
            p += 2;
            if (n > (size_t)(end - p)) return;
            consider(p, n, acc);
            p += n;
        }
    }
}

/* The NAL units of an hvc1 item's data (each with a 32-bit length, as libheif's libde265
 * plugin reads them: it stops at a length past the end, and then decodes nothing). */
static void item_pictures(const item_data *d, sps_pictures *acc) {
    uint64_t at = 0;
    uint8_t head[IC_HEVC_SPS_BYTES];
    while (d->size - at >= 4) {
        item_read(d, at, head, 4);
        uint64_t n = ic__be32(head);
        at += 4;
        if (n > d->size - at) return;
        size_t take = n < sizeof head ? (size_t)n : sizeof head;
        item_read(d, at, head, take);
        consider(head, take, acc);
        at += n;
    }
}

/* The largest picture (in samples) any HEVC SPS in the file declares, in an hvcC property or
 * in an hvc1 item's data: libde265 allocates each picture it decodes at its SPS's size,
 * whatever the item's ispe says. True with *out set, false when the file has none. */
static bool largest_picture(const heif_items *ix, ic__hevc_picture *out) {
    sps_pictures acc = {.found = false};
    box iprp, ipco;
    if (find_box(ix->children.body, ix->children.size, "iprp", &iprp) && find_box(iprp.body, iprp.size, "ipco", &ipco)) {
        box rest = ipco, property;
        char type[4];
        while (next_box(&rest, type, &property)) {
            if (memcmp(type, "hvcC", 4) == 0) hvcc_pictures(&property, &acc);
        }
    }
    /* Every item of type hvc1 (an item's first infe: its first entry in the sorted table). */
    item_data payload;
    for (size_t i = 0; i < ix->types.n; i++) {
        const id_entry *e = &ix->types.v[i];
        if ((i == 0 || e[-1].id != e->id) && memcmp(e->at, "hvc1", 4) == 0 && item_payload(ix, e->id, &payload)) {
            item_pictures(&payload, &acc);
        }
    }
    if (acc.found) *out = acc.largest;
    return acc.found;
}

/* ---- Derived images (grid, iovl, iden): their canvases and what decoding them costs. ---- */

/* An overlay's inputs may cover its canvas this many times over (layers). */
#define MAX_OVERLAY_LAYERS 16

/* iref's entries one at a time, as libheif reads them: each a box header (whose size it
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
    bool large = ic__be32(w->at) == 1, uuid = memcmp(w->at + 4, "uuid", 4) == 0;
    size_t header = 8 + (large ? 8 : 0) + (uuid ? 16 : 0);
    if ((size_t)(w->end - w->at) < header + w->id_bytes + 2) return false;
    memcpy(r->type, w->at + 4, 4);
    const uint8_t *p = w->at + header;
    r->from = w->id_bytes == 2 ? ic__be16(p) : ic__be32(p);
    r->count = ic__be16(p + w->id_bytes);
    r->ids = p + w->id_bytes + 2;
    r->id_bytes = w->id_bytes;
    size_t available = (size_t)(w->end - r->ids) / w->id_bytes;
    if (r->count > available) r->count = (uint32_t)available;
    w->at = r->ids + (size_t)r->count * w->id_bytes;
    return true;
}

static uint32_t ref_at(const item_refs *r, uint32_t i) {
    const uint8_t *p = r->ids + (size_t)i * r->id_bytes;
    return r->id_bytes == 2 ? ic__be16(p) : ic__be32(p);
}

/* An auxiliary image and the image it belongs to (an auxl reference with one id). libheif
 * decodes an image's alpha with it, and that image's alpha with that: every such pair is
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
    const heif_items *ix;
    ref_walk refs;
    id_table inputs; /* the dimg entries of iref, by the item they are from */
    uint32_t visits;
    aux_link *links; /* sorted by master */
    size_t link_count;
    /* The last coded item costed and the depth it was costed at (a bomb repeats one tile):
     * reused at that depth or shallower, where its auxiliary images reach no deeper. */
    bool have_last;
    uint32_t last_id;
    unsigned last_depth;
    item_cost last;
    ic__heif_derived *out;
} cost_scan;

/* The pictures the SPSs of coded item `id` declare: in its hvcC properties or its data. */
static sps_pictures coded_pictures(const cost_scan *s, uint32_t id) {
    sps_pictures acc = {.found = false};
    prop_walk w;
    char type[4];
    box prop;
    item_data payload;
    if (item_props(s->ix, id, &w)) {
        while (next_prop(&w, type, &prop)) {
            if (memcmp(type, "hvcC", 4) == 0) hvcc_pictures(&prop, &acc);
        }
    }
    if (item_payload(s->ix, id, &payload)) item_pictures(&payload, &acc);
    return acc;
}

/* Whether libheif writes every pixel of grid `id`'s `width` x `height` canvas. It
 * allocates the canvas without clearing it, places each tile at the sum of the ispe widths
 * (heights) before it, and copies the picture the tile decodes to, cut at the canvas: a tile
 * without an ispe, or one that decodes smaller than its ispe, leaves pixels nobody wrote,
 * whose bytes are another request's. So: every tile an HEVC-coded item with an ispe and no
 * property that changes its size (clap, irot), all the same size, together reaching the
 * canvas's edges, and every SPS of each declaring a picture that fills it. */
static bool grid_covered(const cost_scan *s, uint32_t id, const item_refs *refs, uint32_t width, uint32_t height) {
    uint32_t rows, columns;
    /* Other counts of tiles libheif refuses itself. */
    if (!grid_layout(s->ix, id, &rows, &columns) || refs->count != rows * columns) return true;
    uint32_t tile_w = 0, tile_h = 0;
    for (uint32_t i = 0; i < rows * columns; i++) {
        uint32_t tile = ref_at(refs, i);
        char type[4];
        prop_walk w;
        if (!item_type(s->ix, tile, type) || memcmp(type, "hvc1", 4) != 0 || !item_props(s->ix, tile, &w)) return false;
        uint32_t ispe_w = 0, ispe_h = 0;
        box prop;
        while (next_prop(&w, type, &prop)) {
            if (memcmp(type, "clap", 4) == 0 || memcmp(type, "irot", 4) == 0) return false;
            if (memcmp(type, "ispe", 4) == 0 && prop.size >= 12) { /* libheif takes the last */
                ispe_w = ic__be32(prop.body + 4);
                ispe_h = ic__be32(prop.body + 8);
            }
        }
        if (ispe_w == 0 || ispe_h == 0 || (i > 0 && (ispe_w != tile_w || ispe_h != tile_h))) return false;
        tile_w = ispe_w;
        tile_h = ispe_h;
        sps_pictures pics = coded_pictures(s, tile);
        if (!pics.found || pics.least_visible_width < tile_w || pics.least_visible_height < tile_h) return false;
    }
    return (uint64_t)tile_w * columns >= width && (uint64_t)tile_h * rows >= height;
}

/* Item `from`'s dimg references: the first such iref entry, as libheif takes them. */
static bool derived_inputs(const cost_scan *s, uint32_t from, item_refs *out) {
    const uint8_t *at = table_find(&s->inputs, from);
    if (!at) return false;
    ref_walk w = s->refs;
    w.at = at;
    return next_refs(&w, out);
}

static ic__heif_derived_status too_deep(cost_scan *s, uint32_t id) {
    s->out->item = id;
    return IC_HEIF_DERIVED_TOO_DEEP;
}

/* Costs item `id` at `depth` into *cost: IC_HEIF_DERIVED_OK, or why libheif must not decode
 * the file. Its auxiliary images are followed too (for the depth; their pixels are not
 * counted). An item libheif cannot decode (unknown, unreadable) costs nothing. */
static ic__heif_derived_status cost_of(cost_scan *s, uint32_t id, unsigned depth, item_cost *cost) {
    if (++s->visits > IC_HEIF_MAX_DERIVATION_VISITS) return IC_HEIF_DERIVED_TOO_MANY;
    if (s->have_last && s->last_id == id && depth <= s->last_depth) {
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
        ic__heif_derived_status st = cost_of(s, link->aux, depth + 1, &aux);
        if (st != IC_HEIF_DERIVED_OK) return st;
    }
    char type[4];
    if (!item_type(s->ix, id, type)) return IC_HEIF_DERIVED_OK;
    if (memcmp(type, "hvc1", 4) == 0) {
        sps_pictures pics = coded_pictures(s, id);
        const ic__hevc_picture *pic = &pics.largest;
        if (pics.found) *cost = (item_cost){(uint64_t)pic->width * pic->height, pic->width, pic->height};
        s->have_last = true;
        s->last_id = id;
        s->last_depth = depth;
        s->last = *cost;
        return IC_HEIF_DERIVED_OK;
    }
    bool identity = memcmp(type, "iden", 4) == 0;
    uint32_t canvas_w = 0, canvas_h = 0;
    if (!identity && item_canvas(s->ix, id, type, &canvas_w, &canvas_h) <= 0) {
        return IC_HEIF_DERIVED_OK;
    }
    item_refs refs;
    if (!derived_inputs(s, id, &refs) || refs.count == 0) return IC_HEIF_DERIVED_OK;
    if (depth >= IC_HEIF_MAX_DERIVATION_DEPTH) return too_deep(s, id);
    uint32_t inputs = identity ? 1 : refs.count; /* iden derives from its first */
    uint64_t sum = 0;
    uint32_t in_w = 0, in_h = 0;
    for (uint32_t i = 0; i < inputs; i++) {
        item_cost input;
        ic__heif_derived_status st = cost_of(s, ref_at(&refs, i), depth + 1, &input);
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
    /* After the inputs and the bound: a cycle, or a bomb, is named as such. */
    if (memcmp(type, "grid", 4) == 0 && !grid_covered(s, id, &refs, canvas_w, canvas_h)) {
        s->out->item = id;
        s->out->canvas_width = canvas_w;
        s->out->canvas_height = canvas_h;
        return IC_HEIF_DERIVED_UNCOVERED;
    }
    *cost = (item_cost){sum, canvas_w, canvas_h};
    return IC_HEIF_DERIVED_OK;
}

/* Reads iref once: its auxl links with one id, sorted by master, into s->links, and its dimg
 * entries by the item they are from into s->inputs (both malloc'd); false without memory. */
static bool gather_references(cost_scan *s) {
    item_refs r;
    size_t links = 0;
    if (!refs_begin(&s->ix->children, &s->refs)) return true;
    ref_walk w = s->refs;
    for (const uint8_t *at = w.at; next_refs(&w, &r); at = w.at) {
        links += memcmp(r.type, "auxl", 4) == 0 && r.count == 1;
        if (memcmp(r.type, "dimg", 4) == 0 && !table_add(&s->inputs, r.from, at)) return false;
    }
    table_sort(&s->inputs);
    if (links == 0) return true;
    s->links = malloc(links * sizeof *s->links);
    if (!s->links) return false;
    w = s->refs;
    while (next_refs(&w, &r)) {
        if (memcmp(r.type, "auxl", 4) == 0 && r.count == 1) s->links[s->link_count++] = (aux_link){ref_at(&r, 0), r.from};
    }
    qsort(s->links, s->link_count, sizeof *s->links, by_master);
    return true;
}

/* Costs every item (see cost_of) into *out: the largest canvas, or why libheif must not
 * decode the file. */
static ic__heif_derived_status derived_images(const heif_items *ix, ic__heif_derived *out) {
    cost_scan s = {.ix = ix, .visits = 0, .links = NULL, .link_count = 0, .have_last = false, .out = out};
    box pitm_children;
    uint32_t primary = 0;
    bool has_primary = primary_item(ix->data, ix->size, &pitm_children, &primary);
    ic__heif_derived_status st = gather_references(&s) ? IC_HEIF_DERIVED_OK : IC_HEIF_DERIVED_NO_MEMORY;
    /* Every item is a place libheif may start decoding (the primary image, a thumbnail, an
     * alpha): each is costed from depth 0, by its first infe. */
    for (size_t i = 0; st == IC_HEIF_DERIVED_OK && i < ix->types.n; i++) {
        const id_entry *e = &ix->types.v[i];
        if (i > 0 && e[-1].id == e->id) continue;
        char type[4];
        uint32_t w, h;
        memcpy(type, e->at, 4);
        int canvas = item_canvas(ix, e->id, type, &w, &h);
        if (canvas < 0 && has_primary && e->id == primary) {
            st = IC_HEIF_DERIVED_UNREADABLE;
            break;
        }
        if (canvas > 0 && (uint64_t)w * h >= (uint64_t)out->largest_width * out->largest_height) {
            out->largest_width = w;
            out->largest_height = h;
        }
        item_cost cost;
        st = cost_of(&s, e->id, 0, &cost);
    }
    free(s.links);
    free(s.inputs.v);
    return st;
}

ic__heif_derived_status ic__heif_scan_items(const uint8_t *data, size_t size, ic__heif_scan *out) {
    memset(out, 0, sizeof *out);
    heif_items ix;
    bool no_memory;
    if (!items_index(data, size, &ix, &no_memory)) return no_memory ? IC_HEIF_DERIVED_NO_MEMORY : IC_HEIF_DERIVED_OK;
    for (size_t i = 0; i < ix.types.n; i++) {
        if (memcmp(ix.types.v[i].at, "av01", 4) == 0) out->has_av1 = true;
    }
    out->has_picture = largest_picture(&ix, &out->picture);
    ic__heif_derived_status st = derived_images(&ix, &out->derived);
    items_free(&ix);
    return st;
}

unsigned ic__heif_meta_boxes(const uint8_t *data, size_t size) {
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
