/* vips.c — libvips, the peer a user would otherwise pick, opened with dlopen so that nothing but
 * the benchmarks needs libvips (Debian's libvips42; `make bench` installs it): its thumbnail
 * (the same calls as ../shared/anchors/vips_bench.c: vips_thumbnail_buffer, evaluated into
 * memory) and the operations' nearest libvips calls (gaussblur, sharpen, linear, svgload +
 * composite2, embed, find_trim + crop), on one thread with the operation cache off. */
#include "CAnchors.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct VipsImage VipsImage;

static struct {
    int (*init)(const char *argv0);
    void (*cache_set_max)(int max);
    void (*concurrency_set)(int concurrency);
    int (*thumbnail_buffer)(void *buf, size_t len, VipsImage **out, int width, ...);
    void *(*write_to_memory)(VipsImage *in, size_t *size);
    const char *(*error_buffer)(void);
    void (*error_clear)(void);
    void (*object_unref)(void *object);
    void (*free)(void *memory);
    VipsImage *(*new_from_memory)(const void *data, size_t size, int width, int height, int bands,
                                  int format);
    int (*copy)(VipsImage *in, VipsImage **out, ...);
    int (*gaussblur)(VipsImage *in, VipsImage **out, double sigma, ...);
    int (*sharpen)(VipsImage *in, VipsImage **out, ...);
    int (*linear)(VipsImage *in, VipsImage **out, const double *a, const double *b, int n, ...);
    int (*svgload_buffer)(void *buf, size_t len, VipsImage **out, ...);
    int (*composite2)(VipsImage *base, VipsImage *overlay, VipsImage **out, int mode, ...);
    void *(*array_double_new)(const double *array, int n);
    void (*area_unref)(void *area);
    int (*embed)(VipsImage *in, VipsImage **out, int x, int y, int width, int height, ...);
    int (*find_trim)(VipsImage *in, int *left, int *top, int *width, int *height, ...);
    int (*crop)(VipsImage *in, VipsImage **out, int left, int top, int width, int height, ...);
} vips;

static pthread_once_t vips_once = PTHREAD_ONCE_INIT;
static char vips_failure[512];

#define VIPS_SYMBOL(field, name)                                                        \
    do {                                                                                \
        *(void **)&vips.field = dlsym(handle, name);                                    \
        if (!vips.field) {                                                              \
            snprintf(vips_failure, sizeof vips_failure, "libvips has no symbol %s", name); \
            return;                                                                     \
        }                                                                               \
    } while (0)

static void vips_open(void) {
    void *handle = dlopen("libvips.so.42", RTLD_NOW | RTLD_LOCAL);
    if (!handle) handle = dlopen("libvips.so", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(vips_failure, sizeof vips_failure, "libvips.so.42 could not be loaded: %s", dlerror());
        return;
    }
    VIPS_SYMBOL(init, "vips_init");
    VIPS_SYMBOL(cache_set_max, "vips_cache_set_max");
    VIPS_SYMBOL(concurrency_set, "vips_concurrency_set");
    VIPS_SYMBOL(thumbnail_buffer, "vips_thumbnail_buffer");
    VIPS_SYMBOL(write_to_memory, "vips_image_write_to_memory");
    VIPS_SYMBOL(error_buffer, "vips_error_buffer");
    VIPS_SYMBOL(error_clear, "vips_error_clear");
    VIPS_SYMBOL(object_unref, "g_object_unref");
    VIPS_SYMBOL(free, "g_free");
    VIPS_SYMBOL(new_from_memory, "vips_image_new_from_memory");
    VIPS_SYMBOL(copy, "vips_copy");
    VIPS_SYMBOL(gaussblur, "vips_gaussblur");
    VIPS_SYMBOL(sharpen, "vips_sharpen");
    VIPS_SYMBOL(linear, "vips_linear");
    VIPS_SYMBOL(svgload_buffer, "vips_svgload_buffer");
    VIPS_SYMBOL(composite2, "vips_composite2");
    VIPS_SYMBOL(array_double_new, "vips_array_double_new");
    VIPS_SYMBOL(area_unref, "vips_area_unref");
    VIPS_SYMBOL(embed, "vips_embed");
    VIPS_SYMBOL(find_trim, "vips_find_trim");
    VIPS_SYMBOL(crop, "vips_crop");
    if (vips.init("imagekit-benchmarks")) {
        snprintf(vips_failure, sizeof vips_failure, "vips_init failed: %s", vips.error_buffer());
        return;
    }
    vips.cache_set_max(0);
    vips.concurrency_set(1);
}

const char *anchors_vips_start(void) {
    pthread_once(&vips_once, vips_open);
    return vips_failure[0] ? vips_failure : NULL;
}

