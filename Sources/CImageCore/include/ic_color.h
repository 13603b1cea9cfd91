/*
 * ic_color.h — colour management: embedded ICC profiles and conversion to sRGB.
 *
 * What a decode does with colour (ic_decode_options.color_mode):
 *
 * - IC_COLOR_SRGB (default): an image with an embedded ICC profile (JPEG APP2
 *   "ICC_PROFILE" segments, PNG iCCP, WebP ICCP) is converted to sRGB with Little
 *   CMS 2: perceptual intent (lcms falls back to the profile's default intent
 *   when it has no perceptual table) with black-point compensation, as libvips
 *   does. RGB, grey and CMYK profiles are applied to pixels of that kind; a
 *   grey profile gives grey pixels in sRGB.
 * - IC_COLOR_RAW: the source's values are kept as they are.
 *
 * In both modes the profile bytes are kept on the image (ic_image_icc_profile).
 *
 * Not applied: PNG gAMA and cHRM without iCCP (the reference decoders and libvips
 * ignore them too); a PNG sRGB chunk means sRGB already, so nothing to do.
 * A profile that describes sRGB (colorants, white point and tone curves of
 * sRGB IEC 61966-2.1 within a tight tolerance, whatever its name) is treated as
 * untagged: the pixels stay bit-identical to an untagged decode.
 * A CMYK or YCCK JPEG without a profile keeps ImageKit's plain conversion
 * (R = (255 - C)(255 - K) / 255 on plain inks, likewise G and B): no press profile
 * is assumed.
 *
 * A profile that is larger than IC_ICC_MAX_BYTES, split over JPEG segments with
 * a gap, a duplicate or inconsistent counts, unreadable by lcms, or of a colour
 * space other than the pixels' is ignored: the image decodes as untagged, with
 * ic_image.icc_ignored set, and without an error.
 *
 * Conversion happens row by row at the codec's size, after shrink on load (JPEG
 * DCT scaling, libwebp's scaler) and before premultiplying and resampling.
 *
 * RGB matrix/shaper profiles (P3, Adobe RGB, most camera profiles) are converted
 * by ImageKit's own vectorised path, checked against lcms when it is built (see
 * ic_color_cache_stats.fast_paths); other profiles go through lcms.
 *
 * Transforms are cached process-wide, keyed by the XXH64 of the profile bytes,
 * their size and the pixel layout (the bytes themselves are compared on a hit, so
 * a crafted collision cannot borrow another profile's transform): a second image
 * with the same profile parses nothing. The verdicts "describes sRGB" and "unusable" are cached the same way,
 * so an sRGB-tagged image costs a hash of its profile.
 */
#ifndef IC_COLOR_H
#define IC_COLOR_H

#include <stddef.h>
#include <stdint.h>

#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a decode does with an embedded colour profile. */
typedef enum ic_color_mode {
    /** Convert tagged images to sRGB (default). */
    IC_COLOR_SRGB = 0,
    /** Keep the source's pixel values; the profile is only reported. */
    IC_COLOR_RAW = 1
} ic_color_mode;

/** Colour space an ICC profile declares (its header's data colour space). */
typedef enum ic_color_space {
    /** No profile. */
    IC_COLOR_SPACE_NONE = 0,
    /** 'RGB ' */
    IC_COLOR_SPACE_RGB = 1,
    /** 'GRAY' */
    IC_COLOR_SPACE_GRAY = 2,
    /** 'CMYK' */
    IC_COLOR_SPACE_CMYK = 3,
    /** Any other space (Lab, YCbCr, n-colour, ...): never applied. */
    IC_COLOR_SPACE_OTHER = 4
} ic_color_space;

/** Largest embedded profile ImageKit reads: 4 MiB. Larger ones are ignored. */
#define IC_ICC_MAX_BYTES (4u * 1024 * 1024)

/**
 * The source's ICC profile as embedded (reassembled for JPEG), or NULL when it
 * had none or it was ignored for its size or its JPEG segments. *size gets the
 * byte count (0 with NULL). The bytes live as long as the image.
 */
const uint8_t *ic_image_icc_profile(const ic_image *image, size_t *size);

/** Counters of the process-wide transform cache, for tests and metrics. */
typedef struct ic_color_cache_stats {
    /** Decodes that looked a profile up (IC_COLOR_SRGB with a profile). */
    uint64_t lookups;
    /** Lookups answered by the cache (no profile parsing). */
    uint64_t hits;
    /** Profiles lcms parsed (cache misses). */
    uint64_t profiles_parsed;
    /** Transforms lcms built. */
    uint64_t transforms_created;
    /**
     * Of those, how many ImageKit's matrix/shaper path replaced (it agreed with lcms within
     * one level on a 17^3 colour grid); it converts several times faster.
     */
    uint64_t fast_paths;
    /** Errors lcms reported (through ImageKit's handler: never printed). */
    uint64_t lcms_errors;
    /** Entries held now. */
    uint32_t entries;
    /** Most entries held (IC_COLOR_CACHE_CAPACITY). */
    uint32_t capacity;
} ic_color_cache_stats;

/** Entries the transform cache holds before it drops the least recently used. */
#define IC_COLOR_CACHE_CAPACITY 32u

/** Reads the transform cache's counters. */
void ic_color_cache_get_stats(ic_color_cache_stats *stats);

/** Drops every idle cache entry (entries in use by a decode go when it ends); counters stay. */
void ic_color_cache_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* IC_COLOR_H */
