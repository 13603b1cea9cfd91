/*
 * ic_formats.h — every format decoder's whole-buffer entry points, decode and
 * probe (one file each), as decode.c dispatches to them. Not installed.
 */
#ifndef IC_FORMATS_H
#define IC_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "ic_decoder.h"

ic_status ic_jpeg_decode(ic_decoder *d);
ic_status ic_png_decode(ic_decoder *d);
ic_status ic_gif_decode(ic_decoder *d);
ic_status ic_webp_decode(ic_decoder *d);
ic_status ic_avif_decode(ic_decoder *d);
ic_status ic_heif_decode(ic_decoder *d);
ic_status ic_jxl_decode(ic_decoder *d);

ic_status ic_jpeg_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_png_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_gif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_webp_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_avif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_heif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic_jxl_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);

#endif /* IC_FORMATS_H */
