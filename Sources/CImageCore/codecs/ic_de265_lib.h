/*
 * ic_de265_lib.h — libde265, loaded on first use (codecs/codec_libs.c). Not installed.
 *
 * libheif decodes HEVC through libde265, whose pictures it hands on as they are, damaged
 * or not. ImageKit registers a decoder of its own with libheif instead (decode/heif_hevc.c): the
 * same libde265, refusing what it reports damaged. libde265.so.0 (Debian 12's libde265-0, which libheif1
 * depends on; else libde265.so, the -dev package's link) is opened with dlopen by the first
 * HEIF decode, as libheif is (see ic_heif_lib.h for the pattern this header follows).
 */
#ifndef IC_DE265_LIB_H
#define IC_DE265_LIB_H

#include <libde265/de265.h>

#include "ic_error.h"

/** The libde265 functions the core calls: X(name) for each. */
#define IC_DE265_FUNCTIONS(X)                                                                 \
    X(de265_decode)                                                                           \
    X(de265_flush_data)                                                                       \
    X(de265_free)                                                                             \
    X(de265_free_decoder)                                                                     \
    X(de265_get_bits_per_pixel)                                                               \
    X(de265_get_chroma_format)                                                                \
    X(de265_get_default_image_allocation_functions)                                           \
    X(de265_get_error_text)                                                                   \
    X(de265_get_image_colour_primaries)                                                       \
    X(de265_get_image_full_range_flag)                                                        \
    X(de265_get_image_height)                                                                 \
    X(de265_get_image_matrix_coefficients)                                                    \
    X(de265_get_image_plane)                                                                  \
    X(de265_get_image_plane_user_data)                                                        \
    X(de265_get_image_transfer_characteristics)                                               \
    X(de265_get_image_width)                                                                  \
    X(de265_get_next_picture)                                                                 \
    X(de265_get_warning)                                                                      \
    X(de265_init)                                                                             \
    X(de265_new_decoder)                                                                      \
    X(de265_push_NAL)                                                                         \
    X(de265_release_next_picture)                                                             \
    X(de265_set_image_allocation_functions)                                                   \
    X(de265_set_image_plane)

/** A pointer to each function of IC_DE265_FUNCTIONS, typed as <libde265/de265.h> declares it. */
typedef struct ic__de265_functions {
#define IC_DE265_MEMBER(name) __typeof__(name) *name;
    IC_DE265_FUNCTIONS(IC_DE265_MEMBER)
#undef IC_DE265_MEMBER
} ic__de265_functions;

/** The table; complete once ic__de265_load has returned IC_OK on the calling thread. */
extern ic__de265_functions ic__de265_fn;

/**
 * Loads libde265 and resolves the table, once per process (pthread_once); later calls only
 * report the outcome. IC_OK, or IC_ERR_UNSUPPORTED_FORMAT with "<format>: libde265.so.0 could
 * not be loaded: <dlerror>" (or the function it lacks) in `err`, which may be NULL.
 */
ic_status ic__de265_load(const char *format, ic_error *err);

/* Every libde265 call below this point goes through the table (not in codec_libs.c, which
 * fills it). */
#ifndef IC_CODEC_LIBS_LOADER
#define de265_decode (ic__de265_fn.de265_decode)
#define de265_flush_data (ic__de265_fn.de265_flush_data)
#define de265_free (ic__de265_fn.de265_free)
#define de265_free_decoder (ic__de265_fn.de265_free_decoder)
#define de265_get_bits_per_pixel (ic__de265_fn.de265_get_bits_per_pixel)
#define de265_get_chroma_format (ic__de265_fn.de265_get_chroma_format)
#define de265_get_default_image_allocation_functions (ic__de265_fn.de265_get_default_image_allocation_functions)
#define de265_get_error_text (ic__de265_fn.de265_get_error_text)
#define de265_get_image_colour_primaries (ic__de265_fn.de265_get_image_colour_primaries)
#define de265_get_image_full_range_flag (ic__de265_fn.de265_get_image_full_range_flag)
#define de265_get_image_height (ic__de265_fn.de265_get_image_height)
#define de265_get_image_matrix_coefficients (ic__de265_fn.de265_get_image_matrix_coefficients)
#define de265_get_image_plane (ic__de265_fn.de265_get_image_plane)
#define de265_get_image_plane_user_data (ic__de265_fn.de265_get_image_plane_user_data)
#define de265_get_image_transfer_characteristics (ic__de265_fn.de265_get_image_transfer_characteristics)
#define de265_get_image_width (ic__de265_fn.de265_get_image_width)
#define de265_get_next_picture (ic__de265_fn.de265_get_next_picture)
#define de265_get_warning (ic__de265_fn.de265_get_warning)
#define de265_init (ic__de265_fn.de265_init)
#define de265_new_decoder (ic__de265_fn.de265_new_decoder)
#define de265_push_NAL (ic__de265_fn.de265_push_NAL)
#define de265_release_next_picture (ic__de265_fn.de265_release_next_picture)
#define de265_set_image_allocation_functions (ic__de265_fn.de265_set_image_allocation_functions)
#define de265_set_image_plane (ic__de265_fn.de265_set_image_plane)
#endif

#endif /* IC_DE265_LIB_H */
