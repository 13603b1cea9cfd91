/*
 * rotate.c — ic_rotate: inverse mapping with fixed-point coordinates along each output row,
 * Catmull-Rom bicubic on premultiplied pixels; only the covered span of a row is sampled.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "ic_op_rotate.h"
#include "ic_transform.h"

#include "ic_color_ops_internal.h"

static const char *const WHAT = "rotate";

/* Fraction bits of the sample phase (1/1024 pixel). */
#define PHASE_BITS 10
#define PHASES (1 << PHASE_BITS)
/* Fraction bits of the fixed-point coordinates. */
#define COORD_BITS 32

/* Catmull-Rom weights of taps -1, 0, 1, 2 for every phase. */
static float weights[PHASES][4];
static pthread_once_t weights_once = PTHREAD_ONCE_INIT;

static void make_weights(void) {
    for (int p = 0; p < PHASES; p++) {
        double t = (double)p / PHASES, t2 = t * t, t3 = t2 * t;
        weights[p][0] = (float)((-t3 + 2 * t2 - t) / 2);
        weights[p][1] = (float)((3 * t3 - 5 * t2 + 2) / 2);
        weights[p][2] = (float)((-3 * t3 + 4 * t2 + t) / 2);
        weights[p][3] = (float)((t3 - t2) / 2);
    }
}

/* Four lanes: one pixel's channels (the compiler's vector extension: SSE2 or NEON registers). */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef uint8_t v4u8 __attribute__((vector_size(4)));

static inline v4f load_pixel(const uint8_t *p) {
    v4u8 b;
    memcpy(&b, p, 4);
    return __builtin_convertvector(b, v4f);
}

/* Lane-wise larger and smaller of a and b. */
static inline v4f vmax(v4f a, v4f b) {
    v4i m = a > b;
    return (v4f)(((v4i)a & m) | ((v4i)b & ~m));
}

static inline v4f vmin(v4f a, v4f b) {
    v4i m = a < b;
    return (v4f)(((v4i)a & m) | ((v4i)b & ~m));
}

/* One output pixel from the 4x4 block at `p` (rows `stride` bytes apart). */
static inline void cubic_pixel(uint8_t *restrict dst, const uint8_t *restrict p, size_t stride,
                               const float *restrict wx, const float *restrict wy) {
    v4f acc = {0, 0, 0, 0};
    for (int j = 0; j < 4; j++) {
        const uint8_t *row = p + (size_t)j * stride;
        v4f h = load_pixel(row) * wx[0] + load_pixel(row + 4) * wx[1] + load_pixel(row + 8) * wx[2] +
                load_pixel(row + 12) * wx[3];
        acc += h * wy[j];
    }
    /* Rounded by truncation after adding 0.5; colours at most alpha, alpha at most 255. */
    const v4f zero = {0, 0, 0, 0}, top = {255.5f, 255.5f, 255.5f, 255.5f};
    acc = vmax(acc + 0.5f, zero);
    v4f alpha = {acc[3], acc[3], acc[3], acc[3]};
    acc = vmin(acc, vmin(alpha, top));
    v4i v = __builtin_convertvector(acc, v4i);
    v4u8 out = __builtin_convertvector(v, v4u8);
    memcpy(dst, &out, 4);
}

/* The geometry of one rotation: the inverse map's start and steps, in source pixel indices. */
typedef struct rot_map {
    double cos_t, sin_t;
    double sx0, sy0; /* sample point of output pixel (0, 0) */
    int64_t dx_fx, dx_fy; /* steps along a row (x, y), fixed point */
} rot_map;

static inline int64_t to_fixed(double v) { return (int64_t)llround(v * 4294967296.0); }

/*
 * The output pixels x of [0, n) whose sample s0 + x·d lies within (lo, hi), widened
 * (`grow`) or narrowed by a rounding margin; [*x0, *x1) may be empty.
 */
