/*
 * resample.c — the streaming separable resampler.
 *
 * Rows of premultiplied RGBA8 go in one at a time, top to bottom; output rows
 * come out as soon as every input row they depend on has arrived, so only a
 * window of rows is ever held. Each axis is resampled in up to two stages:
 *   1. exact area averaging (a box filter with fractional coverage at the
 *      edges) when the reduction is large, down to twice the output size;
 *   2. Lanczos-3 to the output size (also used for enlargement).
 * Horizontal stages run on each incoming row (shrinking it early), vertical
 * stages on the resulting narrow rows. All arithmetic is on premultiplied
 * values, so transparent pixels cannot darken their neighbours.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ic_internal.h"

/* Above this reduction an axis is first area-averaged down to 2x the output. */
#define IC_AREA_THRESHOLD 3.0
#define IC_LANCZOS_A 3.0

/* A bank of filters: output j takes count[j] inputs starting at start[j],
 * weighted by coef[j * taps ...]. */
typedef struct ic_bank {
    uint32_t n;
    uint32_t taps;
    uint32_t *start;
    uint32_t *count;
    float *coef;
} ic_bank;

static size_t bank_bytes(uint32_t n, uint32_t taps) {
    return (size_t)n * (2 * sizeof(uint32_t) + (size_t)taps * sizeof(float));
}

static void bank_layout(ic_bank *b, uint32_t n, uint32_t taps, uint8_t *mem) {
    b->n = n;
    b->taps = taps;
    b->coef = (float *)mem;
    b->start = (uint32_t *)(mem + (size_t)n * taps * sizeof(float));
    b->count = b->start + n;
}

/* Taps an area bank needs for reducing `len` input units to n outputs. */
static uint32_t area_taps(double len, uint32_t n) { return (uint32_t)ceil(len / n) + 2; }

/* Output j averages input [off + j*s, off + (j+1)*s), s = len/n; inputs [0, in). */
static void build_area(ic_bank *b, uint32_t in, double off, double len) {
    double s = len / b->n;
    for (uint32_t j = 0; j < b->n; j++) {
        double lo = off + j * s, hi = lo + s;
        if (lo < 0) lo = 0;
        if (hi > in) hi = in;
        uint32_t first = (uint32_t)floor(lo);
        uint32_t last = (uint32_t)ceil(hi);
        if (last <= first) last = first + 1;
        if (last > in) last = in;
        if (first >= last) first = last - 1;
        uint32_t count = last - first;
        if (count > b->taps) count = b->taps;
        float *w = b->coef + (size_t)j * b->taps;
        double total = 0;
        for (uint32_t t = 0; t < count; t++) {
            double a = first + t, z = a + 1;
            double cover = (z < hi ? z : hi) - (a > lo ? a : lo);
            w[t] = cover > 0 ? (float)cover : 0.0f;
            total += w[t];
        }
        for (uint32_t t = 0; t < count; t++) w[t] = total > 0 ? (float)(w[t] / total) : 1.0f / count;
        b->start[j] = first;
        b->count[j] = count;
    }
}

static double lanczos(double x) {
    x = fabs(x);
    if (x < 1e-9) return 1.0;
    if (x >= IC_LANCZOS_A) return 0.0;
    double px = M_PI * x;
    return IC_LANCZOS_A * sin(px) * sin(px / IC_LANCZOS_A) / (px * px);
}

static uint32_t lanczos_taps(double len, uint32_t n) {
    double s = len / n;
    double support = IC_LANCZOS_A * (s > 1 ? s : 1);
    return (uint32_t)ceil(2 * support) + 2;
}

