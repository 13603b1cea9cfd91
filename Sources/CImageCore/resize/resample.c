/*
 * resample.c — the streaming separable resampler.
 *
 * Rows of premultiplied RGBA8 go in one at a time, top to bottom; output rows
 * come out as soon as every input row they depend on has arrived, so only a
 * window of rows is ever held. Each axis is resampled in up to two stages:
 *   1. exact area averaging (a box filter with fractional coverage at the
 *      edges) when the reduction is large, down to twice the output size;
 *   2. Lanczos-3 to the output size (also used for enlargement).
 * The horizontal area stage runs on each incoming row (shrinking it early);
 * when the vertical axis has an area stage too, the horizontal Lanczos runs
 * after it, once per row it completes (twice the output height) rather than
 * once per input row; the vertical Lanczos comes last. All arithmetic is on
 * premultiplied values, so transparent pixels cannot darken their neighbours.
 *
 * A frame held whole in memory can also be run in bands of output rows
 * (ic__scaler_run_bands), each reading only the input rows it needs, on
 * scalers that share one set of filter banks (ic__scaler_fork): the bands of a
 * frame then run on two threads, the caller's and a helper's claiming them in
 * turn (common/thread.c), with the pixels of a whole-frame pass.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../image/ic_image_internal.h"
#include "ic_resize_internal.h"

/* The SIMD kernels are picked once, by CPU (see choose_kernels). */
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static void choose_kernels(void);

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
    float *coef4; /* each coefficient repeated 4 times (one per channel), for SIMD */
} ic_bank;

static size_t bank_bytes(uint32_t n, uint32_t taps) {
    return (size_t)n * (2 * sizeof(uint32_t) + (size_t)taps * 5 * sizeof(float));
}

static void bank_layout(ic_bank *b, uint32_t n, uint32_t taps, uint8_t *mem) {
    b->n = n;
    b->taps = taps;
    b->coef4 = (float *)mem;
    b->coef = b->coef4 + (size_t)n * taps * 4;
    b->start = (uint32_t *)(b->coef + (size_t)n * taps);
    b->count = b->start + n;
}

