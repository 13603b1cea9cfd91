/* shim.h — libvips calls for the thumbnail comparison (its API is variadic,
 * which Swift cannot call directly). The same calls as ../shared/anchors/vips_bench.c,
 * and the peer thumbnail server's (Sources/PeerThumbnailServer). */
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

/* Renders `out` to memory (the work vips_thumbnail_buffer defers to it) and lets both go:
 * 0, or -1 when vips fails. */
static inline int ik_vips_render(VipsImage *out) {
    size_t bytes = 0;
    void *pixels = vips_image_write_to_memory(out, &bytes);
    g_object_unref(out);
    if (!pixels) return -1;
    g_free(pixels);
    return 0;
}

/* vips_thumbnail_buffer to `size` px from bytes in memory, evaluated into memory. */
static inline int ik_vips_thumbnail(const void *data, size_t length, int size) {
    VipsImage *out = NULL;
    if (vips_thumbnail_buffer((void *)data, length, &out, size, NULL)) {
        vips_error_clear();
        return -1;
    }
    return ik_vips_render(out);
}

/* ik_vips_thumbnail with the pixels converted to sRGB through the image's embedded profile
 * (vips_thumbnail's export_profile=srgb), as ImageKit converts tagged images by default. */
static inline int ik_vips_thumbnail_srgb(const void *data, size_t length, int size) {
    VipsImage *out = NULL;
    if (vips_thumbnail_buffer((void *)data, length, &out, size, "export_profile", "srgb", NULL)) {
        vips_error_clear();
        return -1;
    }
    return ik_vips_render(out);
}

/* Output formats of ik_vips_thumbnail_encode. */
enum { IK_VIPS_JPEG = 0, IK_VIPS_WEBP = 1, IK_VIPS_PNG = 2 };

/* vips_thumbnail_buffer to fit `size` x `size` px, saved as JPEG or WebP (quality 80)
 * or PNG (the peer thumbnail server's work per request). Returns the encoded bytes,
 * which the caller frees with g_free, and their count in `*out_length`; NULL when
 * the input is not an image libvips reads or saving failed. */
static inline void *ik_vips_thumbnail_encode(const void *data, size_t length, int size, int format,
                                             size_t *out_length) {
    VipsImage *thumb = NULL;
    if (vips_thumbnail_buffer((void *)data, length, &thumb, size, NULL)) {
        vips_error_clear();
        return NULL;
    }
    void *buf = NULL;
    int failed;
    switch (format) {
    case IK_VIPS_WEBP: failed = vips_webpsave_buffer(thumb, &buf, out_length, "Q", 80, NULL); break;
    case IK_VIPS_PNG: failed = vips_pngsave_buffer(thumb, &buf, out_length, NULL); break;
    default: failed = vips_jpegsave_buffer(thumb, &buf, out_length, "Q", 80, NULL); break;
    }
    g_object_unref(thumb);
    if (failed) {
        vips_error_clear();
        return NULL;
    }
    return buf;
}

#endif
