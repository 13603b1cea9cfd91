/*
 * anchors_vips_color.h — libvips's nearest operations to ImageKit's colour operations, the
 * peers of the operation benchmarks (Tests/CAnchors/vips_color.c): one thread, cache off, as
 * anchors_vips_start sets libvips up.
 */
#ifndef ANCHORS_VIPS_COLOR_H
#define ANCHORS_VIPS_COLOR_H

#include <stddef.h>
#include <stdint.h>

/* RGBA8 pixels (width * 4 bytes a row) wrapped as a libvips image, without a copy; the pixels
 * must outlive it. NULL, with the reason in *why, when libvips is missing or refuses. */
void *anchors_vips_rgba_image(const uint8_t *pixels, int width, int height, const char **why);

/* Frees an image from anchors_vips_rgba_image. */
void anchors_vips_image_free(void *image);

/* vips_linear of `image` with a = scale, b = offset on the colours (alpha kept), uchar output,
 * evaluated into memory and freed: 0, or -1 when libvips fails. */
int anchors_vips_linear(void *image, double scale, double offset);

/* Rounded corners as a libvips user makes them: vips_svgload_buffer of a rounded rectangle
 * of the image's size with corner radius `radius`, then vips_composite2 in DEST_IN mode,
 * evaluated into memory and freed: 0, or -1 when libvips fails. */
int anchors_vips_round_corners(void *image, int width, int height, double radius);

#endif /* ANCHORS_VIPS_COLOR_H */
