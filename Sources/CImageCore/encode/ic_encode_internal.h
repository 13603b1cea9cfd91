/*
 * ic_encode_internal.h — what the encoders in encode/ share. Not installed.
 */
#ifndef IC_ENCODE_INTERNAL_H
#define IC_ENCODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <webp/mux_types.h>

#include "ic_encode.h"

/**
 * Encodes `frame` (premultiplied RGBA8, `image`'s size and stride) as an AVIF still with
 * libavif (avif_encode.c). The options are checked here; the ICC profile already was.
 */
ic_status ic__encode_avif(const ic_image *image, const uint8_t *frame, const ic_encode_options *options,
                         uint8_t **out, size_t *out_size, ic_error *err);

/**
 * GIF89a (gif_encode.c): every frame when options->all_frames is set and the image has
 * more than one, else frame options->frame as a still GIF.
 */
ic_status ic__encode_gif(const ic_image *image, const ic_encode_options *options, uint8_t **out,
                        size_t *out_size, ic_error *err);

/**
 * WebP (webp_encode.c): every frame as an animation when options->all_frames is set and the
 * image has more than one, else frame options->frame as a still; with options' ICC profile
 * in an ICCP chunk. The ICC profile was already checked.
 */
ic_status ic__encode_webp(const ic_image *image, const ic_encode_options *options, uint8_t **out,
                         size_t *out_size, ic_error *err);

/**
 * An animated WebP of every frame (webp_anim.c), through libwebpmux's WebPAnimEncoder, into
 * *out (libwebp's memory: the caller frees it with WebPDataClear). The image's size and the
 * quality were checked by the caller (webp_encode.c); no ICC profile is added here.
 */
ic_status ic__encode_webp_animation(const ic_image *image, const ic_encode_options *options,
                                   WebPData *out, ic_error *err);

#endif /* IC_ENCODE_INTERNAL_H */
