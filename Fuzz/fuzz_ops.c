/* fuzz_ops.c — image operations chained with fuzzer-chosen parameters on fuzzer-chosen images.
 * The input's last OPS_TAIL bytes choose; the bytes before them are decoded within the fuzz
 * limits, or, when they are no image, become the pixels of an image (as fuzz_resize makes
 * one). One to three operations from the table then run in turn, each on the last result.
 * Every result must keep the image's shape, be readable and premultiplied; a failure must
 * say why and return nothing. */
#include "fuzz_common.h"

/* Tail: all-frames flag, width, height, operation count, then four bytes an operation. */
#define OPS_TAIL 16

typedef ic_status (*op_apply)(const ic_image *src, const uint8_t p[3], ic_image **out, ic_error *err);

/* Radius, corners and border from the bytes; a high bit asks for a negative radius (refused). */
static ic_status apply_corners(const ic_image *src, const uint8_t p[3], ic_image **out, ic_error *err) {
    double radius = (p[2] & 0x80) ? -1.0 : p[0] * 0.75;
    uint8_t border[4] = {p[1], p[2], p[0], (uint8_t)(p[1] | p[2])};
    return ic_round_corners(src, radius, p[2] & 0x1F, (p[1] & 15) * 0.5, border, NULL, out, err);
}

static ic_status apply_tint(const ic_image *src, const uint8_t p[3], ic_image **out, ic_error *err) {
    uint8_t rgba[4] = {p[0], p[1], p[2], (uint8_t)(p[0] ^ p[1])};
    return ic_tint(src, rgba, NULL, out, err);
}

static ic_status apply_grayscale(const ic_image *src, const uint8_t p[3], ic_image **out, ic_error *err) {
    (void)p;
    return ic_grayscale(src, NULL, out, err);
}

/* Factors 0...8 in steps of 1/32; 255 asks for one out of range (refused). */
static ic_status apply_adjust(const ic_image *src, const uint8_t p[3], ic_image **out, ic_error *err) {
    double b = p[0] == 255 ? 1000.0 : p[0] / 32.0;
    return ic_color_adjust(src, b, p[1] / 32.0, p[2] / 32.0, NULL, out, err);
}

/* Any block size up to 2^16 - 1, 0 included (refused). */
static ic_status apply_pixelate(const ic_image *src, const uint8_t p[3], ic_image **out, ic_error *err) {
    return ic_pixelate(src, (uint32_t)p[0] | (uint32_t)p[1] << 8, NULL, out, err);
}

static const struct {
    const char *name;
    op_apply apply;
} ops[] = {
    {"corners", apply_corners},   {"tint", apply_tint},         {"grayscale", apply_grayscale},
    {"color_adjust", apply_adjust}, {"pixelate", apply_pixelate},
};

/* An image made from `data`: size and frame count from the tail, valid premultiplied pixels. */
static ic_image *make_image(const uint8_t *data, size_t size, const uint8_t *tail) {
    uint32_t w = 1 + tail[1] % 64, h = 1 + tail[2] % 64, frames = 1 + (tail[0] >> 1 & 1);
    ic_image *img;
    ic_error err;
    if (ic_image_create(w, h, frames, &img, &err) != IC_OK) return NULL;
    for (uint32_t f = 0; f < frames; f++) {
        for (uint32_t y = 0; y < h; y++) {
            uint8_t *row = ic_image_frame(img, f) + (size_t)y * img->stride;
            for (uint32_t x = 0; x < w * 4; x += 4) {
                uint8_t a = size ? data[(x + y + f) % size] : 255;
                for (int c = 0; c < 3; c++) {
                    uint8_t v = size ? data[(x + c + y * 7) % size] : 0;
                    row[x + c] = v > a ? a : v;
                }
                row[x + 3] = a;
            }
        }
    }
    img->is_opaque = 0;
    return img;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < OPS_TAIL) return 0;
    const uint8_t *tail = data + size - OPS_TAIL;
    size -= OPS_TAIL;
    ic_decode_options o;
    fuzz_limits(&o);
    o.all_frames = tail[0] & 1;
    ic_image *img = NULL;
    ic_error err;
    if (ic_decode(data, size, &o, &img, NULL, &err) != IC_OK) img = make_image(data, size, tail);
    if (!img) return 0;
    uint32_t count = 1 + tail[3] % 3;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *knobs = tail + 4 + 4 * i;
        size_t which = knobs[0] % (sizeof ops / sizeof ops[0]);
        ic_image *out = NULL;
        ic_error op_err = {IC_OK, ""};
        ic_status st = ops[which].apply(img, knobs + 1, &out, &op_err);
        if (st != IC_OK) {
            /* A refusal names itself and returns nothing. */
            if (out || op_err.message[0] == '\0' || st != IC_ERR_INVALID_ARGUMENT) __builtin_trap();
            continue;
        }
        if (!out || out->width != img->width || out->height != img->height ||
            out->frame_count != img->frame_count) {
            __builtin_trap();
        }
        fuzz_check_pixels(out);
        ic_image_free(img);
        img = out;
    }
    ic_image_free(img);
    return 0;
}
