/*
 * resize.c — sizing a picture for a box, and resizing or cropping whole images.
 * With a helper thread, a large resize splits its output rows into bands that the
 * caller and the helper claim in turn (ic__scaler_run_bands), each through a scaler of
 * its own over the same banks; every row comes out as a whole-frame pass makes it.
 */
#include <math.h>
#include <string.h>

#include "../image/ic_image_internal.h"
#include "ic_decode.h"
#include "ic_resize_internal.h"
#include "ic_resize_testing.h"

static uint32_t scaled(uint32_t v, double scale) {
    double r = floor(v * scale + 0.5);
    if (r < 1) return 1;
    if (r > UINT32_MAX) return UINT32_MAX;
    return (uint32_t)r;
}

void ic__plan_geometry(uint32_t src_w, uint32_t src_h, uint32_t box_w, uint32_t box_h,
                      ic_resize_mode mode, bool upscale, ic__geometry *g) {
    const ic_gravity centre = {IC_GRAVITY_CENTRE, 0.5, 0.5};
    ic__plan_geometry_placed(src_w, src_h, box_w, box_h, mode, upscale, &centre, g);
}

void ic__plan_geometry_placed(uint32_t src_w, uint32_t src_h, uint32_t box_w, uint32_t box_h,
                             ic_resize_mode mode, bool upscale, const ic_gravity *gravity, ic__geometry *g) {
    g->crop = (ic__rect){0, 0, src_w, src_h};
    if (box_w == 0 && box_h == 0) {
        g->out_w = src_w;
        g->out_h = src_h;
        return;
    }
    double sx = box_w ? (double)box_w / src_w : 0, sy = box_h ? (double)box_h / src_h : 0;
    if (mode == IC_RESIZE_STRETCH) {
        if (!box_w) sx = sy;
        if (!box_h) sy = sx;
        if (!upscale) {
            if (sx > 1) sx = 1;
            if (sy > 1) sy = 1;
        }
        g->out_w = box_w && (upscale || box_w <= src_w) ? box_w : scaled(src_w, sx);
        g->out_h = box_h && (upscale || box_h <= src_h) ? box_h : scaled(src_h, sy);
        return;
    }
    /* One side unconstrained: that side follows the other, for FIT and FILL alike. */
    double scale;
    if (!box_w) {
        scale = sy;
    } else if (!box_h) {
        scale = sx;
    } else {
        scale = mode == IC_RESIZE_FILL ? (sx > sy ? sx : sy) : (sx < sy ? sx : sy);
    }
    if (!upscale && scale > 1) scale = 1;
    uint32_t w = scaled(src_w, scale), h = scaled(src_h, scale);
    if (mode == IC_RESIZE_FILL && box_w && box_h && gravity) {
        /* Cover the box, then keep the window the gravity places (the centre: halfway). */
        uint32_t cw = w < box_w ? w : box_w, ch = h < box_h ? h : box_h;
        double crop_w = cw / scale, crop_h = ch / scale;
        if (crop_w > src_w) crop_w = src_w;
        if (crop_h > src_h) crop_h = src_h;
        double x, y;
        ic_gravity_place(gravity, src_w, src_h, crop_w, crop_h, &x, &y);
        g->crop = (ic__rect){x, y, crop_w, crop_h};
        w = cw;
        h = ch;
    }
    g->out_w = w;
    g->out_h = h;
}

/* Metadata of a picture derived from `src`; opacity is kept, or recounted when
 * the source had transparency somewhere (the part kept may have none). */
static void finish_derived(ic_image *dst, const ic_image *src) {
    ic__image_copy_metadata(dst, src);
    if (src->is_opaque) {
        dst->is_opaque = 1;
    } else {
        ic__image_update_opacity(dst);
    }
}

ic_status ic_crop(const ic_image *src, uint32_t x, uint32_t y, uint32_t width, uint32_t height,
                  ic_image **out, ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "crop: NULL argument");
    *out = NULL;
    if (width == 0 || height == 0 || x > src->width || y > src->height ||
        width > src->width - x || height > src->height - y) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "crop: rectangle %ux%u at (%u, %u) is not inside the %ux%u image", width,
                            height, x, y, src->width, src->height);
    }
    ic_image *dst;
    ic_status st = ic__image_create_in(src->ic_pool, width, height, src->frame_count, &dst, err);
    if (st != IC_OK) return st;
    for (uint32_t f = 0; f < src->frame_count; f++) {
        const uint8_t *from = ic_image_frame(src, f) + (size_t)y * src->stride + 4 * (size_t)x;
        uint8_t *to = ic_image_frame(dst, f);
        for (uint32_t r = 0; r < height; r++) {
            memcpy(to + (size_t)r * dst->stride, from + (size_t)r * src->stride, 4 * (size_t)width);
        }
    }
    finish_derived(dst, src);
    *out = dst;
    return IC_OK;
}