static void span(double s0, double d, double lo, double hi, uint32_t n, int grow, int64_t *x0,
                 int64_t *x1) {
    const double m = grow ? 1e-2 : -1e-2;
    lo -= m;
    hi += m;
    double a, b;
    if (fabs(d) < 1e-12) {
        a = (s0 > lo && s0 < hi) ? 0 : 1;
        b = (s0 > lo && s0 < hi) ? n : 0;
    } else {
        a = (lo - s0) / d;
        b = (hi - s0) / d;
        if (a > b) {
            double t = a;
            a = b;
            b = t;
        }
        a = grow ? floor(a) : ceil(a);
        b = grow ? ceil(b) + 1 : floor(b);
    }
    *x0 = a < 0 ? 0 : (a > n ? n : (int64_t)a);
    *x1 = b < 0 ? 0 : (b > n ? n : (int64_t)b);
    if (*x1 < *x0) *x1 = *x0;
}

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Pixels [x0, x1) of row `y`, each 4x4 block read through the image bounds (edge pixels). */
static void sample_edge(uint8_t *restrict out, const uint8_t *restrict frame, const ic_image *src,
                        int64_t fx, int64_t fy, int64_t dfx, int64_t dfy, int64_t x0, int64_t x1,
                        const uint8_t bg[4]) {
    const int64_t half = (int64_t)1 << (COORD_BITS - PHASE_BITS - 1);
    for (int64_t x = x0; x < x1; x++) {
        int64_t rx = fx + x * dfx + half, ry = fy + x * dfy + half;
        int64_t ix = rx >> COORD_BITS, iy = ry >> COORD_BITS;
        uint8_t block[4 * 16];
        for (int j = 0; j < 4; j++) {
            int64_t yy = iy - 1 + j;
            for (int i = 0; i < 4; i++) {
                int64_t xx = ix - 1 + i;
                const uint8_t *from = (yy >= 0 && yy < src->height && xx >= 0 && xx < src->width)
                                          ? frame + (size_t)yy * src->stride + 4 * (size_t)xx
                                          : bg;
                memcpy(block + 16 * j + 4 * i, from, 4);
            }
        }
        cubic_pixel(out + 4 * (size_t)x, block, 16,
                    weights[(rx >> (COORD_BITS - PHASE_BITS)) & (PHASES - 1)],
                    weights[(ry >> (COORD_BITS - PHASE_BITS)) & (PHASES - 1)]);
    }
}

/* Pixels [x0, x1) of a row whose 4x4 blocks lie inside the image. */
static void sample_inside(uint8_t *restrict out, const uint8_t *restrict frame, size_t stride,
                          int64_t fx, int64_t fy, int64_t dfx, int64_t dfy, int64_t x0, int64_t x1) {
    const int64_t half = (int64_t)1 << (COORD_BITS - PHASE_BITS - 1);
    for (int64_t x = x0; x < x1; x++) {
        int64_t rx = fx + x * dfx + half, ry = fy + x * dfy + half;
        size_t ix = (size_t)(rx >> COORD_BITS), iy = (size_t)(ry >> COORD_BITS);
        cubic_pixel(out + 4 * (size_t)x, frame + (iy - 1) * stride + 4 * (ix - 1), stride,
                    weights[(rx >> (COORD_BITS - PHASE_BITS)) & (PHASES - 1)],
                    weights[(ry >> (COORD_BITS - PHASE_BITS)) & (PHASES - 1)]);
    }
}

/* Fills pixels [x0, x1) of a row with the background. */
static void fill(uint8_t *restrict out, int64_t x0, int64_t x1, const uint8_t bg[4]) {
    uint32_t v;
    memcpy(&v, bg, 4);
    uint32_t *restrict px = (uint32_t *)(void *)out;
    for (int64_t x = x0; x < x1; x++) px[x] = v;
}

/* Row `y` of one frame: background, edge samples, inside samples, edge samples, background. */
static void rotate_row(uint8_t *restrict out, const uint8_t *restrict frame, const ic_image *src,
                       uint32_t out_w, uint32_t y, const rot_map *m, const uint8_t bg[4]) {
    double sx = m->sx0 + y * m->sin_t, sy = m->sy0 + y * m->cos_t;
    double w = src->width, h = src->height;
    /* Covered: some tap of the block is inside; inside: every tap is. */
    int64_t ca, cb, ca2, cb2, ia, ib, ia2, ib2;
    span(sx, m->cos_t, -3, w + 1, out_w, 1, &ca, &cb);
    span(sy, -m->sin_t, -3, h + 1, out_w, 1, &ca2, &cb2);
    span(sx, m->cos_t, 1, w - 2, out_w, 0, &ia, &ib);
    span(sy, -m->sin_t, 1, h - 2, out_w, 0, &ia2, &ib2);
    int64_t c0 = max64(ca, ca2), c1 = min64(cb, cb2);
    if (c1 < c0) c1 = c0;
    int64_t i0 = max64(max64(ia, ia2), c0), i1 = min64(min64(ib, ib2), c1);
    if (i1 <= i0 || src->width < 4 || src->height < 4) i0 = i1 = c0;
    int64_t fx = to_fixed(sx), fy = to_fixed(sy);
    fill(out, 0, c0, bg);
    sample_edge(out, frame, src, fx, fy, m->dx_fx, m->dx_fy, c0, i0, bg);
    sample_inside(out, frame, src->stride, fx, fy, m->dx_fx, m->dx_fy, i0, i1);
    sample_edge(out, frame, src, fx, fy, m->dx_fx, m->dx_fy, i1, c1, bg);
    fill(out, c1, out_w, bg);
}

