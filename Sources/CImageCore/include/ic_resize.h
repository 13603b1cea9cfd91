/*
 * ic_resize.h — resizing and cropping decoded images.
 *
 * Resampling is done on premultiplied pixels (no dark fringes around
 * transparency): exact area averaging for large reductions, then Lanczos-3
 * to the exact size. Every frame of an animation is resized alike.
 */
#ifndef IC_RESIZE_H
#define IC_RESIZE_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"
#include "ic_op_gravity.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a picture is brought to a target size. */
typedef enum ic_resize_mode {
    /** Fit inside the box, keeping the aspect ratio (one side may come out shorter). */
    IC_RESIZE_FIT = 0,
    /** Fill the box exactly, keeping the aspect ratio: scale to cover, then crop the centre. */
    IC_RESIZE_FILL = 1,
    /** Scale each axis to the box independently (the aspect ratio changes). */
    IC_RESIZE_STRETCH = 2
} ic_resize_mode;

/**
 * Resizes every frame of `src` to the box width x height with `mode`.
 * A box side of 0 is unconstrained (follows the aspect ratio). With
 * `allow_upscale` 0 the result is never larger than the source (FIT and FILL
 * then return at most the source size, FILL cropped to the box). A result of
 * more than IC_DEFAULT_MAX_PIXELS pixels fails with IC_ERR_LIMIT_EXCEEDED.
 */
ic_status ic_resize(const ic_image *src, uint32_t width, uint32_t height, ic_resize_mode mode,
                    int allow_upscale, ic_image **out, ic_error *err);

/**
 * ic_resize, with `use_helper_thread` 1 allowed one helper thread of its own: a large
 * still (a million input pixels or more) is then resized in bands of output rows that the
 * calling thread and the helper claim in turn — lower latency for a lone job on an idle
 * core, for a little more CPU time (the input rows at band edges go through the horizontal
 * pass twice: 3 % of the work or less, up to 8 % for reductions of 15x and more). The pixels are the same either way; animations and small images are
 * resized on the calling thread alone.
 */
ic_status ic_resize_with_helper(const ic_image *src, uint32_t width, uint32_t height,
                                ic_resize_mode mode, int allow_upscale, int use_helper_thread,
                                ic_image **out, ic_error *err);

/**
 * ic_resize_with_helper, with IC_RESIZE_FILL's window (when both box sides are given) placed
 * in the source by `gravity` (ic_gravity_place) before resampling; the centre gives exactly
 * ic_resize's result. With `gravity` NULL, FILL scales to cover the box and cuts nothing (the
 * result is at least the box on both sides, or the source's size without upscaling). Other
 * modes ignore `gravity`.
 */
ic_status ic_resize_placed(const ic_image *src, uint32_t width, uint32_t height, ic_resize_mode mode,
                           int allow_upscale, int use_helper_thread, const ic_gravity *gravity,
                           ic_image **out, ic_error *err);

/** Copies the rectangle (x, y, width, height) of every frame; it must lie inside the image. */
ic_status ic_crop(const ic_image *src, uint32_t x, uint32_t y, uint32_t width, uint32_t height,
                  ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_RESIZE_H */
