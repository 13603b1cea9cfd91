/*
 * ic_transform.h — exact pixel rearrangements: EXIF orientations, rotations, flips.
 */
#ifndef IC_TRANSFORM_H
#define IC_TRANSFORM_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * EXIF orientation values. The value says how the stored pixels must be
 * transformed to be displayed upright.
 */
typedef enum ic_orientation {
    IC_ORIENT_UP = 1,              /**< as stored */
    IC_ORIENT_UP_MIRRORED = 2,     /**< flip horizontally */
    IC_ORIENT_DOWN = 3,            /**< rotate 180° */
    IC_ORIENT_DOWN_MIRRORED = 4,   /**< flip vertically */
    IC_ORIENT_LEFT_MIRRORED = 5,   /**< transpose (mirror across the main diagonal) */
    IC_ORIENT_RIGHT = 6,           /**< rotate 90° clockwise */
    IC_ORIENT_RIGHT_MIRRORED = 7,  /**< transverse (mirror across the anti-diagonal) */
    IC_ORIENT_LEFT = 8             /**< rotate 90° counter-clockwise */
} ic_orientation;

/**
 * Returns a new image with `orientation` applied to every frame of `src`
 * (width and height swap for 5…8). Metadata is copied; orientation of the
 * result is marked applied.
 */
ic_status ic_image_orient(const ic_image *src, ic_orientation orientation, ic_image **out,
                          ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_TRANSFORM_H */
