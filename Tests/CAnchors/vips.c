/* vips.c — libvips, the peer a user would otherwise pick, opened with dlopen so that nothing but
 * the benchmarks needs libvips (Debian's libvips42; `make bench` installs it): its thumbnail
 * (the same calls as ../shared/anchors/vips_bench.c: vips_thumbnail_buffer, evaluated into
 * memory) and the operations' nearest libvips calls (gaussblur, sharpen, linear, svgload +
 * composite2, composite2 of a mark (replicated for tiling), rotate, smartcrop, embed,
 * find_trim + crop), on one thread with the operation cache off unless a benchmark asks for
 * more threads. */
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
    int (*embed)(VipsImage *in, VipsImage **out, int x, int y, int width, int height, ...);
    int (*replicate)(VipsImage *in, VipsImage **out, int across, int down, ...);
    int (*extract_area)(VipsImage *in, VipsImage **out, int left, int top, int width, int height, ...);
    int (*rotate)(VipsImage *in, VipsImage **out, double angle, ...);
    int (*smartcrop)(VipsImage *in, VipsImage **out, int width, int height, ...);
    void *(*array_double_new)(const double *array, int n);
    void (*area_unref)(void *area);
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
    VIPS_SYMBOL(embed, "vips_embed");
    VIPS_SYMBOL(replicate, "vips_replicate");
    VIPS_SYMBOL(extract_area, "vips_extract_area");
    VIPS_SYMBOL(rotate, "vips_rotate");
    VIPS_SYMBOL(smartcrop, "vips_smartcrop");
    VIPS_SYMBOL(array_double_new, "vips_array_double_new");
    VIPS_SYMBOL(area_unref, "vips_area_unref");
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

int anchors_vips_rotate(void *image, double degrees) {
    VipsImage *out = NULL;
    return finish(vips.rotate(image, &out, degrees, NULL), out);
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

/* VipsBlendMode's VIPS_BLEND_MODE_OVER. */
#define ANCHORS_VIPS_BLEND_OVER 2

/* The mark tiled as a vips user tiles it: padded with `spacing` transparent pixels right and
 * below (vips_embed), repeated (vips_replicate) and cut to width x height from (left, top) of
 * the repeats (vips_extract_area). */
static int tiled(VipsImage *mark, int mark_w, int mark_h, int spacing, int width, int height, int left, int top,
                 VipsImage **out) {
    int period_w = mark_w + spacing, period_h = mark_h + spacing;
    VipsImage *padded = NULL, *repeated = NULL;
    if (vips.embed(mark, &padded, 0, 0, period_w, period_h, NULL)) return -1;
    int failed = vips.replicate(padded, &repeated, (left + width) / period_w + 1, (top + height) / period_h + 1, NULL);
    vips.object_unref(padded);
    if (failed) return -1;
    failed = vips.extract_area(repeated, out, left, top, width, height, NULL);
    vips.object_unref(repeated);
    return failed ? -1 : 0;
}

int anchors_vips_overlay(void *image, int width, int height, void *mark, int mark_w, int mark_h, double opacity,
                         int x, int y, int spacing) {
    const double a[4] = {1, 1, 1, opacity}, b[4] = {0, 0, 0, 0};
    VipsImage *faded = NULL, *over = NULL, *out = NULL;
    if (vips.linear(mark, &faded, a, b, 4, "uchar", 1, NULL)) {
        vips.error_clear();
        return -1;
    }
    int failed;
    if (spacing < 0) {
        failed = vips.composite2(image, faded, &out, ANCHORS_VIPS_BLEND_OVER, "x", x, "y", y, NULL);
    } else {
        int period_w = mark_w + spacing, period_h = mark_h + spacing;
        int left = ((-x) % period_w + period_w) % period_w, top = ((-y) % period_h + period_h) % period_h;
        failed = tiled(faded, mark_w, mark_h, spacing, width, height, left, top, &over) ||
                 vips.composite2(image, over, &out, ANCHORS_VIPS_BLEND_OVER, NULL);
        if (over) vips.object_unref(over);
    }
    vips.object_unref(faded);
    if (failed) vips.error_clear();
    return finish(failed, out);
}

/* VipsInteresting's VIPS_INTERESTING_ATTENTION. */
#define ANCHORS_VIPS_INTERESTING_ATTENTION 3

int anchors_vips_smartcrop(void *image, int width, int height) {
    VipsImage *out = NULL;
    return finish(vips.smartcrop(image, &out, width, height, "interesting", ANCHORS_VIPS_INTERESTING_ATTENTION, NULL),
                  out);
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
