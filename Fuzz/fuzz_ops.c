/* fuzz_ops.c — image operations chained on decoded images. The input is decoded as it is
 * (within the fuzz limits; decoders ignore trailing bytes) and its last bytes choose one to
 * three operations from OPS (blur, sharpen, rounded corners, tint, grayscale, colour adjust,
 * pixelate, overlay, rotate, gravity and smart crop, fill by gravity or smart, padding,
 * extending to an aspect ratio, trim) and their parameters, sometimes out of range and sometimes with
 * the cancellation flag already set. Each result must have the source's frame count, every
 * pixel readable and premultiplied, an honest is_opaque; a failure must return nothing and
 * say why. Each result is the next operation's source. */
#include <math.h>
#include <string.h>

#include "fuzz_common.h"

/* Parameter bytes an operation reads. */
#define OP_PARAM_BYTES 3
/* Bytes a step takes from the tail: the operation, its parameters, a flags byte. */
#define STEP_BYTES (2 + OP_PARAM_BYTES)
#define MAX_STEPS 3

typedef ic_status (*op_apply)(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                              ic_error *err);

/* A sigma from one byte: up to 2 pixels in steps of 1/128, or up to 8 on images of at most
 * 4,096 pixels in all (the cost grows with sigma; a fuzzer wants many runs a second); 0 and
 * a too large one sometimes. */
static double fuzz_sigma(const ic_image *src, uint8_t b) {
    if (b == 255) return NAN;
    if (b == 254) return IC_BLUR_MAX_SIGMA + 1;
    uint64_t pixels = (uint64_t)src->width * src->height * src->frame_count;
    return b / (pixels <= 4096 ? 32.0 : 128.0);
}

static ic_status apply_blur(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                            ic_error *err) {
    return ic_blur(src, fuzz_sigma(src, p[0]), cancel, out, err);
}

static ic_status apply_sharpen(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                               ic_error *err) {
    /* Amounts 0...12.75 (over the maximum past 10); thresholds -8...247. */
    return ic_sharpen(src, fuzz_sigma(src, p[0]), p[1] / 20.0, (int)p[2] - 8, cancel, out, err);
}

/* Radius, corners and border from the bytes; a high bit asks for a negative radius (refused). */
static ic_status apply_corners(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                               ic_error *err) {
    double radius = (p[2] & 0x80) ? -1.0 : p[0] * 0.75;
    uint8_t border[4] = {p[1], p[2], p[0], (uint8_t)(p[1] | p[2])};
    return ic_round_corners(src, radius, p[2] & 0x1F, (p[1] & 15) * 0.5, border, cancel, out, err);
}

static ic_status apply_tint(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                            ic_error *err) {
    uint8_t rgba[4] = {p[0], p[1], p[2], (uint8_t)(p[0] ^ p[1])};
    return ic_tint(src, rgba, cancel, out, err);
}

static ic_status apply_grayscale(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                                 ic_error *err) {
    (void)p;
    return ic_grayscale(src, cancel, out, err);
}

/* Factors 0...8 in steps of 1/32; 255 asks for one out of range (refused). */
static ic_status apply_adjust(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                              ic_error *err) {
    double b = p[0] == 255 ? 1000.0 : p[0] / 32.0;
    return ic_color_adjust(src, b, p[1] / 32.0, p[2] / 32.0, cancel, out, err);
}

/* Any block size up to 2^16 - 1, 0 included (refused). */
static ic_status apply_pixelate(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                                ic_error *err) {
    return ic_pixelate(src, (uint32_t)p[0] | (uint32_t)p[1] << 8, cancel, out, err);
}

/* A mark cut from the source itself (its top-left corner, 1...61 x 1...61 pixels from p[2]),
 * drawn at every gravity (focal points from p[1] and p[2]), with offsets inside, beyond and
 * past the bound (refused), opacities 0...1 and sometimes NaN (refused), once or tiled with a
 * spacing of 0...15 pixels. */
