/*
 * CAnchors.h — bare codec-library calls: the anchors the benchmarks compare
 * ImageKit against (same bytes, same process), and reference encoders that
 * make test and benchmark inputs. Not part of any product.
 *
 * Buffers returned through `out` are malloc'd; free them with anchors_free.
 * Functions return 0 on success and -1 on failure (the ICC profile readers
 * also return 1: no profile).
 */
#ifndef CANCHORS_H
#define CANCHORS_H

#include <stddef.h>
#include <stdint.h>

/** Frees a buffer an anchors_* function returned. */
void anchors_free(void *p);

/* ---- Reference encoders (straight RGBA input, tightly packed). ---- */

/** JPEG through TurboJPEG. subsampling: 444, 422 or 420. */
int anchors_encode_jpeg(const uint8_t *rgba, int width, int height, int quality, int progressive,
                        int subsampling, uint8_t **out, size_t *out_size);

/** PNG through libpng's simplified API; `alpha` keeps the alpha channel, else RGB. */
int anchors_encode_png(const uint8_t *rgba, int width, int height, int alpha, uint8_t **out,
                       size_t *out_size);

/** WebP through libwebp: lossless when quality < 0, else lossy at `quality`. */
int anchors_encode_webp(const uint8_t *rgba, int width, int height, float quality, uint8_t **out,
                        size_t *out_size);

/**
 * Animated GIF through giflib: `frames` frames of width x height, each quantised
 * to a fixed 6x7x6 colour cube; `delay_cs` per frame.
 */
int anchors_encode_gif(const uint8_t *const *frames_rgba, int frames, int width, int height,
                       int delay_cs, uint8_t **out, size_t *out_size);

/**
 * Animated GIF through giflib with a palette per frame from libimagequant (quality 0...`quality`,
 * `speed`, dithering level `dither`), the frames written whole (straight, opaque RGBA in);
 * `delay_cs` per frame, looping forever.
 */
int anchors_encode_gif_quantized(const uint8_t *const *frames_rgba, int frames, int width, int height,
                                 int delay_cs, int quality, int speed, float dither, uint8_t **out,
                                 size_t *out_size);

/** Settings for anchors_encode_jpeg_libjpeg. */
typedef struct anchors_jpeg_settings {
    int components;      /* 1 (grey), 3 (RGB input) or 4 (CMYK input) */
    int ycck;            /* with 4 components: store as YCCK instead of CMYK */
    int quality;
    int progressive;
    int arithmetic;      /* arithmetic instead of Huffman coding */
    int restart_rows;    /* restart interval in MCU rows (0: none) */
    int h_samp, v_samp;  /* luma sampling factors (1,1 = 4:4:4; 2,2 = 4:2:0) */
} anchors_jpeg_settings;

/**
 * JPEG through the libjpeg API, for the colour spaces and codings TurboJPEG
 * does not write. `pixels` has `components` bytes a pixel, tightly packed;
 * 4-component input is written with an Adobe marker, i.e. inverted inks as
 * Photoshop stores them.
 */
int anchors_encode_jpeg_libjpeg(const uint8_t *pixels, int width, int height,
                                const anchors_jpeg_settings *settings, uint8_t **out,
                                size_t *out_size);

/** Settings for anchors_encode_jpeg_scans. */
typedef struct anchors_jpeg_script {
    int components;       /* 1 (grey) or 3 (RGB input, stored as YCbCr) */
    int quality;
    int h_samp[3], v_samp[3]; /* sampling factors of each component (0: 1) */
    int restart_interval; /* in MCUs (0: none) */
    const char *scans;    /* jpegtran's -scans syntax; NULL: libjpeg's own progression */
} anchors_jpeg_script;

/**
 * A progressive JPEG through the libjpeg API with the scan script, sampling factors and
 * restart interval of `settings` (jpeg_scans.c); `pixels` has `components` bytes a
 * pixel. Fails (-1) when libjpeg refuses the script.
 */
int anchors_encode_jpeg_scans(const uint8_t *pixels, int width, int height,
                              const anchors_jpeg_script *settings, uint8_t **out,
                              size_t *out_size);

/**
 * A JPEG transcoded losslessly (its coefficients) to a Huffman progressive JPEG with the
 * scan script `scans` (NULL: libjpeg's own progression) and restart interval.
 */
int anchors_jpeg_transcode(const uint8_t *data, size_t size, const char *scans, int restart_interval,
                           uint8_t **out, size_t *out_size);

/**
 * Animated WebP through libwebpmux's WebPAnimEncoder: `frames` full-canvas
 * straight-RGBA frames, lossless, `duration_ms` each, looping forever.
 */
int anchors_encode_webp_animation(const uint8_t *const *frames_rgba, int frames, int width,
                                  int height, int duration_ms, uint8_t **out, size_t *out_size);

/**
 * Writes a large synthetic RGB PNG to `path` row by row (never holding the
 * picture): smooth gradients crossed by bands, zlib level 1 — compressible, so
 * a 100 MP file stays small. Returns 0 on success.
 */
int anchors_write_png_gradient(const char *path, int width, int height);

