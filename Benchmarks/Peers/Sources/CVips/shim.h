/* shim.h — libvips calls for the thumbnail comparison (its API is variadic,
 * which Swift cannot call directly). The same calls as ../shared/anchors/vips_bench.c. */
#ifndef IMAGEKIT_CVIPS_SHIM_H
#define IMAGEKIT_CVIPS_SHIM_H

#include <vips/vips.h>

/* Starts libvips once: operation cache off, one thread (ImageKit decodes on one too). */
static inline int ik_vips_start(void) {
    if (VIPS_INIT("imagekit-peer-benchmarks")) return -1;
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

/* vips_thumbnail_buffer to `size` px from bytes in memory, evaluated into memory. */
static inline int ik_vips_thumbnail(const void *data, size_t length, int size) {
    VipsImage *out = NULL;
    if (vips_thumbnail_buffer((void *)data, length, &out, size, NULL)) {
        vips_error_clear();
        return -1;
    }
    size_t bytes = 0;
    void *pixels = vips_image_write_to_memory(out, &bytes);
    g_object_unref(out);
    if (!pixels) return -1;
    g_free(pixels);
    return 0;
}

#endif