/* The exact path for a multiple of 90° that keeps every pixel, or -1. */
static int exact_turns(double degrees, int fit_size, const ic_image *src) {
    if (fmod(degrees, 90.0) != 0) return -1;
    int turns = (int)(degrees / 90.0) & 3;
    if (!fit_size && turns % 2 == 1 && src->width != src->height) return -1;
    return turns;
}

ic_status ic_rotate(const ic_image *src, double degrees, int fit_size, const uint8_t background[4],
                    const ic_limits *limits, const int *cancel_flag, ic_image **out, ic_error *err) {
    if (!src || !out || !background) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "rotate: NULL argument");
    *out = NULL;
    if (!isfinite(degrees)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "rotate: the angle %g is not a finite number of degrees",
                            degrees);
    }
    degrees = fmod(degrees, 360.0);
    if (degrees < 0) degrees += 360.0;
    int turns = exact_turns(degrees, fit_size, src);
    if (turns >= 0) {
        static const ic_orientation by_turns[4] = {IC_ORIENT_UP, IC_ORIENT_RIGHT, IC_ORIENT_DOWN, IC_ORIENT_LEFT};
        return ic_image_orient(src, by_turns[turns], out, err);
    }
    const double rad = degrees * (M_PI / 180.0);
    rot_map m;
    m.cos_t = cos(rad);
    m.sin_t = sin(rad);
    double w = src->width, h = src->height;
    double out_wd = w, out_hd = h;
    if (fit_size) {
        out_wd = ceil(w * fabs(m.cos_t) + h * fabs(m.sin_t) - 1e-6);
        out_hd = ceil(w * fabs(m.sin_t) + h * fabs(m.cos_t) - 1e-6);
        if (out_wd < 1) out_wd = 1;
        if (out_hd < 1) out_hd = 1;
    }
    ic_limits defaults;
    if (!limits) {
        ic_limits_init(&defaults);
        limits = &defaults;
    }
    double pixels = out_wd * out_hd;
    if (out_wd > UINT32_MAX || out_hd > UINT32_MAX || (limits->max_pixels && pixels > (double)limits->max_pixels)) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED,
                            "rotate: the rotated canvas %.0fx%.0f (%.0f pixels) is over the limit of %llu pixels",
                            out_wd, out_hd, pixels, (unsigned long long)limits->max_pixels);
    }
    double bytes = pixels * 4.0 * src->frame_count;
    if (limits->max_memory_bytes && bytes > (double)limits->max_memory_bytes) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED,
                            "rotate: the rotated frames need %.0f bytes, over the limit of %llu bytes", bytes,
                            (unsigned long long)limits->max_memory_bytes);
    }
    uint32_t out_w = (uint32_t)out_wd, out_h = (uint32_t)out_hd;
    ic_image *dst;
    ic_status st = ic__image_create_in(src->ic_pool, out_w, out_h, src->frame_count, &dst, err);
    if (st != IC_OK) return st;
    ic__image_copy_metadata(dst, src);
    pthread_once(&weights_once, make_weights);
    /* Output pixel centre (x + 0.5, y + 0.5) maps to source point (u, v); the sample index is u - 0.5. */
    double ox = 0.5 - out_wd / 2, oy = 0.5 - out_hd / 2;
    m.sx0 = ox * m.cos_t + oy * m.sin_t + w / 2 - 0.5;
    m.sy0 = -ox * m.sin_t + oy * m.cos_t + h / 2 - 0.5;
    m.dx_fx = to_fixed(m.cos_t);
    m.dx_fy = to_fixed(-m.sin_t);
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f);
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t y = 0; y < out_h; y++) {
            if (ic__op_cancelled(cancel_flag, y, WHAT, dst, err)) return IC_ERR_CANCELLED;
            rotate_row(to + (size_t)y * dst->stride, from, src, out_w, y, &m, background);
        }
    }
    if (src->is_opaque && background[3] == 255) {
        dst->is_opaque = 1;
    } else {
        ic__image_update_opacity(dst);
    }
    *out = dst;
    return IC_OK;
}
