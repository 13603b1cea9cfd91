/* image.c — ic_image allocation: aligned rows, big buffers mapped with huge pages. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ic_image_internal.h"

enum { IC_ALLOC_HEAP = 1, IC_ALLOC_MAP = 2 };

/* Below this a plain aligned malloc is cheaper than a mapping. */
#define IC_MAP_THRESHOLD ((size_t)1 << 20)
#define IC_HUGE_PAGE ((size_t)2 << 20)

void *ic__buffer_alloc(ic_pool *pool, size_t size, int *kind, size_t *capacity) {
    if (size == 0) size = IC_ROW_ALIGNMENT;
    if (size < IC_MAP_THRESHOLD) {
        size_t rounded = (size + IC_ROW_ALIGNMENT - 1) & ~(size_t)(IC_ROW_ALIGNMENT - 1);
        *kind = IC_ALLOC_HEAP;
        *capacity = rounded;
        return aligned_alloc(IC_ROW_ALIGNMENT, rounded);
    }
    /* Whole huge pages: the tail is not wasted on small pages, and sizes that
     * differ by a few rows share pooled buffers. */
    if (size > SIZE_MAX - IC_HUGE_PAGE) return NULL;
    size_t mapped = (size + IC_HUGE_PAGE - 1) & ~(IC_HUGE_PAGE - 1);
    *kind = IC_ALLOC_MAP;
    if (pool) {
        void *reused = ic__pool_take(pool, mapped, capacity);
        if (reused) return reused;
    }
    void *p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, mapped, MADV_HUGEPAGE);
#endif
    if (pool) ic__pool_retain(pool);
    *capacity = mapped;
    return p;
}

void ic__buffer_free(ic_pool *pool, void *p, size_t capacity, int kind) {
    if (!p) return;
    if (kind != IC_ALLOC_MAP) {
        free(p);
    } else if (pool) {
        ic__pool_put(pool, p, capacity);
    } else {
        munmap(p, capacity);
    }
}

size_t ic__stride_for_width(uint32_t width) {
    uint64_t bytes = (uint64_t)width * 4u;
    uint64_t stride = (bytes + IC_ROW_ALIGNMENT - 1) & ~(uint64_t)(IC_ROW_ALIGNMENT - 1);
    if (stride > SIZE_MAX / 2) return 0;
    return (size_t)stride;
}

ic_status ic_image_create(uint32_t width, uint32_t height, uint32_t frame_count,
                          ic_image **out, ic_error *err) {
    return ic__image_create_in(NULL, width, height, frame_count, out, err);
}

ic_status ic__image_create_in(ic_pool *pool, uint32_t width, uint32_t height, uint32_t frame_count,
                             ic_image **out, ic_error *err) {
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "image: NULL output pointer");
    *out = NULL;
    if (width == 0 || height == 0 || frame_count == 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "image: empty size %ux%u with %u frames", width, height, frame_count);
    }
    size_t stride = ic__stride_for_width(width);
    if (stride == 0 || (uint64_t)stride * height > SIZE_MAX / frame_count) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED,
                            "image: %ux%u with %u frames does not fit in memory",
                            width, height, frame_count);
    }
    size_t frame_size = stride * height;
    size_t total = frame_size * frame_count;

    size_t delays = frame_count > 1 ? (size_t)frame_count * sizeof(uint32_t) : 0;
    ic_image *img = calloc(1, sizeof *img + delays);
    if (!img) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "image: out of memory");
    img->pixels = ic__buffer_alloc(pool, total, &img->ic_alloc_kind, &img->ic_alloc_size);
    if (!img->pixels) {
        free(img);
        return ic__set_error(err, IC_ERR_OUT_OF_MEMORY,
                            "image: cannot allocate %zu bytes for %ux%u x %u frames",
                            total, width, height, frame_count);
    }
    img->ic_pool = img->ic_alloc_kind == IC_ALLOC_MAP ? pool : NULL;
    img->width = width;
    img->height = height;
    img->stride = stride;
    img->frame_size = frame_size;
    img->frame_count = frame_count;
    img->pixel_format = IC_PIXEL_RGBA8_PREMULTIPLIED;
    img->source_format = IC_FORMAT_UNKNOWN;
    img->source_width = width;
    img->source_height = height;
    img->orientation = 1;
    img->is_opaque = 1;
    img->frame_delays_ms = delays ? (uint32_t *)(img + 1) : NULL;
    *out = img;
    return IC_OK;
}

void ic_image_free(ic_image *image) {
    if (!image) return;
    ic__buffer_free(image->ic_pool, image->pixels, image->ic_alloc_size, image->ic_alloc_kind);
    free(image->icc_profile);
    free(image);
}

void ic__image_copy_metadata(ic_image *dst, const ic_image *src) {
    dst->source_format = src->source_format;
    dst->source_width = src->source_width;
    dst->source_height = src->source_height;
    dst->orientation = src->orientation;
    dst->orientation_applied = src->orientation_applied;
    dst->loop_count = src->loop_count;
    if (dst->frame_delays_ms && src->frame_delays_ms) {
        uint32_t n = dst->frame_count < src->frame_count ? dst->frame_count : src->frame_count;
        memcpy(dst->frame_delays_ms, src->frame_delays_ms, sizeof(uint32_t) * n);
    }
}

void ic__image_update_opacity(ic_image *img) {
    for (uint32_t f = 0; f < img->frame_count; f++) {
        const uint8_t *frame = ic_image_frame(img, f);
        for (uint32_t y = 0; y < img->height; y++) {
            if (!ic__pixels_opaque(frame + (size_t)y * img->stride, img->width)) {
                img->is_opaque = 0;
                return;
            }
        }
    }
    img->is_opaque = 1;
}