/* Lanczos-3 from input [off, off+len) (inputs 0..in-1, edges replicated) to n outputs. */
static void build_lanczos(ic_bank *b, uint32_t in, double off, double len) {
    double s = len / b->n;
    double scale = s > 1 ? s : 1;
    double support = IC_LANCZOS_A * scale;
    for (uint32_t j = 0; j < b->n; j++) {
        double center = off + (j + 0.5) * s;
        int64_t lo = (int64_t)floor(center - support);
        int64_t hi = (int64_t)ceil(center + support);
        int64_t first = lo < 0 ? 0 : lo;
        int64_t last = hi > (int64_t)in - 1 ? (int64_t)in - 1 : hi;
        if (first > last) first = last;
        uint32_t count = (uint32_t)(last - first + 1);
        if (count > b->taps) count = b->taps;
        float *w = b->coef + (size_t)j * b->taps;
        memset(w, 0, sizeof(float) * count);
        double total = 0;
        for (int64_t x = lo; x <= hi; x++) {
            double weight = lanczos((x + 0.5 - center) / scale);
            if (weight == 0) continue;
            int64_t at = x < first ? first : (x > last ? last : x);
            uint32_t t = (uint32_t)(at - first);
            if (t >= count) t = count - 1;
            w[t] += (float)weight;
            total += weight;
        }
        if (total == 0) {
            w[0] = 1;
            total = 1;
        }
        for (uint32_t t = 0; t < count; t++) w[t] = (float)(w[t] / total);
        b->start[j] = (uint32_t)first;
        b->count[j] = count;
    }
}

/* One axis: optional area stage (in -> mid), then Lanczos (mid -> out). */
typedef struct ic_axis {
    bool area;
    ic_bank area_bank;
    ic_bank lanczos_bank;
    uint32_t mid;
} ic_axis;

static uint32_t axis_mid(double len, uint32_t out) {
    if (len / out <= IC_AREA_THRESHOLD) return 0;
    return out * 2;
}

static size_t axis_bytes(double len, uint32_t out) {
    uint32_t mid = axis_mid(len, out);
    if (!mid) return bank_bytes(out, lanczos_taps(len, out));
    return bank_bytes(mid, area_taps(len, mid)) + bank_bytes(out, lanczos_taps(mid, out));
}

static uint8_t *axis_build(ic_axis *ax, uint8_t *mem, uint32_t in, double off, double len,
                           uint32_t out) {
    ax->mid = axis_mid(len, out);
    ax->area = ax->mid != 0;
    if (ax->area) {
        uint32_t taps = area_taps(len, ax->mid);
        bank_layout(&ax->area_bank, ax->mid, taps, mem);
        build_area(&ax->area_bank, in, off, len);
        mem += bank_bytes(ax->mid, taps);
        taps = lanczos_taps(ax->mid, out);
        bank_layout(&ax->lanczos_bank, out, taps, mem);
        build_lanczos(&ax->lanczos_bank, ax->mid, 0, ax->mid);
        return mem + bank_bytes(out, taps);
    }
    uint32_t taps = lanczos_taps(len, out);
    bank_layout(&ax->lanczos_bank, out, taps, mem);
    build_lanczos(&ax->lanczos_bank, in, off, len);
    return mem + bank_bytes(out, taps);
}

struct ic_scaler {
    uint32_t in_w, in_h, out_w, out_h;
    ic_axis h, v;
    /* Horizontal work rows. */
    float *hmid;   /* h.mid * 4 when h.area */
    float *hrow;   /* out_w * 4: the current input row, horizontally resampled */
    /* Vertical area stage: accumulators of the open mid rows (a ring of 4). */
    float *vacc;
    uint32_t vacc_next;  /* next mid row to complete */
    /* Vertical Lanczos stage: ring of the last `ring` rows it reads. */
    float *ring;
    uint32_t ring_rows;
    uint32_t next_out;   /* next output row to produce */
    uint32_t first_in, last_in; /* input rows that matter */
    /* Destination of the current frame. */
    uint8_t *dst;
    size_t dst_stride;
    size_t bytes;
};

/* Rows of vertical-Lanczos input that must be kept at once. */
static uint32_t ring_size(const ic_axis *v) { return v->lanczos_bank.taps + 1; }

size_t ic_scaler_bytes(uint32_t in_w, uint32_t in_h, const ic_rect *crop, uint32_t out_w,
                       uint32_t out_h) {
    size_t bytes = sizeof(ic_scaler) + axis_bytes(crop->w, out_w) + axis_bytes(crop->h, out_h);
    uint32_t hmid = axis_mid(crop->w, out_w), vmid = axis_mid(crop->h, out_h);
    (void)in_w;
    (void)in_h;
    bytes += (size_t)(hmid + out_w) * 4 * sizeof(float);
    if (vmid) bytes += (size_t)4 * out_w * 4 * sizeof(float);
    uint32_t vtaps = vmid ? lanczos_taps(vmid, out_h) : lanczos_taps(crop->h, out_h);
    bytes += (size_t)(vtaps + 1) * out_w * 4 * sizeof(float);
    return bytes + 64 * 8;
}

