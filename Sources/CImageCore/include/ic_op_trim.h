/*
 * ic_op_trim.h — trimming: the bounding box of what differs from the background, and the crop
 * to it.
 */
#ifndef IC_OP_TRIM_H
#define IC_OP_TRIM_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest threshold ic_find_trim and ic_trim accept (a sample difference is at most 255). */
#define IC_TRIM_MAX_THRESHOLD 255.0

/** A rectangle of an image, in pixels; width and height 0 when it is empty. */
typedef struct ic_trim_box {
    uint32_t x, y, width, height;
} ic_trim_box;

/**
 * The smallest rectangle holding every pixel of every frame of `src` (one box for all frames)
 * that differs from the background by more than `threshold` in one of its four premultiplied
 * samples (red, green, blue, alpha: a transparent border is trimmed whatever colour it hides).
 * The background is `background` (premultiplied RGBA), or with NULL the top-left pixel of
 * the first frame. `threshold` must be within 0...IC_TRIM_MAX_THRESHOLD. An image that is all
 * background gives an empty box (width and height 0). `cancel_flag` may be NULL.
 */
ic_status ic_find_trim(const ic_image *src, double threshold, const uint8_t *background,
                       const int *cancel_flag, ic_trim_box *box, ic_error *err);

/**
 * `src` cropped to ic_find_trim's box (every frame alike, metadata kept). An image that is all
 * background comes back unchanged (a copy): a service showing a blank picture keeps showing it.
 */
ic_status ic_trim(const ic_image *src, double threshold, const uint8_t *background, const int *cancel_flag,
                  ic_image **out, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_OP_TRIM_H */
