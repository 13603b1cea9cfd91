/*
 * ic_encode.h — encoding a decoded image to JPEG, PNG, WebP, AVIF or GIF.
 *
 * Pixels are premultiplied in an ic_image; encoders un-premultiply them
 * (pixels with alpha 0 become 0,0,0,0; nothing divides by zero). JPEG has no
 * alpha: pixels are composited over a background colour instead, which in
 * premultiplied form is exact (c + bg * (255 - a) / 255).
 *
 * Nothing but the pixels is written by default: no colour profile (readers
 * assume sRGB), no EXIF, no text. ic_encode_options.icc_profile embeds a
 * profile when one is wanted.
 */
#ifndef IC_ENCODE_H
#define IC_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"
#include "ic_format.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Options for ic_encode. Initialise with ic_encode_options_init. */
typedef struct ic_encode_options {
    /** IC_FORMAT_JPEG, IC_FORMAT_PNG, IC_FORMAT_WEBP, IC_FORMAT_AVIF or IC_FORMAT_GIF. */
    ic_format format;
    /**
     * JPEG (1...100), lossy WebP and AVIF (0...100) quality. Default 85 (JPEG), 80 (WebP)
     * and 60 (AVIF: AV1 quantizer round((100 - quality) * 63 / 100), colour and alpha).
     * GIF: the highest palette quality libimagequant aims for, 0...100
     * (liq_set_quality(0, quality)), default 100; an image of at most 256 colours (255 with
     * transparency) always gets its exact palette.
     */
    int quality;
    /**
     * AVIF: encoder speed 0 (slowest, smallest) ... 10 (fastest), default 6. GIF:
     * libimagequant speed 1 (slowest, best palette) ... 10 (fastest), default 4.
     */
    int speed;
    /** AVIF: 1 keeps full-resolution chroma (YUV 4:4:4). Default 0: YUV 4:2:0. */
    int yuv444;
    /** JPEG: write a progressive file. Default 0. */
    int progressive;
    /** WebP: lossless instead of lossy. Default 0. */
    int lossless;
    /** PNG: zlib compression level 0...9. Default 6. */
    int compression_level;
    /** JPEG: the colour transparent pixels are composited over (RGB). Default white. */
    uint8_t background[3];
    /** Which frame of an animation to encode (unless all_frames applies). Default 0. */
    uint32_t frame;
    /**
     * GIF and WebP: encode every frame of a multi-frame image as an animation, with its
     * frame delays and loop count (GIF: NETSCAPE2.0 extension; WebP: WebPAnimEncoder). A
     * still image, and JPEG and PNG always, encode `frame` alone. Default 0.
     */
    int all_frames;
    /** GIF: dithering 0.0 (none) ... 1.0 (full Floyd–Steinberg). Default 1.0. */
    float dither_level;
    /**
     * GIF animations: write only the rectangle that changed since the previous frame
     * (disposal "do not dispose") when every frame is opaque; images with transparency
     * write whole frames with disposal "restore to background". Default 1.
     */
    int frame_differencing;
    /**
     * An ICC profile to embed, icc_profile_size bytes (JPEG: APP2 ICC_PROFILE markers,
     * PNG: iCCP, WebP: ICCP). NULL/0 (default): embed nothing, which readers take as
     * sRGB. The bytes are embedded as given, the pixels are not converted; a profile
     * shorter than 132 bytes, whose header size field is not its length, or without
     * the 'acsp' signature is refused (IC_ERR_INVALID_ARGUMENT), as is one JPEG's 255
     * markers cannot hold (over 16,707,345 bytes) and, for PNG, one libpng's own checks
     * refuse (its tag table; a profile that is not for RGB pixels).
     */
    const uint8_t *icc_profile;
    size_t icc_profile_size;
} ic_encode_options;

/** Fills `options` with the defaults for `format`. */
void ic_encode_options_init(ic_encode_options *options, ic_format format);

/**
 * Encodes one frame of `image` (every frame for an animated GIF or WebP, see
 * ic_encode_options.all_frames). On success *out is a malloc'd buffer of
 * *out_size bytes; free it with ic_encode_free.
 */
ic_status ic_encode(const ic_image *image, const ic_encode_options *options, uint8_t **out,
                    size_t *out_size, ic_error *err);

/** Frees a buffer returned by ic_encode. */
void ic_encode_free(uint8_t *data);

#ifdef __cplusplus
}
#endif

#endif /* IC_ENCODE_H */
