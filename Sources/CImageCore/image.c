/* image.c — ic_image allocation: aligned rows, big buffers mapped with huge pages. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ic_internal.h"

enum { IC_ALLOC_HEAP = 1, IC_ALLOC_MAP = 2 };

/* Below this a plain aligned malloc is cheaper than a mapping. */
#define IC_MAP_THRESHOLD ((size_t)1 << 20)
#define IC_HUGE_PAGE ((size_t)2 << 20)

void *ic_buffer_alloc(size_t size, int *kind) {
    if (size == 0) size = IC_ROW_ALIGNMENT;
    if (size < IC_MAP_THRESHOLD) {
        size_t rounded = (size + IC_ROW_ALIGNMENT - 1) & ~(size_t)(IC_ROW_ALIGNMENT - 1);
        if (rounded < size) return NULL;
        *kind = IC_ALLOC_HEAP;
        return aligned_alloc(IC_ROW_ALIGNMENT, rounded);
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    if (size >= IC_HUGE_PAGE) (void)madvise(p, size, MADV_HUGEPAGE);
#endif
    *kind = IC_ALLOC_MAP;
    return p;
}

void ic_buffer_free(void *p, size_t size, int kind) {
    if (!p) return;
    if (kind == IC_ALLOC_MAP) {
        munmap(p, size);
    } else {
        free(p);
    }
}

size_t ic_stride_for_width(uint32_t width) {
    uint64_t bytes = (uint64_t)width * 4u;
    uint64_t stride = (bytes + IC_ROW_ALIGNMENT - 1) & ~(uint64_t)(IC_ROW_ALIGNMENT - 1);
    if (stride > SIZE_MAX / 2) return 0;
    return (size_t)stride;
}

ic_status ic_image_create(uint32_t width, uint32_t height, uint32_t frame_count,
                          ic_image **out, ic_error *err) {
    if (!out) return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "image: NULL output pointer");
    *out = NULL;
    if (width == 0 || height == 0 || frame_count == 0) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "image: empty size %ux%u with %u frames", width, height, frame_count);
    }
    size_t stride = ic_stride_for_width(width);
    if (stride == 0 || (uint64_t)stride * height > SIZE_MAX / frame_count) {
        return ic_set_error(err, IC_ERR_LIMIT_EXCEEDED,
                            "image: %ux%u with %u frames does not fit in memory",
                            width, height, frame_count);
    }
    size_t frame_size = stride * height;
    size_t total = frame_size * frame_count;

    size_t delays = frame_count > 1 ? (size_t)frame_count * sizeof(uint32_t) : 0;
    ic_image *img = calloc(1, sizeof *img + delays);
    if (!img) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "image: out of memory");
    img->pixels = ic_buffer_alloc(total, &img->ic_alloc_kind);
    if (!img->pixels) {
        free(img);
        return ic_set_error(err, IC_ERR_OUT_OF_MEMORY,
                            "image: cannot allocate %zu bytes for %ux%u x %u frames",
                            total, width, height, frame_count);
    }
    img->ic_alloc_size = total;
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
    ic_buffer_free(image->pixels, image->ic_alloc_size, image->ic_alloc_kind);
    free(image);
}
