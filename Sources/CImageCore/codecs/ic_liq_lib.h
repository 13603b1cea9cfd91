/*
 * ic_liq_lib.h — libimagequant, loaded on first use (codecs/codec_libs.c). Not installed.
 *
 * The C core does not link libimagequant: libimagequant.so.0 (Debian 12's libimagequant0;
 * else libimagequant.so, the -dev package's link) is opened with dlopen by the first GIF
 * encode, so a process that never writes a GIF never maps it or the OpenMP runtime it pulls
 * in (libgomp).
 *
 * Include this header instead of <libimagequant.h>. It declares the table of the functions
 * the GIF encoder calls and then defines each name as its entry, so gif_encode.c reads like
 * plain libimagequant calls. ic__encode_gif calls ic__liq_load first; once that has returned
 * IC_OK on a thread, the table is complete and never written again.
 */
#ifndef IC_LIQ_LIB_H
#define IC_LIQ_LIB_H

#include <libimagequant.h>

#include "ic_error.h"

/** The libimagequant functions the core calls: X(name) for each. */
#define IC_LIQ_FUNCTIONS(X)                                                                   \
    X(liq_attr_create)                                                                        \
    X(liq_attr_destroy)                                                                       \
    X(liq_get_palette)                                                                        \
    X(liq_image_create_rgba)                                                                  \
    X(liq_image_destroy)                                                                      \
    X(liq_image_quantize)                                                                     \
    X(liq_result_destroy)                                                                     \
    X(liq_set_dithering_level)                                                                \
    X(liq_set_quality)                                                                        \
    X(liq_set_speed)                                                                          \
    X(liq_write_remapped_image)

/** A pointer to each function of IC_LIQ_FUNCTIONS, typed as <libimagequant.h> declares it. */
typedef struct ic__liq_functions {
#define IC_LIQ_MEMBER(name) __typeof__(name) *name;
    IC_LIQ_FUNCTIONS(IC_LIQ_MEMBER)
#undef IC_LIQ_MEMBER
} ic__liq_functions;

/** The table; complete once ic__liq_load has returned IC_OK on the calling thread. */
extern ic__liq_functions ic__liq_fn;

/**
 * Loads libimagequant and resolves the table, once per process (pthread_once); later calls
 * only report the outcome. IC_OK, or IC_ERR_UNSUPPORTED_FORMAT with "GIF: libimagequant.so.0
 * could not be loaded: <dlerror>" (or the function it lacks) in `err`, which may be NULL.
 */
ic_status ic__liq_load(const char *format, ic_error *err);

/* Every libimagequant call below this point goes through the table (not in codec_libs.c,
 * which fills it). */
#ifndef IC_CODEC_LIBS_LOADER
#define liq_attr_create (ic__liq_fn.liq_attr_create)
#define liq_attr_destroy (ic__liq_fn.liq_attr_destroy)
#define liq_get_palette (ic__liq_fn.liq_get_palette)
#define liq_image_create_rgba (ic__liq_fn.liq_image_create_rgba)
#define liq_image_destroy (ic__liq_fn.liq_image_destroy)
#define liq_image_quantize (ic__liq_fn.liq_image_quantize)
#define liq_result_destroy (ic__liq_fn.liq_result_destroy)
#define liq_set_dithering_level (ic__liq_fn.liq_set_dithering_level)
#define liq_set_quality (ic__liq_fn.liq_set_quality)
#define liq_set_speed (ic__liq_fn.liq_set_speed)
#define liq_write_remapped_image (ic__liq_fn.liq_write_remapped_image)
#endif

#endif /* IC_LIQ_LIB_H */
