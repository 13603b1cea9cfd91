/* orient.c — applying EXIF orientations (rotations and flips) exactly. */
#include <string.h>

#include "ic_image_internal.h"
#include "ic_transform.h"

static inline uint32_t px_at(const uint8_t *frame, size_t stride, uint32_t x, uint32_t y) {
    uint32_t v;
    memcpy(&v, frame + (size_t)y * stride + 4 * (size_t)x, 4);
    return v;
}

/* Maps destination (x, y) to the source pixel for orientation o. */
static void orient_frame(const uint8_t *src, size_t sstride, uint32_t sw, uint32_t sh,
                         uint8_t *dst, size_t dstride, uint32_t dw, uint32_t dh, int o) {
    if (o <= 4) {
        for (uint32_t y = 0; y < dh; y++) {
            uint32_t sy = (o == 3 || o == 4) ? sh - 1 - y : y;
            const uint8_t *srow = src + (size_t)sy * sstride;
            uint8_t *drow = dst + (size_t)y * dstride;
            if (o == 1 || o == 4) {
                memcpy(drow, srow, (size_t)dw * 4);
            } else {
                for (uint32_t x = 0; x < dw; x++) memcpy(drow + 4 * (size_t)x, srow + 4 * (size_t)(sw - 1 - x), 4);
            }
        }
        return;
    }
    /* Axis-swapping orientations: tile for cache locality. */
    enum { T = 32 };
    for (uint32_t ty = 0; ty < dh; ty += T) {
        for (uint32_t tx = 0; tx < dw; tx += T) {
            uint32_t ey = ty + T < dh ? ty + T : dh;
            uint32_t ex = tx + T < dw ? tx + T : dw;
            for (uint32_t y = ty; y < ey; y++) {
                uint8_t *drow = dst + (size_t)y * dstride;
                for (uint32_t x = tx; x < ex; x++) {
                    uint32_t sx, sy;
                    switch (o) {
                    case 5: sx = y; sy = x; break;
                    case 6: sx = y; sy = sh - 1 - x; break;
                    case 7: sx = sw - 1 - y; sy = sh - 1 - x; break;
                    default: sx = sw - 1 - y; sy = x; break; /* 8 */
                    }
                    uint32_t v = px_at(src, sstride, sx, sy);
                    memcpy(drow + 4 * (size_t)x, &v, 4);
                }
            }
        }
    }
}

ic_status ic_image_orient(const ic_image *src, ic_orientation orientation, ic_image **out,
                          ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "orient: NULL argument");
    *out = NULL;
    int o = (int)orientation;
    if (o < 1 || o > 8) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "orient: orientation %d is not 1...8", o);
    }
    bool swap = o >= 5;
    uint32_t dw = swap ? src->height : src->width;
    uint32_t dh = swap ? src->width : src->height;
    ic_image *dst;
    ic_status st = ic__image_create_in(src->ic_pool, dw, dh, src->frame_count, &dst, err);
    if (st != IC_OK) return st;
    for (uint32_t f = 0; f < src->frame_count; f++) {
        orient_frame(ic_image_frame(src, f), src->stride, src->width, src->height,
                     ic_image_frame(dst, f), dst->stride, dw, dh, o);
    }
    ic__image_copy_metadata(dst, src);
    dst->orientation_applied = 1;
    dst->is_opaque = src->is_opaque;
    *out = dst;
    return IC_OK;
}
