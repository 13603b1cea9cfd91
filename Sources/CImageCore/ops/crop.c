/*
 * crop.c — cutting a window placed by gravity or by attention, and filling a box by attention
 * (see ic_op_attention.h).
 */
#include <math.h>

#include "ic_op_attention.h"
#include "ic_resize.h"

#include "ic_color_ops_internal.h"

/* The whole-pixel offset of a placed window, kept inside [0, extent - size]. */
static uint32_t whole(double v, uint32_t size, uint32_t extent) {
    v = floor(v + 0.5);
    if (!(v > 0)) return 0;
    if (v > extent - size) return extent - size;
    return (uint32_t)v;
}

ic_status ic_crop_placed(const ic_image *src, uint32_t width, uint32_t height, const ic_gravity *gravity,
                         const int *cancel_flag, ic_image **out, ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "crop: NULL argument");
    *out = NULL;
    if (width == 0 || height == 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "crop: the window %ux%u is empty", width, height);
    }
    if (width > src->width) width = src->width;
    if (height > src->height) height = src->height;
    uint32_t x, y;
    if (gravity) {
        double px, py;
        ic_gravity_place(gravity, src->width, src->height, width, height, &px, &py);
        x = whole(px, width, src->width);
        y = whole(py, height, src->height);
    } else {
        ic_status st = ic_attention_window(src, width, height, cancel_flag, &x, &y, err);
        if (st != IC_OK) return st;
    }
    return ic_crop(src, x, y, width, height, out, err);
}

ic_status ic_fill_smart(const ic_image *src, uint32_t width, uint32_t height, int allow_upscale,
                        int use_helper_thread, const int *cancel_flag, ic_image **out, ic_error *err) {
    if (!src || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "resize: NULL argument");
    *out = NULL;
    if (width == 0 || height == 0) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT,
                            "resize: a smart fill needs both sides of the box, not %ux%u", width, height);
    }
    ic_image *cover;
    ic_status st = ic_resize_placed(src, width, height, IC_RESIZE_FILL, allow_upscale, use_helper_thread, NULL,
                                    &cover, err);
    if (st != IC_OK) return st;
    st = ic_crop_placed(cover, width, height, NULL, cancel_flag, out, err);
    ic_image_free(cover);
    return st;
}