static float *carve(uint8_t **mem, size_t floats) {
    uintptr_t p = ((uintptr_t)*mem + 63) & ~(uintptr_t)63;
    *mem = (uint8_t *)(p + floats * sizeof(float));
    return (float *)p;
}

ic_status ic_scaler_create(uint32_t in_w, uint32_t in_h, const ic_rect *crop, uint32_t out_w,
                           uint32_t out_h, ic_scaler **out, ic_error *err) {
    *out = NULL;
    if (!in_w || !in_h || !out_w || !out_h || crop->w <= 0 || crop->h <= 0) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "resample: empty size");
    }
    size_t bytes = ic_scaler_bytes(in_w, in_h, crop, out_w, out_h);
    uint8_t *mem = calloc(1, bytes);
    if (!mem) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "resample: cannot allocate %zu bytes", bytes);
    ic_scaler *s = (ic_scaler *)mem;
    s->bytes = bytes;
    s->in_w = in_w;
    s->in_h = in_h;
    s->out_w = out_w;
    s->out_h = out_h;
    uint8_t *cursor = mem + sizeof *s;
    cursor = axis_build(&s->h, cursor, in_w, crop->x, crop->w, out_w);
    cursor = axis_build(&s->v, cursor, in_h, crop->y, crop->h, out_h);
    if (s->h.area) s->hmid = carve(&cursor, (size_t)s->h.mid * 4);
    s->hrow = carve(&cursor, (size_t)out_w * 4);
    if (s->v.area) s->vacc = carve(&cursor, (size_t)4 * out_w * 4);
    s->ring_rows = ring_size(&s->v);
    s->ring = carve(&cursor, (size_t)s->ring_rows * out_w * 4);
    /* Input rows that contribute to any output row. */
    const ic_bank *first_bank = s->v.area ? &s->v.area_bank : &s->v.lanczos_bank;
    s->first_in = first_bank->start[0];
    s->last_in = first_bank->start[first_bank->n - 1] + first_bank->count[first_bank->n - 1] - 1;
    *out = s;
    return IC_OK;
}

void ic_scaler_free(ic_scaler *s) { free(s); }

size_t ic_scaler_size(const ic_scaler *s) { return s ? s->bytes : 0; }

void ic_scaler_begin_frame(ic_scaler *s, uint8_t *dst, size_t dst_stride) {
    s->dst = dst;
    s->dst_stride = dst_stride;
    s->next_out = 0;
    s->vacc_next = 0;
    if (s->vacc) memset(s->vacc, 0, sizeof(float) * 4 * s->out_w * 4);
}

/* Horizontal pass of one premultiplied RGBA8 row into s->hrow. */
static void horizontal(ic_scaler *s, const uint8_t *row) {
    const ic_bank *lb = &s->h.lanczos_bank;
    if (s->h.area) {
        const ic_bank *ab = &s->h.area_bank;
        for (uint32_t j = 0; j < ab->n; j++) {
            const uint8_t *p = row + 4 * (size_t)ab->start[j];
            const float *w = ab->coef + (size_t)j * ab->taps;
            float r = 0, g = 0, b = 0, a = 0;
            for (uint32_t t = 0; t < ab->count[j]; t++) {
                r += w[t] * p[4 * t];
                g += w[t] * p[4 * t + 1];
                b += w[t] * p[4 * t + 2];
                a += w[t] * p[4 * t + 3];
            }
            float *o = s->hmid + 4 * (size_t)j;
            o[0] = r;
            o[1] = g;
            o[2] = b;
            o[3] = a;
        }
        for (uint32_t j = 0; j < lb->n; j++) {
            const float *p = s->hmid + 4 * (size_t)lb->start[j];
            const float *w = lb->coef + (size_t)j * lb->taps;
            float r = 0, g = 0, b = 0, a = 0;
            for (uint32_t t = 0; t < lb->count[j]; t++) {
                r += w[t] * p[4 * t];
                g += w[t] * p[4 * t + 1];
                b += w[t] * p[4 * t + 2];
                a += w[t] * p[4 * t + 3];
            }
            float *o = s->hrow + 4 * (size_t)j;
            o[0] = r;
            o[1] = g;
            o[2] = b;
            o[3] = a;
        }
        return;
    }
    for (uint32_t j = 0; j < lb->n; j++) {
        const uint8_t *p = row + 4 * (size_t)lb->start[j];
        const float *w = lb->coef + (size_t)j * lb->taps;
        float r = 0, g = 0, b = 0, a = 0;
        for (uint32_t t = 0; t < lb->count[j]; t++) {
            r += w[t] * p[4 * t];
            g += w[t] * p[4 * t + 1];
            b += w[t] * p[4 * t + 2];
            a += w[t] * p[4 * t + 3];
        }
        float *o = s->hrow + 4 * (size_t)j;
        o[0] = r;
        o[1] = g;
        o[2] = b;
        o[3] = a;
    }
}

