/*
 * ic_exif.h — the EXIF orientation as each container carries it (exif.c). Not
 * installed.
 */
#ifndef IC_EXIF_H
#define IC_EXIF_H

#include <stddef.h>
#include <stdint.h>

/** Orientation (1…8) from an EXIF TIFF block (the bytes after "Exif\0\0"); 1 if absent or bad. */
uint8_t ic__exif_orientation(const uint8_t *tiff, size_t size);

/**
 * Orientation (1…8) from a PNG's eXIf chunk, if one comes before the first
 * IDAT (it must be known before the pixels, to plan a thumbnail); 1 otherwise.
 */
uint8_t ic__png_exif_orientation(const uint8_t *png, size_t size);

/** Orientation (1…8) from a WebP's EXIF chunk, if its VP8X header announces one; 1 otherwise. */
uint8_t ic__webp_exif_orientation(const uint8_t *webp, size_t size);

#endif /* IC_EXIF_H */
