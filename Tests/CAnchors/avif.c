/* avif.c — the bare libavif decode the AVIF benchmarks compare against. */
#include "CAnchors.h"

#include <avif/avif.h>

int anchors_avif_decode_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity) {
    avifDecoder *dec = avifDecoderCreate();
    avifImage *image = avifImageCreateEmpty();
    int rc = -1;
    if (dec && image && avifDecoderReadMemory(dec, image, data, size) == AVIF_RESULT_OK &&
        (size_t)image->width * image->height * 4 <= capacity) {
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, image);
        rgb.format = AVIF_RGB_FORMAT_RGBA;
        rgb.depth = 8;
        rgb.pixels = dst;
        rgb.rowBytes = image->width * 4;
        rc = avifImageYUVToRGB(image, &rgb) == AVIF_RESULT_OK ? 0 : -1;
    }
    if (image) avifImageDestroy(image);
    if (dec) avifDecoderDestroy(dec);
    return rc;
}
