/*
 * ic_blur_internal.h — the separable Gaussian engine shared by ic_blur and ic_sharpen
 * (gaussian.c). Not installed.
 */
#ifndef IC_BLUR_INTERNAL_H
#define IC_BLUR_INTERNAL_H

#include <stdint.h>

#include "../common/ic_common_internal.h"
#include "ic_image.h"

/**
 * Fixed-point weight of the kernel's whole: each pass's taps sum to exactly this, so a
 * flat area (and an opaque alpha) comes out unchanged.
 */
#define IC_GAUSS_ONE 65536u

/** Bits of the blurred values handed to a row sink: value * 2^IC_GAUSS_OUT_BITS. */
#define IC_GAUSS_OUT_BITS 24

/** Half of a symmetric Gaussian kernel in fixed point: taps[0] is the centre. */
typedef struct ic__gauss_kernel {
    uint32_t radius;
    uint32_t *taps; /* radius + 1 entries; taps[0] + 2 * (taps[1] + ... + taps[radius]) == IC_GAUSS_ONE */
} ic__gauss_kernel;

/**
 * Checks sigma (finite, 0 < sigma <= IC_BLUR_MAX_SIGMA; `what` names the operation in
 * the message) and builds its kernel. Free with ic__gauss_kernel_free.
 */
ic_status ic__gauss_kernel_make(double sigma, const char *what, ic__gauss_kernel *k, ic_error *err);

/** Frees a kernel's taps. */
void ic__gauss_kernel_free(ic__gauss_kernel *k);

/**
 * Receives row `y` of a blurred frame: 4 * width values, each the blurred premultiplied
 * sample times 2^IC_GAUSS_OUT_BITS (at most 255 << IC_GAUSS_OUT_BITS).
 */
typedef void (*ic_gauss_row_sink)(void *ctx, uint32_t y, const uint32_t *blurred);

/**
 * Blurs one width x height frame (rows `stride` bytes apart) with `k`, edges extended,
 * calling `sink` for every output row in order. Reads `cancel_flag` (may be NULL) every
 * few rows. IC_ERR_CANCELLED or IC_ERR_OUT_OF_MEMORY with `what` in the message.
 */
ic_status ic__gauss_frame(const uint8_t *frame, size_t stride, uint32_t width, uint32_t height,
                         const ic__gauss_kernel *k, const int *cancel_flag, const char *what,
                         ic_gauss_row_sink sink, void *ctx, ic_error *err);

#endif /* IC_BLUR_INTERNAL_H */