/* Fills coef4 from coef once a bank is built. */
static void bank_expand(ic_bank *b) {
    for (size_t i = 0; i < (size_t)b->n * b->taps; i++) {
        for (int c = 0; c < 4; c++) b->coef4[4 * i + c] = b->coef[i];
    }
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
    bank_expand(b);
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
    bank_expand(b);
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

struct ic__scaler {
    uint32_t in_w, in_h, out_w, out_h;
    ic_axis h, v;
    /* Horizontal work rows. */
    float *rowf;   /* in_w * 4: the current input row as floats */
    float *hmid;   /* h.mid * 4 when h.area */
    float *hrow;   /* out_w * 4: the current input row, horizontally resampled */
    /* Vertical area stage: accumulators of the open mid rows (a ring of 4), vacc_width wide. */
    float *vacc;
    uint32_t vacc_next;  /* next mid row to complete */
    /* Vertical Lanczos stage: ring of the last `ring` rows it reads. */
    float *ring;
    uint32_t ring_rows;
    uint32_t next_out;   /* next output row to produce */
    uint32_t out_end;    /* output rows stop here (out_h, or a band's end) */
    uint32_t first_in, last_in; /* input rows that matter */
    /* Destination of the current frame. */
    uint8_t *dst;
    size_t dst_stride;
};

/* Width of the vertical area stage's rows: the horizontal area stage's output (the horizontal
 * Lanczos follows the vertical area stage), or without one the output width. */
static uint32_t vacc_width(const ic_axis *h, uint32_t out_w) { return h->area ? h->mid : out_w; }

/* Rows of vertical-Lanczos input that must be kept at once. */
static uint32_t ring_size(const ic_axis *v) { return v->lanczos_bank.taps + 1; }

size_t ic__scaler_bytes(uint32_t in_w, uint32_t in_h, const ic__rect *crop, uint32_t out_w,
                       uint32_t out_h) {
    size_t bytes = sizeof(ic__scaler) + axis_bytes(crop->w, out_w) + axis_bytes(crop->h, out_h);
    uint32_t hmid = axis_mid(crop->w, out_w), vmid = axis_mid(crop->h, out_h);
    (void)in_h;
    bytes += (size_t)(in_w + hmid + out_w) * 4 * sizeof(float);
    if (vmid) bytes += (size_t)4 * (hmid ? hmid : out_w) * 4 * sizeof(float);
    uint32_t vtaps = vmid ? lanczos_taps(vmid, out_h) : lanczos_taps(crop->h, out_h);
    bytes += (size_t)(vtaps + 1) * out_w * 4 * sizeof(float);
    return bytes + 64 * 8;
}

static float *carve(uint8_t **mem, size_t floats) {
    uintptr_t p = ((uintptr_t)*mem + 63) & ~(uintptr_t)63;
    *mem = (uint8_t *)(p + floats * sizeof(float));
    return (float *)p;
}

ic_status ic__scaler_create(uint32_t in_w, uint32_t in_h, const ic__rect *crop, uint32_t out_w,
                           uint32_t out_h, ic__scaler **out, ic_error *err) {
    *out = NULL;
    if (!in_w || !in_h || !out_w || !out_h || crop->w <= 0 || crop->h <= 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "resample: empty size");
    }
    size_t bytes = ic__scaler_bytes(in_w, in_h, crop, out_w, out_h);
    pthread_once(&kernels_once, choose_kernels);
    uint8_t *mem = calloc(1, bytes);
    if (!mem) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "resample: cannot allocate %zu bytes", bytes);
    ic__scaler *s = (ic__scaler *)mem;
    s->in_w = in_w;
    s->in_h = in_h;
    s->out_w = out_w;
    s->out_h = out_h;
    uint8_t *cursor = mem + sizeof *s;
    cursor = axis_build(&s->h, cursor, in_w, crop->x, crop->w, out_w);
    cursor = axis_build(&s->v, cursor, in_h, crop->y, crop->h, out_h);
    s->rowf = carve(&cursor, (size_t)in_w * 4);
    if (s->h.area) s->hmid = carve(&cursor, (size_t)s->h.mid * 4);
    s->hrow = carve(&cursor, (size_t)out_w * 4);
    if (s->v.area) s->vacc = carve(&cursor, (size_t)4 * vacc_width(&s->h, out_w) * 4);
    s->ring_rows = ring_size(&s->v);
    s->ring = carve(&cursor, (size_t)s->ring_rows * out_w * 4);
    s->out_end = out_h;
    /* Input rows that contribute to any output row. */
    const ic_bank *first_bank = s->v.area ? &s->v.area_bank : &s->v.lanczos_bank;
    s->first_in = first_bank->start[0];
    s->last_in = first_bank->start[first_bank->n - 1] + first_bank->count[first_bank->n - 1] - 1;
    *out = s;
    return IC_OK;
}

void ic__scaler_free(ic__scaler *s) { free(s); }

/* Bytes of a scaler's work rows (rowf, hmid, hrow, vacc, ring), alignment included. */
static size_t work_bytes(const ic__scaler *s) {
    size_t floats = (size_t)(s->in_w + (s->h.area ? s->h.mid : 0) + s->out_w) * 4 +
                    (s->v.area ? (size_t)4 * vacc_width(&s->h, s->out_w) * 4 : 0) +
                    (size_t)s->ring_rows * s->out_w * 4;
    return floats * sizeof(float) + 64 * 6;
}

size_t ic__scaler_fork_bytes(const ic__scaler *s) { return sizeof(ic__scaler) + work_bytes(s); }

ic_status ic__scaler_fork(const ic__scaler *s, ic__scaler **out, ic_error *err) {
    *out = NULL;
    size_t bytes = ic__scaler_fork_bytes(s);
    uint8_t *mem = calloc(1, bytes);
    if (!mem) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "resample: cannot allocate %zu bytes", bytes);
    ic__scaler *f = (ic__scaler *)mem;
    *f = *s; /* the banks stay the parent's */
    uint8_t *cursor = mem + sizeof *f;
    f->rowf = carve(&cursor, (size_t)s->in_w * 4);
    f->hmid = s->h.area ? carve(&cursor, (size_t)s->h.mid * 4) : NULL;
    f->hrow = carve(&cursor, (size_t)s->out_w * 4);
    f->vacc = s->v.area ? carve(&cursor, (size_t)4 * vacc_width(&s->h, s->out_w) * 4) : NULL;
    f->ring = carve(&cursor, (size_t)s->ring_rows * s->out_w * 4);
    f->dst = NULL;
    *out = f;
    return IC_OK;
}

void ic__scaler_begin_frame(ic__scaler *s, uint8_t *dst, size_t dst_stride) {
    s->dst = dst;
    s->dst_stride = dst_stride;
    s->next_out = 0;
    s->out_end = s->out_h;
    s->vacc_next = 0;
    if (s->vacc) memset(s->vacc, 0, sizeof(float) * 4 * vacc_width(&s->h, s->out_w) * 4);
}