static ic_status apply_overlay(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                               ic_error *err) {
    static const int32_t offsets[8] = {0, 1, -1, 7, -30, 200, -200, IC_COMPOSITE_MAX_OFFSET + 1};
    uint32_t mw = 1 + (p[2] & 15) * 4, mh = 1 + (p[2] >> 4) * 4;
    ic_image *mark;
    ic_status st = ic_crop(src, 0, 0, mw < src->width ? mw : src->width, mh < src->height ? mh : src->height,
                           &mark, err);
    if (st != IC_OK) {
        *out = NULL;
        return st;
    }
    ic_composite_options o;
    memset(&o, 0, sizeof o);
    o.gravity.kind = (ic_gravity_kind)((p[0] & 15) % 10);
    o.gravity.x = (p[1] & 15) / 15.0;
    o.gravity.y = (p[2] >> 4) / 15.0;
    o.offset_x = offsets[(p[0] >> 5) & 7];
    o.offset_y = offsets[(p[1] >> 4) & 7];
    o.opacity = p[1] == 255 ? NAN : p[1] / 254.0;
    o.tile = (p[0] >> 4) & 1;
    o.spacing = p[2] & 15;
    st = ic_composite(src, mark, &o, cancel, out, err);
    ic_image_free(mark);
    return st;
}

/* An angle of each kind from two bytes: quarter turns (exact), near them, any angle in 1/64
 * degree, huge and negative ones, or not a number (refused); the canvas fit or kept, a
 * transparent or coloured background; the result bounded like a fuzz decode. */
static ic_status apply_rotate(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                              ic_error *err) {
    int v = (int)p[0] | (int)(p[1] & 0x3F) << 8;
    double degrees;
    switch (p[1] >> 6) {
    case 0: degrees = 90.0 * (v % 9) - 360.0; break;
    case 1: degrees = 90.0 * (v % 5) + (v >> 3) * 1e-4 - 0.3; break;
    case 2: degrees = (v - 8192) / 64.0; break;
    default: degrees = v == 0x3FFF ? NAN : (v & 1 ? -1.0 : 1.0) * (double)v * 1e7; break;
    }
    ic_limits limits;
    ic_limits_init(&limits);
    limits.max_pixels = 1u << 16;
    limits.max_memory_bytes = 16u << 20;
    uint8_t a = (p[2] & 2) ? 255 : 0;
    uint8_t background[4] = {(uint8_t)(p[2] & a), (uint8_t)((p[2] << 2) & a), (uint8_t)((p[2] << 4) & a), a};
    return ic_rotate(src, degrees, p[2] & 1, background, &limits, cancel, out, err);
}

/* A window of up to 255 x 255 (0 refused) placed by one of the compass points, a focal point
 * (sometimes outside 0...1, read as the centre) or attention. */
static ic_status apply_crop(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                            ic_error *err) {
    ic_gravity g = {(ic_gravity_kind)(p[2] % 10), (p[2] >> 4) / 12.0, (p[0] & 15) / 12.0};
    return ic_crop_placed(src, p[0], p[1], p[2] >= 0xF0 ? NULL : &g, cancel, out, err);
}

/* Fills a box of up to 255 x 255 (a side of 0 refused for smart), placed like apply_crop. */
static ic_status apply_fill(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                            ic_error *err) {
    if (p[2] >= 0xF0) return ic_fill_smart(src, p[0], p[1], p[2] & 1, 0, cancel, out, err);
    ic_gravity g = {(ic_gravity_kind)(p[2] % 10), (p[2] >> 4) / 12.0, (p[1] & 15) / 12.0};
    return ic_resize_placed(src, p[0], p[1], IC_RESIZE_FILL, p[2] & 1, 0, &g, out, err);
}

/* A background from one byte: transparent, a grey, or (255) one that is not premultiplied. */
static void fuzz_background(uint8_t b, uint8_t rgba[4]) {
    if (b == 255) {
        rgba[0] = 200, rgba[1] = 0, rgba[2] = 0, rgba[3] = 100;
    } else if (b & 1) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0;
    } else {
        rgba[0] = rgba[1] = rgba[2] = b, rgba[3] = 255;
    }
}

/* Up to 31 pixels on the top and left, 28 on the bottom and right; 254 asks for a canvas over
 * the pixel limit (refused). */
static ic_status apply_pad(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                           ic_error *err) {
    uint8_t bg[4];
    fuzz_background(p[2], bg);
    if (p[2] == 254) return ic_embed(src, 100000, 100000, 0, 0, bg, cancel, out, err);
    uint32_t top = p[0] & 31, bottom = (uint32_t)(p[0] >> 5) * 4, left = p[1] & 31, right = (uint32_t)(p[1] >> 5) * 4;
    return ic_embed(src, src->width + left + right, src->height + top + bottom, left, top, bg, cancel, out, err);
}

