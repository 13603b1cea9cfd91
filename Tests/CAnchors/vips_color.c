/* vips_color.c — the libvips peers of the colour operation benchmarks, resolved from the
 * libvips that vips.c opened (dlopen of a loaded library returns the same handle). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "CAnchors.h"

typedef struct VipsImage VipsImage;

/* VipsBandFormat's VIPS_FORMAT_UCHAR, VipsBlendMode's VIPS_BLEND_MODE_DEST_IN and
 * VipsInterpretation's VIPS_INTERPRETATION_sRGB. */
enum { VIPS_UCHAR = 0, VIPS_DEST_IN = 8, VIPS_SRGB = 22 };

static struct {
    VipsImage *(*new_from_memory)(const void *data, size_t size, int width, int height, int bands, int format);
    int (*copy)(VipsImage *in, VipsImage **out, ...);
    int (*linear)(VipsImage *in, VipsImage **out, const double *a, const double *b, int n, ...);
    int (*svgload_buffer)(void *buf, size_t len, VipsImage **out, ...);
    int (*composite2)(VipsImage *base, VipsImage *overlay, VipsImage **out, int mode, ...);
    void *(*write_to_memory)(VipsImage *in, size_t *size);
    void (*error_clear)(void);
    void (*object_unref)(void *object);
    void (*free)(void *memory);
} ops;

static pthread_once_t ops_once = PTHREAD_ONCE_INIT;
static char ops_failure[256];

static void ops_open(void) {
    const char *why = anchors_vips_start();
    if (why) {
        snprintf(ops_failure, sizeof ops_failure, "%s", why);
        return;
    }
    void *handle = dlopen("libvips.so.42", RTLD_NOW | RTLD_NOLOAD);
    if (!handle) handle = dlopen("libvips.so", RTLD_NOW | RTLD_NOLOAD);
    struct { void **field; const char *name; } symbols[] = {
        {(void **)&ops.new_from_memory, "vips_image_new_from_memory"},
        {(void **)&ops.copy, "vips_copy"},
        {(void **)&ops.linear, "vips_linear"},
        {(void **)&ops.svgload_buffer, "vips_svgload_buffer"},
        {(void **)&ops.composite2, "vips_composite2"},
        {(void **)&ops.write_to_memory, "vips_image_write_to_memory"},
        {(void **)&ops.error_clear, "vips_error_clear"},
        {(void **)&ops.object_unref, "g_object_unref"},
        {(void **)&ops.free, "g_free"},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].field = handle ? dlsym(handle, symbols[i].name) : NULL;
        if (!*symbols[i].field) {
            snprintf(ops_failure, sizeof ops_failure, "libvips has no symbol %s", symbols[i].name);
            return;
        }
    }
}

void *anchors_vips_rgba_image(const uint8_t *pixels, int width, int height, const char **why) {
    pthread_once(&ops_once, ops_open);
    if (ops_failure[0]) {
        *why = ops_failure;
        return NULL;
    }
    /* Tagged sRGB, as a decoded image would be (composite converts through the interpretation). */
    VipsImage *raw = ops.new_from_memory(pixels, (size_t)width * height * 4, width, height, 4, VIPS_UCHAR);
    VipsImage *image = NULL;
    if (!raw || ops.copy(raw, &image, "interpretation", VIPS_SRGB, NULL)) {
        ops.error_clear();
        *why = "vips_image_new_from_memory failed";
        image = NULL;
    }
    if (raw) ops.object_unref(raw);
    return image;
}

void anchors_vips_image_free(void *image) {
    if (image) ops.object_unref(image);
}

/* Evaluates `out` into memory, frees both: 0 or -1. */
static int evaluate(VipsImage *out) {
    size_t bytes = 0;
    void *pixels = ops.write_to_memory(out, &bytes);
    ops.object_unref(out);
    if (!pixels) {
        ops.error_clear();
        return -1;
    }
    ops.free(pixels);
    return 0;
}

int anchors_vips_linear(void *image, double scale, double offset) {
    const double a[4] = {scale, scale, scale, 1}, b[4] = {offset, offset, offset, 0};
    VipsImage *out = NULL;
    if (ops.linear(image, &out, a, b, 4, "uchar", 1, NULL)) {
        ops.error_clear();
        return -1;
    }
    return evaluate(out);
}

int anchors_vips_round_corners(void *image, int width, int height, double radius) {
    char svg[256];
    int n = snprintf(svg, sizeof svg,
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">"
                     "<rect width=\"%d\" height=\"%d\" rx=\"%g\" ry=\"%g\"/></svg>",
                     width, height, width, height, radius, radius);
    VipsImage *mask = NULL, *out = NULL;
    if (ops.svgload_buffer(svg, (size_t)n, &mask, NULL)) {
        ops.error_clear();
        return -1;
    }
    int failed = ops.composite2(image, mask, &out, VIPS_DEST_IN, NULL);
    ops.object_unref(mask);
    if (failed) {
        ops.error_clear();
        return -1;
    }
    return evaluate(out);
}