/* ---- Bare decodes (the anchors). `out` receives straight RGBA, tightly packed. ---- */

/** tjDecompress2 to RGBA at scale 1/denominator (1, 2, 4 or 8); default IDCT. */
int anchors_decode_jpeg_turbo(const uint8_t *data, size_t size, int denominator, uint8_t **out,
                              int *width, int *height);

/** libjpeg API decode to CMYK (4 bytes a pixel, as stored; YCCK converted to CMYK). */
int anchors_decode_jpeg_cmyk(const uint8_t *data, size_t size, uint8_t **out, int *width,
                             int *height);

/** libjpeg API decode to RGBA at scale 1/denominator (1, 2, 4 or 8); default IDCT. */
int anchors_decode_jpeg_libjpeg(const uint8_t *data, size_t size, int denominator, uint8_t **out,
                                int *width, int *height);

/** libpng simplified API to RGBA. */
int anchors_decode_png(const uint8_t *data, size_t size, uint8_t **out, int *width, int *height);

/** WebPDecodeRGBA. */
int anchors_decode_webp(const uint8_t *data, size_t size, uint8_t **out, int *width, int *height);

/* ---- Bare decodes into a caller's buffer (RGBA, width*4 bytes a row); the benchmark anchors. ---- */

/** tjDecompress2 to RGBA at scale 1/denominator into `dst` (capacity bytes). */
int anchors_tj_decompress_into(const uint8_t *data, size_t size, int denominator, uint8_t *dst,
                               size_t capacity);

/** libpng simplified API into `dst`. */
int anchors_png_decode_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity);

/** WebPDecodeRGBAInto `dst`. */
int anchors_webp_decode_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity);

/** DGifSlurp; returns the number of images, or -1. No compositing. */
int anchors_decode_gif(const uint8_t *data, size_t size);

/**
 * libavif (avif.c): avifDecoderReadMemory, then avifImageYUVToRGB to RGBA8 (libavif's
 * defaults) into `dst`, width*4 bytes a row. One thread.
 */
int anchors_avif_decode_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity);

/* ---- Embedded ICC profiles, read back by each library's own reader (icc.c). ---- */

/*
 * Each returns 0 with the profile's bytes in `out`, 1 if the file carries no
 * profile, -1 if the file cannot be read (or, for WebP, if the VP8X ICC flag
 * and the ICCP chunk disagree).
 */

/** libjpeg's jpeg_read_icc_profile (APP2 ICC_PROFILE markers, reassembled). */
int anchors_jpeg_icc_profile(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size);

/** libpng's png_get_iCCP (the iCCP chunk, inflated). */
int anchors_png_icc_profile(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size);

/** libwebpmux's WebPMuxGetChunk("ICCP"), checked against the VP8X flag. */
int anchors_webp_icc_profile(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size);

/* ---- Little CMS 2, bare: the colour-management anchor. ---- */

/**
 * An lcms2 transform from the RGB profile `icc` to lcms's built-in sRGB, RGBA8 in and out
 * (alpha copied), perceptual intent with black-point compensation, as ImageKit asks lcms
 * for; NULL if lcms cannot use the profile. Free with anchors_lcms_free.
 */
void *anchors_lcms_rgba_to_srgb(const uint8_t *icc, size_t size);

/** cmsDoTransform over `pixels` RGBA8 pixels in place. */
void anchors_lcms_apply(void *transform, uint8_t *rgba, size_t pixels);

/** Deletes a transform from anchors_lcms_rgba_to_srgb. */
void anchors_lcms_free(void *transform);

/**
 * A matrix/shaper RGB profile made by lcms (cmsCreateRGBProfile, saved to memory): white
 * point D65, primaries `xy` (red x, y, green x, y, blue x, y) and a pure power curve per
 * channel (`gamma` red, green, blue). 0 with the bytes in `out` (free them), -1 on failure.
 */
int anchors_make_rgb_profile(const double xy[6], const double gamma[3], uint8_t **out, size_t *out_size);

/* ---- HEIC and JPEG XL (heifjxl.c) ---- */

/** HEIC (libheif's x265 encoder, lossy `quality` 0-100) of the colour of RGBA pixels, no alpha plane; -1 without an HEVC encoder. */
int anchors_encode_heic(const uint8_t *rgba, int width, int height, int quality, uint8_t **out,
                        size_t *out_size);

/** What anchors_encode_heic_with writes. */
typedef struct anchors_heic_options {
    /** Lossy quality, 0-100. */
    int quality;
    /** Bits a sample: 8 (the samples are bytes) or 9-16 (native uint16_t, each below 2^bits). */
    int bits;
    /** Nonzero: an alpha plane from the fourth sample (else alpha is dropped). */
    int alpha;
    /** Nonzero: an nclx colr box with these H.273 code points, full range (the matrix also
     * converts the RGB to YCbCr). */
    int nclx;
    int primaries;
    int transfer;
    int matrix;
    /** A 'prof' colr box with this ICC profile when icc_size > 0 (beside the nclx box, if any). */
    const uint8_t *icc;
    size_t icc_size;
} anchors_heic_options;