/* Converts `count` RGBA8 pixels to floats. */
static void widen(const uint8_t *row, float *out, uint32_t count) {
    uint32_t x = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (; x + 4 <= count; x += 4) {
        __m128i px = _mm_loadu_si128((const __m128i *)(row + 4 * (size_t)x));
        __m128i lo = _mm_unpacklo_epi8(px, zero), hi = _mm_unpackhi_epi8(px, zero);
        float *o = out + 4 * (size_t)x;
        _mm_storeu_ps(o, _mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)));
        _mm_storeu_ps(o + 4, _mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)));
        _mm_storeu_ps(o + 8, _mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)));
        _mm_storeu_ps(o + 12, _mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero)));
    }
#endif
    for (; x < count; x++) {
        for (int c = 0; c < 4; c++) out[4 * (size_t)x + c] = row[4 * (size_t)x + c];
    }
}

/* One horizontal filter bank over a float RGBA row (SSE2, the x86-64 baseline). */
static void filter_row_base(const ic_bank *b, const float *in, float *out) {
    for (uint32_t j = 0; j < b->n; j++) {
        const float *p = in + 4 * (size_t)b->start[j];
        const uint32_t count = b->count[j];
#if defined(__SSE2__)
        const float *w4 = b->coef4 + (size_t)j * b->taps * 4;
        __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
        uint32_t t = 0;
        for (; t + 2 <= count; t += 2) {
            acc0 = _mm_add_ps(acc0, _mm_mul_ps(_mm_loadu_ps(w4 + 4 * t), _mm_loadu_ps(p + 4 * t)));
            acc1 = _mm_add_ps(acc1, _mm_mul_ps(_mm_loadu_ps(w4 + 4 * t + 4), _mm_loadu_ps(p + 4 * t + 4)));
        }
        if (t < count) acc0 = _mm_add_ps(acc0, _mm_mul_ps(_mm_loadu_ps(w4 + 4 * t), _mm_loadu_ps(p + 4 * t)));
        _mm_storeu_ps(out + 4 * (size_t)j, _mm_add_ps(acc0, acc1));
#else
        const float *w = b->coef + (size_t)j * b->taps;
        float r = 0, g = 0, bl = 0, a = 0;
        for (uint32_t t = 0; t < count; t++) {
            r += w[t] * p[4 * t];
            g += w[t] * p[4 * t + 1];
            bl += w[t] * p[4 * t + 2];
            a += w[t] * p[4 * t + 3];
        }
        float *o = out + 4 * (size_t)j;
        o[0] = r;
        o[1] = g;
        o[2] = bl;
        o[3] = a;
#endif
    }
}

/* acc[i] (+)= w * src[i] for n floats; the compiler vectorises these loops. */
#define IC_AXPY_BODY(op) for (size_t i = 0; i < n; i++) acc[i] op w * src[i];
static void scale_base(float *acc, const float *src, float w, size_t n) { IC_AXPY_BODY(=) }
static void axpy_base(float *acc, const float *src, float w, size_t n) { IC_AXPY_BODY(+=) }

#if defined(__x86_64__) && defined(__clang__) && !defined(IC_NO_CPU_DISPATCH)
#include <immintrin.h>
#define IC_HAVE_AVX2_RESAMPLE 1

/* Two taps (two pixels, eight floats) a fused multiply-add: taps 4i and 4i+1 go into one
 * accumulator, 4i+2 and 4i+3 into the other, a last pair into the first; the halves are
 * added, then a last odd tap. */
__attribute__((target("avx2,fma"))) static void filter_row_avx2(const ic_bank *b, const float *in,
                                                                 float *out) {
    const uint32_t n = b->n;
    const size_t bank_stride = (size_t)b->taps * 4;
    const uint32_t *starts = b->start, *counts = b->count;
    const float *w = b->coef4;
    for (uint32_t j = 0; j < n; j++, w += bank_stride) {
        const float *p = in + 4 * (size_t)starts[j];
        const float *wt = w;
        const uint32_t count = counts[j];
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        for (uint32_t quads = count / 4; quads; quads--, p += 16, wt += 16) {
            acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(wt), _mm256_loadu_ps(p), acc0);
            acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(wt + 8), _mm256_loadu_ps(p + 8), acc1);
        }
        if (count & 2) {
            acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(wt), _mm256_loadu_ps(p), acc0);
            p += 8;
            wt += 8;
        }
        __m256 sum = _mm256_add_ps(acc0, acc1);
        __m128 r = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
        if (count & 1) r = _mm_fmadd_ps(_mm_loadu_ps(wt), _mm_loadu_ps(p), r);
        _mm_storeu_ps(out + 4 * (size_t)j, r);
    }
}

