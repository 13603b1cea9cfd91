/*
 * ic_encode_internal.h — encoders that live in files of their own beside encode.c.
 * Not installed.
 */
#ifndef IC_ENCODE_INTERNAL_H
#define IC_ENCODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ic_encode.h"

/**
 * Encodes `frame` (premultiplied RGBA8, `image`'s size and stride) as an AVIF still with
 * libavif (avif_encode.c). The options are checked here; the ICC profile already was.
 */
ic_status ic_encode_avif(const ic_image *image, const uint8_t *frame, const ic_encode_options *options,
                         uint8_t **out, size_t *out_size, ic_error *err);

#endif /* IC_ENCODE_INTERNAL_H */