static inline uint8_t to_u8(float v) {
    if (!(v > 0)) return 0;
    if (v >= 255) return 255;
    return (uint8_t)(v + 0.5f);
}

/* Produces every output row whose inputs are all in the ring (rows < `have`). */
static void emit_ready(ic_scaler *s, uint32_t have) {
    const ic_bank *b = &s->v.lanczos_bank;
    const size_t width = (size_t)s->out_w * 4;
    while (s->next_out < s->out_h) {
        uint32_t k = s->next_out;
        if (b->start[k] + b->count[k] > have) return;
        float *acc = s->hrow; /* free now: reuse as the accumulator */
        memset(acc, 0, sizeof(float) * width);
        const float *w = b->coef + (size_t)k * b->taps;
        for (uint32_t t = 0; t < b->count[k]; t++) {
            const float *src = s->ring + (size_t)((b->start[k] + t) % s->ring_rows) * width;
            const float wt = w[t];
            for (size_t x = 0; x < width; x++) acc[x] += wt * src[x];
        }
        uint8_t *o = s->dst + (size_t)k * s->dst_stride;
        for (uint32_t x = 0; x < s->out_w; x++) {
            uint8_t a = to_u8(acc[4 * x + 3]);
            for (int c = 0; c < 3; c++) {
                uint8_t v = to_u8(acc[4 * x + c]);
                o[4 * x + c] = v > a ? a : v;
            }
            o[4 * x + 3] = a;
        }
        s->next_out++;
    }
}

/* Stores a finished vertical-Lanczos input row `index` in the ring. */
static void ring_put(ic_scaler *s, uint32_t index, const float *row) {
    const size_t width = (size_t)s->out_w * 4;
    memcpy(s->ring + (size_t)(index % s->ring_rows) * width, row, sizeof(float) * width);
    emit_ready(s, index + 1);
}

void ic_scaler_push(ic_scaler *s, uint32_t y, const uint8_t *row) {
    if (y < s->first_in || y > s->last_in || s->next_out >= s->out_h) return;
    horizontal(s, row);
    const size_t width = (size_t)s->out_w * 4;
    if (!s->v.area) {
        ring_put(s, y, s->hrow);
        return;
    }
    /* Vertical area stage: add this row into every open mid row it covers. */
    const ic_bank *ab = &s->v.area_bank;
    for (uint32_t j = s->vacc_next; j < ab->n && ab->start[j] <= y; j++) {
        uint32_t t = y - ab->start[j];
        if (t >= ab->count[j]) continue;
        float *acc = s->vacc + (size_t)(j % 4) * width;
        const float wt = ab->coef[(size_t)j * ab->taps + t];
        for (size_t x = 0; x < width; x++) acc[x] += wt * s->hrow[x];
    }
    /* Mid rows whose last input is this row are complete. */
    while (s->vacc_next < ab->n && ab->start[s->vacc_next] + ab->count[s->vacc_next] - 1 <= y) {
        float *acc = s->vacc + (size_t)(s->vacc_next % 4) * width;
        ring_put(s, s->vacc_next, acc);
        memset(acc, 0, sizeof(float) * width);
        s->vacc_next++;
    }
}

bool ic_scaler_done(const ic_scaler *s) { return s->next_out >= s->out_h; }

uint32_t ic_scaler_first_row(const ic_scaler *s) { return s->first_in; }

uint32_t ic_scaler_last_row(const ic_scaler *s) { return s->last_in; }