/* widen, eight pixels a step. */
__attribute__((target("avx2"))) static void widen_avx2(const uint8_t *row, float *out, uint32_t count) {
    uint32_t x = 0;
    for (; x + 8 <= count; x += 8) {
        const uint8_t *p = row + 4 * (size_t)x;
        float *o = out + 4 * (size_t)x;
        for (int k = 0; k < 4; k++) {
            __m128i two = _mm_loadl_epi64((const __m128i *)(p + 8 * k));
            _mm256_storeu_ps(o + 8 * k, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(two)));
        }
    }
    widen(row + 4 * (size_t)x, out + 4 * (size_t)x, count - x);
}

__attribute__((target("avx2,fma"))) static void scale_avx2(float *acc, const float *src, float w,
                                                            size_t n) {
    IC_AXPY_BODY(=)
}

__attribute__((target("avx2,fma"))) static void axpy_avx2(float *acc, const float *src, float w,
                                                           size_t n) {
    IC_AXPY_BODY(+=)
}
#endif

typedef struct resample_kernels {
    void (*widen)(const uint8_t *, float *, uint32_t);
    void (*filter_row)(const ic_bank *, const float *, float *);
    void (*scale)(float *, const float *, float, size_t);
    void (*axpy)(float *, const float *, float, size_t);
} resample_kernels;

static resample_kernels kernels;

static void choose_kernels(void) {
    kernels = (resample_kernels){widen, filter_row_base, scale_base, axpy_base};
#ifdef IC_HAVE_AVX2_RESAMPLE
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        kernels = (resample_kernels){widen_avx2, filter_row_avx2, scale_avx2, axpy_avx2};
    }
#endif
}

static void filter_row(const ic_bank *b, const float *in, float *out) { kernels.filter_row(b, in, out); }

/* One RGBA8 row into s->rowf: widened, or (`straight`) premultiplied as it is read. */
static void load_row(ic__scaler *s, const uint8_t *row, bool straight) {
    if (straight) {
        ic__premultiply_to_float(row, s->rowf, s->in_w);
    } else {
        kernels.widen(row, s->rowf, s->in_w);
    }
}

/* Horizontal pass of one RGBA8 row (see load_row) into `out` (out_w * 4 floats). */
static void horizontal(ic__scaler *s, const uint8_t *row, bool straight, float *out) {
    load_row(s, row, straight);
    if (s->h.area) {
        filter_row(&s->h.area_bank, s->rowf, s->hmid);
        filter_row(&s->h.lanczos_bank, s->hmid, out);
    } else {
        filter_row(&s->h.lanczos_bank, s->rowf, out);
    }
}

/* Premultiplied floats to RGBA8: rounded, clamped to 0...255, colour <= alpha. */
static void narrow(const float *in, uint8_t *out, uint32_t count) {
    uint32_t x = 0;
#if defined(__SSE2__)
    const __m128 lo = _mm_setzero_ps(), hi = _mm_set1_ps(255.0f);
    for (; x + 2 <= count; x += 2) {
        __m128 a = _mm_min_ps(_mm_max_ps(_mm_loadu_ps(in + 4 * (size_t)x), lo), hi);
        __m128 b = _mm_min_ps(_mm_max_ps(_mm_loadu_ps(in + 4 * (size_t)x + 4), lo), hi);
        a = _mm_min_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(3, 3, 3, 3)));
        b = _mm_min_ps(b, _mm_shuffle_ps(b, b, _MM_SHUFFLE(3, 3, 3, 3)));
        __m128i v = _mm_packs_epi32(_mm_cvtps_epi32(a), _mm_cvtps_epi32(b));
        _mm_storel_epi64((__m128i *)(out + 4 * (size_t)x), _mm_packus_epi16(v, v));
    }
#endif
    for (; x < count; x++) {
        const float *p = in + 4 * (size_t)x;
        float a = p[3] < 0 ? 0 : (p[3] > 255 ? 255 : p[3]);
        for (int c = 0; c < 3; c++) {
            float v = p[c] < 0 ? 0 : (p[c] > 255 ? 255 : p[c]);
            out[4 * (size_t)x + c] = (uint8_t)lrintf(v < a ? v : a);
        }
        out[4 * (size_t)x + 3] = (uint8_t)lrintf(a);
    }
}

