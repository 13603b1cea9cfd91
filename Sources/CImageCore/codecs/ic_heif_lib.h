/*
 * ic_heif_lib.h — libheif, loaded on first use (codecs/codec_libs.c). Not installed.
 *
 * The C core does not link libheif: libheif.so.1 (Debian 12's libheif1; else libheif.so, the
 * -dev package's link) is opened with dlopen by the first HEIF decode or probe, so a process
 * that never sees one never maps libheif or what it pulls in (x265, libde265, libaom, dav1d).
 *
 * Include this header instead of <libheif/heif.h>. It declares the table of the libheif
 * functions the core calls and then defines each name as its entry, so heif.c reads like
 * plain libheif calls. Every entry point that reaches them calls ic__heif_load first; once that
 * has returned IC_OK on a thread, the table is complete and never written again.
 */
#ifndef IC_HEIF_LIB_H
#define IC_HEIF_LIB_H

#include <libheif/heif.h>
#include <libheif/heif_plugin.h>

#include "ic_error.h"

/**
 * The libheif release ImageKit's HEIF stack (decode/heif/) mirrors, as 0xMMmm (major,
 * minor): its limits and workarounds copy that release's behaviour (decode/heif/README.md),
 * so ic__heif_load refuses a libheif of another major or minor version.
 */
#define IC_HEIF_MIRRORED_VERSION 0x010Fu

/** The libheif functions the core calls: X(name) for each (the version first: it is checked). */
#define IC_HEIF_FUNCTIONS(X)                                                                  \
    X(heif_get_version_number)                                                                \
    X(heif_context_alloc)                                                                     \
    X(heif_context_free)                                                                      \
    X(heif_context_get_primary_image_handle)                                                  \
    X(heif_context_read_from_memory_without_copy)                                             \
    X(heif_context_set_max_decoding_threads)                                                  \
    X(heif_context_set_maximum_image_size_limit)                                              \
    X(heif_decode_image)                                                                      \
    X(heif_decoding_options_alloc)                                                            \
    X(heif_decoding_options_free)                                                             \
    X(heif_image_add_plane)                                                                   \
    X(heif_image_create)                                                                      \
    X(heif_image_get_bits_per_pixel_range)                                                    \
    X(heif_image_get_chroma_format)                                                           \
    X(heif_image_get_colorspace)                                                              \
    X(heif_image_get_height)                                                                  \
    X(heif_image_get_nclx_color_profile)                                                      \
    X(heif_image_get_plane)                                                                   \
    X(heif_image_get_plane_readonly)                                                          \
    X(heif_image_get_width)                                                                   \
    X(heif_image_handle_get_chroma_bits_per_pixel)                                            \
    X(heif_image_handle_get_color_profile_type)                                               \
    X(heif_image_handle_get_height)                                                           \
    X(heif_image_handle_get_ispe_height)                                                      \
    X(heif_image_handle_get_ispe_width)                                                       \
    X(heif_image_handle_get_list_of_thumbnail_IDs)                                            \
    X(heif_image_handle_get_luma_bits_per_pixel)                                              \
    X(heif_image_handle_get_nclx_color_profile)                                               \
    X(heif_image_handle_get_number_of_thumbnails)                                             \
    X(heif_image_handle_get_raw_color_profile)                                                \
    X(heif_image_handle_get_raw_color_profile_size)                                           \
    X(heif_image_handle_get_thumbnail)                                                        \
    X(heif_image_handle_get_width)                                                            \
    X(heif_image_handle_has_alpha_channel)                                                    \
    X(heif_image_handle_is_premultiplied_alpha)                                               \
    X(heif_image_handle_release)                                                              \
    X(heif_image_release)                                                                     \
    X(heif_image_set_nclx_color_profile)                                                      \
    X(heif_nclx_color_profile_alloc)                                                          \
    X(heif_nclx_color_profile_free)                                                           \
    X(heif_nclx_color_profile_set_color_primaries)                                            \
    X(heif_nclx_color_profile_set_matrix_coefficients)                                        \
    X(heif_nclx_color_profile_set_transfer_characteristics)                                   \
    X(heif_register_decoder_plugin)

/** A pointer to each function of IC_HEIF_FUNCTIONS, typed as <libheif/heif.h> declares it. */
typedef struct ic__heif_functions {
#define IC_HEIF_MEMBER(name) __typeof__(name) *name;
    IC_HEIF_FUNCTIONS(IC_HEIF_MEMBER)
#undef IC_HEIF_MEMBER
} ic__heif_functions;

/** The table; complete once ic__heif_load has returned IC_OK on the calling thread. */
extern ic__heif_functions ic__heif_fn;

/**
 * Loads libheif and resolves the table, once per process (pthread_once); later calls only
 * report the outcome. IC_OK, or IC_ERR_UNSUPPORTED_FORMAT with "<format>: libheif.so.1 could
 * not be loaded: <dlerror>" (or the function it lacks, or a version other than
 * IC_HEIF_MIRRORED_VERSION: see ic_heif_check_version) in `err`, which may be NULL.
 */