/* Resizes the only frame of src into dst in `bands` bands (see ic__scaler_run_bands). False,
 * with nothing written, when the second scaler or the thread could not be had. */
static bool resize_in_bands(ic__scaler *scaler, const ic_image *src, ic_image *dst, uint32_t bands,
                            bool helper) {
    ic__scaler *fork;
    if (ic__scaler_fork(scaler, &fork, NULL) != IC_OK) return false;
    bool done = ic__scaler_run_bands(scaler, fork, ic_image_frame(src, 0), src->stride, false,
                                    ic_image_frame(dst, 0), dst->stride, bands, helper);
    ic__scaler_free(fork);
    return done;
}

/* ic_resize's work; `bands` > 0 forces that many bands on the calling thread (testing hook). */
static ic_status resize(const ic_image *src, uint32_t width, uint32_t height, ic_resize_mode mode,
                        int allow_upscale, bool use_helper_thread, uint32_t bands,
                        const ic_gravity *gravity, ic_image **out, ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "resize: NULL argument");
    *out = NULL;
    if (mode != IC_RESIZE_FIT && mode != IC_RESIZE_FILL && mode != IC_RESIZE_STRETCH) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "resize: unknown mode %d", (int)mode);
    }
    if (width == 0 && height == 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "resize: the target size is 0x0");
    }
    ic__geometry g;
    ic__plan_geometry_placed(src->width, src->height, width, height, mode, allow_upscale != 0, gravity, &g);
    uint64_t pixels = (uint64_t)g.out_w * g.out_h;
    if (pixels > IC_DEFAULT_MAX_PIXELS) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED,
                            "resize: the result %ux%u (%llu pixels) is over the limit of %llu pixels",
                            g.out_w, g.out_h, (unsigned long long)pixels,
                            (unsigned long long)IC_DEFAULT_MAX_PIXELS);
    }
    ic__scaler *scaler;
    ic_status st = ic__scaler_create(src->width, src->height, &g.crop, g.out_w, g.out_h, &scaler, err);
    if (st != IC_OK) return st;
    ic_image *dst;
    st = ic__image_create_in(src->ic_pool, g.out_w, g.out_h, src->frame_count, &dst, err);
    if (st != IC_OK) {
        ic__scaler_free(scaler);
        return st;
    }
    bool helper = use_helper_thread && !bands;
    if (helper) bands = src->frame_count == 1 ? ic__scaler_helper_bands(scaler) : 0;
    bool banded = bands && src->frame_count == 1 && resize_in_bands(scaler, src, dst, bands, helper);
    for (uint32_t f = 0; f < src->frame_count && !banded; f++) {
        ic__scaler_begin_frame(scaler, ic_image_frame(dst, f), dst->stride);
        const uint8_t *frame = ic_image_frame(src, f);
        uint32_t last = ic__scaler_last_row(scaler);
        for (uint32_t y = ic__scaler_first_row(scaler); y <= last; y++) {
            ic__scaler_push(scaler, y, frame + (size_t)y * src->stride);
        }
    }
    ic__scaler_free(scaler);
    finish_derived(dst, src);
    *out = dst;
    return IC_OK;
}

static const ic_gravity CENTRE = {IC_GRAVITY_CENTRE, 0.5, 0.5};

ic_status ic_resize(const ic_image *src, uint32_t width, uint32_t height, ic_resize_mode mode,
                    int allow_upscale, ic_image **out, ic_error *err) {
    return resize(src, width, height, mode, allow_upscale, false, 0, &CENTRE, out, err);
}

ic_status ic_resize_with_helper(const ic_image *src, uint32_t width, uint32_t height,
                                ic_resize_mode mode, int allow_upscale, int use_helper_thread,
                                ic_image **out, ic_error *err) {
    return resize(src, width, height, mode, allow_upscale, use_helper_thread != 0, 0, &CENTRE, out, err);
}

ic_status ic_resize_placed(const ic_image *src, uint32_t width, uint32_t height, ic_resize_mode mode,
                           int allow_upscale, int use_helper_thread, const ic_gravity *gravity,
                           ic_image **out, ic_error *err) {
    return resize(src, width, height, mode, allow_upscale, use_helper_thread != 0, 0, gravity, out, err);
}

ic_status ic_resize_in_bands(const ic_image *src, uint32_t width, uint32_t height,
                             ic_resize_mode mode, int allow_upscale, uint32_t bands, ic_image **out,
                             ic_error *err) {
    if (bands == 0) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "resize: 0 bands");
    return resize(src, width, height, mode, allow_upscale, false, bands, &CENTRE, out, err);
}