/* Produces every output row whose inputs are all in the ring (rows < `have`). */
static void emit_ready(ic__scaler *s, uint32_t have) {
    const ic_bank *b = &s->v.lanczos_bank;
    const size_t width = (size_t)s->out_w * 4;
    while (s->next_out < s->out_end) {
        uint32_t k = s->next_out;
        if (b->start[k] + b->count[k] > have) return;
        float *acc = s->hrow; /* free now: reuse as the accumulator */
        const float *w = b->coef + (size_t)k * b->taps;
        const float *first = s->ring + (size_t)(b->start[k] % s->ring_rows) * width;
        kernels.scale(acc, first, w[0], width);
        for (uint32_t t = 1; t < b->count[k]; t++) {
            kernels.axpy(acc, s->ring + (size_t)((b->start[k] + t) % s->ring_rows) * width, w[t], width);
        }
        narrow(acc, s->dst + (size_t)k * s->dst_stride, s->out_w);
        s->next_out++;
    }
}

/* The ring slot of vertical-Lanczos input row `index`. */
static float *ring_slot(ic__scaler *s, uint32_t index) {
    return s->ring + (size_t)(index % s->ring_rows) * s->out_w * 4;
}

static void push(ic__scaler *s, uint32_t y, const uint8_t *row, bool straight) {
    if (y < s->first_in || y > s->last_in || s->next_out >= s->out_end) return;
    if (!s->v.area) {
        horizontal(s, row, straight, ring_slot(s, y));
        emit_ready(s, y + 1);
        return;
    }
    /* The horizontal area stage, or the horizontal Lanczos when there is none. */
    load_row(s, row, straight);
    const float *src = s->hrow;
    if (s->h.area) {
        filter_row(&s->h.area_bank, s->rowf, s->hmid);
        src = s->hmid;
    } else {
        filter_row(&s->h.lanczos_bank, s->rowf, s->hrow);
    }
    /* Vertical area stage: add this row into every open mid row it covers. */
    const size_t width = (size_t)vacc_width(&s->h, s->out_w) * 4;
    const ic_bank *ab = &s->v.area_bank;
    for (uint32_t j = s->vacc_next; j < ab->n && ab->start[j] <= y; j++) {
        uint32_t t = y - ab->start[j];
        if (t >= ab->count[j]) continue;
        kernels.axpy(s->vacc + (size_t)(j % 4) * width, src, ab->coef[(size_t)j * ab->taps + t], width);
    }
    /* Mid rows whose last input is this row are complete: the horizontal Lanczos, if it is
     * still to come, takes them to the output width. */
    while (s->vacc_next < ab->n && ab->start[s->vacc_next] + ab->count[s->vacc_next] - 1 <= y) {
        float *acc = s->vacc + (size_t)(s->vacc_next % 4) * width;
        if (s->h.area) {
            filter_row(&s->h.lanczos_bank, acc, ring_slot(s, s->vacc_next));
        } else {
            memcpy(ring_slot(s, s->vacc_next), acc, sizeof(float) * width);
        }
        memset(acc, 0, sizeof(float) * width);
        s->vacc_next++;
        emit_ready(s, s->vacc_next);
    }
}

void ic__scaler_push(ic__scaler *s, uint32_t y, const uint8_t *row) { push(s, y, row, false); }

void ic__scaler_push_straight(ic__scaler *s, uint32_t y, const uint8_t *row) { push(s, y, row, true); }

bool ic__scaler_done(const ic__scaler *s) { return s->next_out >= s->out_h; }

uint32_t ic__scaler_rows_written(const ic__scaler *s) { return s->next_out; }

uint32_t ic__scaler_first_row(const ic__scaler *s) { return s->first_in; }

uint32_t ic__scaler_last_row(const ic__scaler *s) { return s->last_in; }

/* The inputs filter outputs [begin, end) of bank b read: [*first, *last]. */
static void bank_span(const ic_bank *b, uint32_t begin, uint32_t end, uint32_t *first, uint32_t *last) {
    *first = b->start[begin];
    *last = b->start[begin] + b->count[begin] - 1;
    for (uint32_t j = begin + 1; j < end; j++) {
        if (b->start[j] < *first) *first = b->start[j];
        if (b->start[j] + b->count[j] - 1 > *last) *last = b->start[j] + b->count[j] - 1;
    }
}