ic_status ic__heif_load(const char *format, ic_error *err);

/* Every libheif call below this point goes through the table (not in codec_libs.c, which
 * fills it). */
#ifndef IC_CODEC_LIBS_LOADER
#define heif_get_version_number (ic__heif_fn.heif_get_version_number)
#define heif_context_alloc (ic__heif_fn.heif_context_alloc)
#define heif_context_free (ic__heif_fn.heif_context_free)
#define heif_context_get_primary_image_handle (ic__heif_fn.heif_context_get_primary_image_handle)
#define heif_context_read_from_memory_without_copy (ic__heif_fn.heif_context_read_from_memory_without_copy)
#define heif_context_set_max_decoding_threads (ic__heif_fn.heif_context_set_max_decoding_threads)
#define heif_context_set_maximum_image_size_limit (ic__heif_fn.heif_context_set_maximum_image_size_limit)
#define heif_decode_image (ic__heif_fn.heif_decode_image)
#define heif_decoding_options_alloc (ic__heif_fn.heif_decoding_options_alloc)
#define heif_decoding_options_free (ic__heif_fn.heif_decoding_options_free)
#define heif_image_add_plane (ic__heif_fn.heif_image_add_plane)
#define heif_image_create (ic__heif_fn.heif_image_create)
#define heif_image_get_bits_per_pixel_range (ic__heif_fn.heif_image_get_bits_per_pixel_range)
#define heif_image_get_chroma_format (ic__heif_fn.heif_image_get_chroma_format)
#define heif_image_get_colorspace (ic__heif_fn.heif_image_get_colorspace)
#define heif_image_get_height (ic__heif_fn.heif_image_get_height)
#define heif_image_get_nclx_color_profile (ic__heif_fn.heif_image_get_nclx_color_profile)
#define heif_image_get_plane (ic__heif_fn.heif_image_get_plane)
#define heif_image_get_plane_readonly (ic__heif_fn.heif_image_get_plane_readonly)
#define heif_image_get_width (ic__heif_fn.heif_image_get_width)
#define heif_image_handle_get_chroma_bits_per_pixel (ic__heif_fn.heif_image_handle_get_chroma_bits_per_pixel)
#define heif_image_handle_get_color_profile_type (ic__heif_fn.heif_image_handle_get_color_profile_type)
#define heif_image_handle_get_height (ic__heif_fn.heif_image_handle_get_height)
#define heif_image_handle_get_ispe_height (ic__heif_fn.heif_image_handle_get_ispe_height)
#define heif_image_handle_get_ispe_width (ic__heif_fn.heif_image_handle_get_ispe_width)
#define heif_image_handle_get_list_of_thumbnail_IDs (ic__heif_fn.heif_image_handle_get_list_of_thumbnail_IDs)
#define heif_image_handle_get_luma_bits_per_pixel (ic__heif_fn.heif_image_handle_get_luma_bits_per_pixel)
#define heif_image_handle_get_nclx_color_profile (ic__heif_fn.heif_image_handle_get_nclx_color_profile)
#define heif_image_handle_get_number_of_thumbnails (ic__heif_fn.heif_image_handle_get_number_of_thumbnails)
#define heif_image_handle_get_raw_color_profile (ic__heif_fn.heif_image_handle_get_raw_color_profile)
#define heif_image_handle_get_raw_color_profile_size (ic__heif_fn.heif_image_handle_get_raw_color_profile_size)
#define heif_image_handle_get_thumbnail (ic__heif_fn.heif_image_handle_get_thumbnail)
#define heif_image_handle_get_width (ic__heif_fn.heif_image_handle_get_width)
#define heif_image_handle_has_alpha_channel (ic__heif_fn.heif_image_handle_has_alpha_channel)
#define heif_image_handle_is_premultiplied_alpha (ic__heif_fn.heif_image_handle_is_premultiplied_alpha)
#define heif_image_handle_release (ic__heif_fn.heif_image_handle_release)
#define heif_image_release (ic__heif_fn.heif_image_release)
#define heif_image_set_nclx_color_profile (ic__heif_fn.heif_image_set_nclx_color_profile)
#define heif_nclx_color_profile_alloc (ic__heif_fn.heif_nclx_color_profile_alloc)
#define heif_nclx_color_profile_free (ic__heif_fn.heif_nclx_color_profile_free)
#define heif_nclx_color_profile_set_color_primaries (ic__heif_fn.heif_nclx_color_profile_set_color_primaries)
#define heif_nclx_color_profile_set_matrix_coefficients (ic__heif_fn.heif_nclx_color_profile_set_matrix_coefficients)
#define heif_nclx_color_profile_set_transfer_characteristics (ic__heif_fn.heif_nclx_color_profile_set_transfer_characteristics)
#define heif_register_decoder_plugin (ic__heif_fn.heif_register_decoder_plugin)
#endif

#endif /* IC_HEIF_LIB_H */
