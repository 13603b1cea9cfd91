/*
 * ic_formats.h — every format decoder's whole-buffer entry points, decode and
 * probe (one file each), as decode.c dispatches to them. Not installed.
 */
#ifndef IC_FORMATS_H
#define IC_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "ic_decoder.h"

ic_status ic__jpeg_decode(ic__decoder *d);
ic_status ic__png_decode(ic__decoder *d);
ic_status ic__gif_decode(ic__decoder *d);
ic_status ic__webp_decode(ic__decoder *d);
ic_status ic__avif_decode(ic__decoder *d);
ic_status ic__heif_decode(ic__decoder *d);
ic_status ic__jxl_decode(ic__decoder *d);

ic_status ic__jpeg_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic__png_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic__gif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic__webp_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic__avif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic__heif_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);
ic_status ic__jxl_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err);

#endif /* IC_FORMATS_H */