void anchors_vips_set_concurrency(int threads) {
    if (anchors_vips_start()) return;
    vips.concurrency_set(threads > 0 ? threads : 1);
}

/* Evaluates `out` (made by a call that returned `status`) into memory and frees it all. */
static int finish(int status, VipsImage *out) {
    if (status) {
        vips.error_clear();
        return -1;
    }
    size_t bytes = 0;
    void *pixels = vips.write_to_memory(out, &bytes);
    vips.object_unref(out);
    if (!pixels) {
        vips.error_clear();
        return -1;
    }
    vips.free(pixels);
    return 0;
}

int anchors_vips_thumbnail(const uint8_t *data, size_t size, int width) {
    if (anchors_vips_start()) return -1;
    VipsImage *out = NULL;
    return finish(vips.thumbnail_buffer((void *)data, size, &out, width, NULL), out);
}

/* VIPS_FORMAT_UCHAR in libvips's VipsBandFormat, VIPS_INTERPRETATION_sRGB in VipsInterpretation. */
#define ANCHORS_VIPS_FORMAT_UCHAR 0
#define ANCHORS_VIPS_INTERPRETATION_SRGB 22

void *anchors_vips_image_rgba(const uint8_t *pixels, int width, int height, size_t stride) {
    if (anchors_vips_start() || stride != (size_t)width * 4) return NULL;
    VipsImage *raw = vips.new_from_memory(pixels, stride * (size_t)height, width, height, 4,
                                          ANCHORS_VIPS_FORMAT_UCHAR);
    if (!raw) {
        vips.error_clear();
        return NULL;
    }
    /* Memory images are "multiband"; vips_sharpen needs to know the bands are sRGB + alpha. */
    VipsImage *srgb = NULL;
    int failed = vips.copy(raw, &srgb, "interpretation", ANCHORS_VIPS_INTERPRETATION_SRGB, NULL);
    vips.object_unref(raw);
    if (failed) {
        vips.error_clear();
        return NULL;
    }
    return srgb;
}

void anchors_vips_image_free(void *image) {
    if (image) vips.object_unref(image);
}


int anchors_vips_gaussblur(void *image, double sigma) {
    VipsImage *out = NULL;
    return finish(vips.gaussblur(image, &out, sigma, NULL), out);
}

int anchors_vips_sharpen(void *image, double sigma) {
    VipsImage *out = NULL;
    return finish(vips.sharpen(image, &out, "sigma", sigma, NULL), out);
}

int anchors_vips_linear(void *image, double scale, double offset) {
    const double a[4] = {scale, scale, scale, 1}, b[4] = {offset, offset, offset, 0};
    VipsImage *out = NULL;
    return finish(vips.linear(image, &out, a, b, 4, "uchar", 1, NULL), out);
}

/* VipsBlendMode's VIPS_BLEND_MODE_DEST_IN. */
#define ANCHORS_VIPS_BLEND_DEST_IN 8

int anchors_vips_round_corners(void *image, int width, int height, double radius) {
    char svg[256];
    int n = snprintf(svg, sizeof svg,
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">"
                     "<rect width=\"%d\" height=\"%d\" rx=\"%g\" ry=\"%g\"/></svg>",
                     width, height, width, height, radius, radius);
    VipsImage *mask = NULL, *out = NULL;
    if (vips.svgload_buffer(svg, (size_t)n, &mask, NULL)) {
        vips.error_clear();
        return -1;
    }
    int failed = vips.composite2(image, mask, &out, ANCHORS_VIPS_BLEND_DEST_IN, NULL);
    vips.object_unref(mask);
    return finish(failed, out);
}

/* VipsExtend's VIPS_EXTEND_BACKGROUND. */
#define ANCHORS_VIPS_EXTEND_BACKGROUND 5

int anchors_vips_embed(void *image, int x, int y, int width, int height, const double *background, int bands) {
    void *ink = vips.array_double_new(background, bands);
    VipsImage *out = NULL;
    int failed = vips.embed(image, &out, x, y, width, height, "extend", ANCHORS_VIPS_EXTEND_BACKGROUND,
                            "background", ink, NULL);
    vips.area_unref(ink);
    return finish(failed, out);
}

int anchors_vips_trim(void *image, double threshold, const double *background, int bands) {
    void *ink = vips.array_double_new(background, bands);
    int left = 0, top = 0, width = 0, height = 0;
    int failed = vips.find_trim(image, &left, &top, &width, &height, "threshold", threshold, "background", ink, NULL);
    vips.area_unref(ink);
    if (failed) {
        vips.error_clear();
        return -1;
    }
    VipsImage *out = NULL;
    if (width > 0 && height > 0) return finish(vips.crop(image, &out, left, top, width, height, NULL), out);
    return finish(vips.copy(image, &out, NULL), out);
}