/* Writes output rows [out_begin, out_end) of a frame held whole in memory (src: input rows
 * src_stride apart, `straight` as for push) to dst, reading only the input rows they depend
 * on; the rows are bit-identical to those of the same frame pushed whole. */
static void run_band(ic__scaler *s, const uint8_t *src, size_t src_stride, bool straight, uint8_t *dst,
                     size_t dst_stride, uint32_t out_begin, uint32_t out_end) {
    if (out_end > s->out_h) out_end = s->out_h;
    if (out_begin >= out_end) return;
    ic__scaler_begin_frame(s, dst, dst_stride);
    s->next_out = out_begin;
    s->out_end = out_end;
    /* The vertical-Lanczos inputs of the band: input rows, or mid rows of the area stage. */
    uint32_t first, last;
    bank_span(&s->v.lanczos_bank, out_begin, out_end, &first, &last);
    if (s->v.area) {
        /* The area stage starts at the band's first mid row, its accumulators clear: each
         * mid row then sums the same input rows in the same order as in a whole frame. */
        s->vacc_next = first;
        bank_span(&s->v.area_bank, first, last + 1, &first, &last);
    }
    for (uint32_t y = first; y <= last && s->next_out < s->out_end; y++) {
        push(s, y, src + (size_t)y * src_stride, straight);
    }
}

/* Input rows that two adjacent bands both run through the horizontal pass (about). */
static double band_overlap(const ic__scaler *s) {
    double rows = s->v.lanczos_bank.taps - 1;
    if (s->v.area) rows *= (double)(s->last_in - s->first_in + 1) / s->v.mid;
    return rows;
}

/* Smallest frame (input pixels read) worth a helper thread's start (tens of microseconds). */
#define HELPER_MIN_PIXELS IC_HELPER_MIN_PIXELS(1u << 20)
/* Fewest output rows split into bands. */
#define HELPER_MIN_ROWS 16
/* Bands are made few enough that the input rows two bands both read cost at most this
 * share of the work, and at least 2 and at most HELPER_MAX_BANDS of them. */
#define HELPER_BAND_OVERHEAD 0.03
#define HELPER_MAX_BANDS 8

uint32_t ic__scaler_helper_bands(const ic__scaler *s) {
    uint64_t rows = s->last_in - s->first_in + 1;
    if (s->out_h < HELPER_MIN_ROWS || rows * s->in_w < HELPER_MIN_PIXELS) return 0;
    double fit = HELPER_BAND_OVERHEAD * (double)rows / band_overlap(s);
    return fit < 2 ? 2 : (fit > HELPER_MAX_BANDS ? HELPER_MAX_BANDS : (uint32_t)fit);
}

/* One frame run in bands: the caller's scaler and the helper's fork of it. */
typedef struct band_job {
    pthread_t caller;
    ic__scaler *callers, *helpers;
    const uint8_t *src;
    size_t src_stride;
    bool straight;
    uint8_t *dst;
    size_t dst_stride;
} band_job;

/* Output rows [begin, end), with the scaler of the thread running them. */
static void run_job_bands(void *ctx, uint32_t begin, uint32_t end) {
    band_job *job = ctx;
    ic__scaler *s = pthread_equal(pthread_self(), job->caller) ? job->callers : job->helpers;
    run_band(s, job->src, job->src_stride, job->straight, job->dst, job->dst_stride, begin, end);
}

bool ic__scaler_run_bands(ic__scaler *s, ic__scaler *fork, const uint8_t *src, size_t src_stride,
                         bool straight, uint8_t *dst, size_t dst_stride, uint32_t bands, bool helper) {
    band_job job = {.caller = pthread_self(), .callers = s, .helpers = fork, .src = src,
                    .src_stride = src_stride, .straight = straight, .dst = dst, .dst_stride = dst_stride};
    if (bands == 0) bands = 1;
    if (bands > s->out_h) bands = s->out_h;
    uint32_t rows = (s->out_h + bands - 1) / bands;
    if (helper) {
        ic__range_helper *h = ic__range_helper_start(run_job_bands, &job, 0, rows);
        if (!h) return false;
        ic__range_helper_extend(h, s->out_h);
        ic__range_helper_finish(h, true);
    } else {
        for (uint32_t b = bands; b-- > 0;) {
            run_band(b % 2 ? fork : s, src, src_stride, straight, dst, dst_stride, b * rows, (b + 1) * rows);
        }
    }
    /* `s` ends as a whole-frame pass leaves it: every output row written. */
    ic__scaler_begin_frame(s, dst, dst_stride);
    s->next_out = s->out_h;
    return true;
}