/* The canvas widened or heightened to a ratio of 1/64...4 (capped at 4 times the source's side
 * to keep runs fast), the image placed by one of the gravities (a focal point on the diagonal). */
static ic_status apply_extend(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                              ic_error *err) {
    double ratio = (p[0] + 1) / 64.0, w = src->width, h = src->height;
    double cw = w / h < ratio ? fmin(4 * w, fmax(w, round(h * ratio))) : w;
    double ch = w / h > ratio ? fmin(4 * h, fmax(h, round(w / ratio))) : h;
    ic_gravity g = {(ic_gravity_kind)(p[1] % 10), p[2] / 255.0, p[2] / 255.0};
    double x, y;
    ic_gravity_place(&g, cw, ch, w, h, &x, &y);
    uint8_t bg[4];
    fuzz_background(p[2], bg);
    return ic_embed(src, (uint32_t)cw, (uint32_t)ch, (uint32_t)floor(x), (uint32_t)floor(y), bg, cancel, out, err);
}

/* Thresholds 0...255 (256 and more, refused, when p[0] is 255 and p[1] odd); the top-left
 * pixel or a grey as the background. */
static ic_status apply_trim(const ic_image *src, const uint8_t *p, const int *cancel, ic_image **out,
                            ic_error *err) {
    double threshold = (p[0] == 255 && (p[1] & 1)) ? 256.0 + p[2] : p[0];
    uint8_t grey[4] = {p[2], p[2], p[2], 255};
    return ic_trim(src, threshold, (p[1] & 2) ? grey : NULL, cancel, out, err);
}

static const struct {
    const char *name;
    op_apply apply;
} OPS[] = {
    {"blur", apply_blur},         {"sharpen", apply_sharpen},   {"corners", apply_corners},
    {"tint", apply_tint},         {"grayscale", apply_grayscale}, {"color_adjust", apply_adjust},
    {"pixelate", apply_pixelate}, {"overlay", apply_overlay},   {"rotate", apply_rotate},
    {"crop", apply_crop},         {"fill", apply_fill},         {"pad", apply_pad},
    {"extend", apply_extend},     {"trim", apply_trim},
};

#define OP_COUNT (sizeof OPS / sizeof OPS[0])

/* Traps when is_opaque says opaque and some alpha is not 255. */
static void check_opacity(const ic_image *img) {
    if (!img->is_opaque) return;
    for (uint32_t f = 0; f < img->frame_count; f++) {
        for (uint32_t y = 0; y < img->height; y++) {
            const uint8_t *row = ic_image_frame(img, f) + (size_t)y * img->stride;
            for (uint32_t x = 0; x < img->width; x++) {
                if (row[4 * (size_t)x + 3] != 255) __builtin_trap();
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const size_t tail_size = 1 + MAX_STEPS * STEP_BYTES;
    if (size < tail_size) return 0;
    const uint8_t *tail = data + size - tail_size;
    ic_decode_options o;
    fuzz_limits(&o);
    o.all_frames = tail[0] & 1;
    ic_image *img = NULL;
    ic_error err;
    if (ic_decode(data, size, &o, &img, NULL, &err) != IC_OK) return 0;
    uint32_t steps = 1 + (tail[0] >> 1) % MAX_STEPS;
    for (uint32_t s = 0; s < steps; s++) {
        const uint8_t *step = tail + 1 + s * STEP_BYTES;
        const uint8_t *params = step + 1;
        uint8_t flags = step[1 + OP_PARAM_BYTES];
        int cancel = (flags & 0x0F) == 0x0F;
        ic_image *out = NULL;
        err.message[0] = '\0';
        ic_status st = OPS[step[0] % OP_COUNT].apply(img, params, &cancel, &out, &err);
        if (st != IC_OK) {
            if (out != NULL || err.message[0] == '\0' || err.code != st) __builtin_trap();
            if (st != IC_ERR_INVALID_ARGUMENT && st != IC_ERR_CANCELLED && st != IC_ERR_OUT_OF_MEMORY &&
                st != IC_ERR_LIMIT_EXCEEDED) {
                __builtin_trap();
            }
            if (st == IC_ERR_CANCELLED && !cancel) __builtin_trap();
            continue;
        }
        if (out == NULL || out->frame_count != img->frame_count) __builtin_trap();
        fuzz_check_pixels(out);
        check_opacity(out);
        ic_image_free(img);
        img = out;
    }
    ic_image_free(img);
    return 0;
}
