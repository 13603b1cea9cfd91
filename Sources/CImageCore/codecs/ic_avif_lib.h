/*
 * ic_avif_lib.h — libavif, loaded on first use (codecs/codec_libs.c). Not installed.
 *
 * The C core does not link libavif: libavif.so.15 (Debian 12's libavif15; else libavif.so,
 * the -dev package's link) is opened with dlopen by the first AVIF decode, probe or encode,
 * or HEIF thumbnail that takes the YUV path, so a process that never sees one never maps
 * libavif or the AV1 codecs it pulls in (libaom, dav1d, libgav1, rav1e, SVT-AV1).
 *
 * Include this header instead of <avif/avif.h>. It declares the table of the libavif
 * functions the core calls and then defines each name as its entry, so avif.c, yuv.c, heif.c
 * and avif_encode.c read like plain libavif calls. Every entry point that reaches them calls
 * ic__avif_load first; once that has returned IC_OK on a thread, the table is complete and
 * never written again.
 */
#ifndef IC_AVIF_LIB_H
#define IC_AVIF_LIB_H

#include <avif/avif.h>

#include "ic_error.h"

/** The libavif functions the core calls: X(name) for each. */
#define IC_AVIF_FUNCTIONS(X)                                                                  \
    X(avifDecoderCreate)                                                                      \
    X(avifDecoderDestroy)                                                                     \
    X(avifDecoderNextImage)                                                                   \
    X(avifDecoderNthImageTiming)                                                              \
    X(avifDecoderParse)                                                                       \
    X(avifDecoderSetIOMemory)                                                                 \
    X(avifEncoderCreate)                                                                      \
    X(avifEncoderDestroy)                                                                     \
    X(avifEncoderWrite)                                                                       \
    X(avifGetPixelFormatInfo)                                                                 \
    X(avifImageAllocatePlanes)                                                                \
    X(avifImageCreate)                                                                        \
    X(avifImageCreateEmpty)                                                                   \
    X(avifImageDestroy)                                                                       \
    X(avifImageRGBToYUV)                                                                      \
    X(avifImageSetProfileICC)                                                                 \
    X(avifImageSetViewRect)                                                                   \
    X(avifImageYUVToRGB)                                                                      \
    X(avifPixelFormatToString)                                                                \
    X(avifRGBImageSetDefaults)                                                                \
    X(avifRWDataFree)                                                                         \
    X(avifResultToString)

/** A pointer to each function of IC_AVIF_FUNCTIONS, typed as <avif/avif.h> declares it. */
typedef struct ic__avif_functions {
#define IC_AVIF_MEMBER(name) __typeof__(name) *name;
    IC_AVIF_FUNCTIONS(IC_AVIF_MEMBER)
#undef IC_AVIF_MEMBER
} ic__avif_functions;

/** The table; complete once ic__avif_load has returned IC_OK on the calling thread. */
extern ic__avif_functions ic__avif_fn;

/**
 * Loads libavif and resolves the table, once per process (pthread_once); later calls only
 * report the outcome. IC_OK, or IC_ERR_UNSUPPORTED_FORMAT with "<format>: libavif.so.15 could
 * not be loaded: <dlerror>" (or the function it lacks) in `err`, which may be NULL.
 */
ic_status ic__avif_load(const char *format, ic_error *err);

/* Every libavif call below this point goes through the table (not in codec_libs.c, which
 * fills it). */
#ifndef IC_CODEC_LIBS_LOADER
#define avifDecoderCreate (ic__avif_fn.avifDecoderCreate)
#define avifDecoderDestroy (ic__avif_fn.avifDecoderDestroy)
#define avifDecoderNextImage (ic__avif_fn.avifDecoderNextImage)
#define avifDecoderNthImageTiming (ic__avif_fn.avifDecoderNthImageTiming)
#define avifDecoderParse (ic__avif_fn.avifDecoderParse)
#define avifDecoderSetIOMemory (ic__avif_fn.avifDecoderSetIOMemory)
#define avifEncoderCreate (ic__avif_fn.avifEncoderCreate)
#define avifEncoderDestroy (ic__avif_fn.avifEncoderDestroy)
#define avifEncoderWrite (ic__avif_fn.avifEncoderWrite)
#define avifGetPixelFormatInfo (ic__avif_fn.avifGetPixelFormatInfo)
#define avifImageAllocatePlanes (ic__avif_fn.avifImageAllocatePlanes)
#define avifImageCreate (ic__avif_fn.avifImageCreate)
#define avifImageCreateEmpty (ic__avif_fn.avifImageCreateEmpty)
#define avifImageDestroy (ic__avif_fn.avifImageDestroy)
#define avifImageRGBToYUV (ic__avif_fn.avifImageRGBToYUV)
#define avifImageSetProfileICC (ic__avif_fn.avifImageSetProfileICC)
#define avifImageSetViewRect (ic__avif_fn.avifImageSetViewRect)
#define avifImageYUVToRGB (ic__avif_fn.avifImageYUVToRGB)
#define avifPixelFormatToString (ic__avif_fn.avifPixelFormatToString)
#define avifRGBImageSetDefaults (ic__avif_fn.avifRGBImageSetDefaults)
#define avifRWDataFree (ic__avif_fn.avifRWDataFree)
#define avifResultToString (ic__avif_fn.avifResultToString)
#endif

#endif /* IC_AVIF_LIB_H */