/** HEIC of `width` x `height` RGBA samples (4 a pixel, see `opts`) with libheif's x265 encoder;
 * -1 without an HEVC encoder or on failure. */
int anchors_encode_heic_with(const void *rgba, int width, int height, const anchors_heic_options *opts,
                             uint8_t **out, size_t *out_size);

/** The bare libheif decode: primary image to interleaved RGBA8 (transformations applied). */
int anchors_decode_heic(const uint8_t *data, size_t size);

/** libheif's own decode of the primary image to 16-bit RGB(A) at the coded depth
 * (heif_chroma_interleaved_RRGGBB(AA)_LE, transformations applied): 4 native uint16_t a
 * pixel into `dst` (alpha 2^bits - 1 without an alpha plane), *bits the depth libheif
 * reports; -1 on failure or when `capacity` samples are too few. */
int anchors_decode_heic_samples(const uint8_t *data, size_t size, uint16_t *dst, size_t capacity,
                                int *width, int *height, int *bits);

/** JPEG XL (libjxl's JxlEncoder, XYB at `distance`, `effort` 1-9) of RGBA's colour, sRGB. */
int anchors_encode_jxl(const uint8_t *rgba, int width, int height, float distance, int effort,
                       uint8_t **out, size_t *out_size);

/** The bare libjxl decode: the whole input at once, RGBA8 into `dst`, on the calling thread. */
int anchors_decode_jxl_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity);

/* libvips, opened on first use (Tests/CAnchors/vips.c): NULL once it is ready (one thread,
 * operation cache off), else why it cannot be used. */
const char *anchors_vips_start(void);

/* Lets libvips run its operations on `threads` threads (1, as it starts, unless set). */
void anchors_vips_set_concurrency(int threads);

/* vips_thumbnail_buffer of `data` to `width` px wide (height to keep the aspect ratio within a
 * width x width box), evaluated into memory and freed: 0, or -1 when libvips fails. */
int anchors_vips_thumbnail(const uint8_t *data, size_t size, int width);

/* A libvips image over `width` x `height` RGBA8 pixels, rows `stride` bytes apart (borrowed:
 * they must outlive it), or NULL. Free with anchors_vips_image_free. */
void *anchors_vips_image_rgba(const uint8_t *pixels, int width, int height, size_t stride);

/* Drops a libvips image from anchors_vips_image_rgba. */
void anchors_vips_image_free(void *image);

/* vips_gaussblur of `image` with `sigma` (libvips's defaults otherwise), evaluated into memory
 * and freed: 0, or -1 when libvips fails. */
int anchors_vips_gaussblur(void *image, double sigma);

/* vips_sharpen of `image` with `sigma` (libvips's defaults otherwise, as imgproxy calls it),
 * evaluated into memory and freed: 0, or -1 when libvips fails. */
int anchors_vips_sharpen(void *image, double sigma);

/* vips_linear of `image` with a = scale, b = offset on the colours (alpha kept), uchar output,
 * evaluated into memory and freed: 0, or -1 when libvips fails. */
int anchors_vips_linear(void *image, double scale, double offset);

/* Rounded corners as a libvips user makes them: vips_svgload_buffer of a rounded rectangle
 * of the image's size with corner radius `radius`, then vips_composite2 in DEST_IN mode,
 * evaluated into memory and freed: 0, or -1 when libvips fails. */
int anchors_vips_round_corners(void *image, int width, int height, double radius);

/* An overlay as a libvips user draws it: the mark's alpha times `opacity` (vips_linear), then
 * vips_composite2 in OVER mode at (x, y) over the width x height `image`; with `spacing` >= 0
 * the mark is tiled first (vips_embed to add the spacing, vips_replicate, vips_extract_area to
 * the image's size with a tile at (x, y)). Evaluated into memory and freed: 0, or -1 when
 * libvips fails. */
int anchors_vips_overlay(void *image, int width, int height, void *mark, int mark_w, int mark_h, double opacity,
                         int x, int y, int spacing);

/* vips_rotate of `image` by `degrees` clockwise (the canvas grown to fit, libvips's default
 * bilinear interpolator and transparent background), evaluated into memory and freed: 0, or
 * -1 when libvips fails. */
int anchors_vips_rotate(void *image, double degrees);

/* vips_smartcrop of `image` to width x height with "interesting" VIPS_INTERESTING_ATTENTION,
 * evaluated into memory and freed: 0, or -1 when libvips fails. */
int anchors_vips_smartcrop(void *image, int width, int height);
/* vips_embed of `image` on a `width` x `height` canvas at (x, y), extended with the
 * `background` colour (`bands` values, as many as the image has), evaluated into memory and
 * freed: 0, or -1 when libvips fails. */
int anchors_vips_embed(void *image, int x, int y, int width, int height, const double *background, int bands);

/* Trim as a libvips user does it: vips_find_trim of `image` with `threshold` and the
 * `background` colour (`bands` values, without alpha: libvips flattens first), then vips_crop to
 * the box (a copy when it is empty), evaluated into memory and freed: 0, or -1 when libvips
 * fails. */
int anchors_vips_trim(void *image, double threshold, const double *background, int bands);

#endif /* CANCHORS_H */
