/*
 * ic_jxl_lib.h — libjxl's decoder, loaded on first use (codecs/codec_libs.c). Not installed.
 *
 * The C core does not link libjxl: libjxl.so.0.7 (Debian 12's libjxl0.7; else libjxl.so, the
 * -dev package's link) is opened with dlopen by the first JPEG XL decode or probe, so a
 * process that never sees one never maps libjxl or what it pulls in (highway, brotli).
 *
 * Include this header instead of <jxl/decode.h>. It declares the table of the libjxl functions
 * the core calls and then defines each name as its entry, so jxl.c reads like plain libjxl
 * calls. Every entry point that reaches them calls ic__jxl_load first; once that has returned
 * IC_OK on a thread, the table is complete and never written again.
 */
#ifndef IC_JXL_LIB_H
#define IC_JXL_LIB_H

#include <jxl/decode.h>

#include "ic_error.h"

/** The libjxl functions the core calls: X(name) for each. */
#define IC_JXL_FUNCTIONS(X)                                                                   \
    X(JxlDecoderCloseInput)                                                                   \
    X(JxlDecoderCreate)                                                                       \
    X(JxlDecoderDestroy)                                                                      \
    X(JxlDecoderGetBasicInfo)                                                                 \
    X(JxlDecoderGetColorAsEncodedProfile)                                                     \
    X(JxlDecoderGetColorAsICCProfile)                                                         \
    X(JxlDecoderGetFrameHeader)                                                               \
    X(JxlDecoderGetICCProfileSize)                                                            \
    X(JxlDecoderImageOutBufferSize)                                                           \
    X(JxlDecoderProcessInput)                                                                 \
    X(JxlDecoderReleaseInput)                                                                 \
    X(JxlDecoderSetImageOutBuffer)                                                            \
    X(JxlDecoderSetInput)                                                                     \
    X(JxlDecoderSetKeepOrientation)                                                           \
    X(JxlDecoderSetPreferredColorProfile)                                                     \
    X(JxlDecoderSubscribeEvents)

/** A pointer to each function of IC_JXL_FUNCTIONS, typed as <jxl/decode.h> declares it. */
typedef struct ic__jxl_functions {
#define IC_JXL_MEMBER(name) __typeof__(name) *name;
    IC_JXL_FUNCTIONS(IC_JXL_MEMBER)
#undef IC_JXL_MEMBER
} ic__jxl_functions;

/** The table; complete once ic__jxl_load has returned IC_OK on the calling thread. */
extern ic__jxl_functions ic__jxl_fn;

/**
 * Loads libjxl and resolves the table, once per process (pthread_once); later calls only
 * report the outcome. IC_OK, or IC_ERR_UNSUPPORTED_FORMAT with "JPEG XL: libjxl.so.0.7 could
 * not be loaded: <dlerror>" (or the function it lacks) in `err`, which may be NULL.
 */
ic_status ic__jxl_load(const char *format, ic_error *err);

/* Every libjxl call below this point goes through the table (not in codec_libs.c, which
 * fills it). */
#ifndef IC_CODEC_LIBS_LOADER
#define JxlDecoderCloseInput (ic__jxl_fn.JxlDecoderCloseInput)
#define JxlDecoderCreate (ic__jxl_fn.JxlDecoderCreate)
#define JxlDecoderDestroy (ic__jxl_fn.JxlDecoderDestroy)
#define JxlDecoderGetBasicInfo (ic__jxl_fn.JxlDecoderGetBasicInfo)
#define JxlDecoderGetColorAsEncodedProfile (ic__jxl_fn.JxlDecoderGetColorAsEncodedProfile)
#define JxlDecoderGetColorAsICCProfile (ic__jxl_fn.JxlDecoderGetColorAsICCProfile)
#define JxlDecoderGetFrameHeader (ic__jxl_fn.JxlDecoderGetFrameHeader)
#define JxlDecoderGetICCProfileSize (ic__jxl_fn.JxlDecoderGetICCProfileSize)
#define JxlDecoderImageOutBufferSize (ic__jxl_fn.JxlDecoderImageOutBufferSize)
#define JxlDecoderProcessInput (ic__jxl_fn.JxlDecoderProcessInput)
#define JxlDecoderReleaseInput (ic__jxl_fn.JxlDecoderReleaseInput)
#define JxlDecoderSetImageOutBuffer (ic__jxl_fn.JxlDecoderSetImageOutBuffer)
#define JxlDecoderSetInput (ic__jxl_fn.JxlDecoderSetInput)
#define JxlDecoderSetKeepOrientation (ic__jxl_fn.JxlDecoderSetKeepOrientation)
#define JxlDecoderSetPreferredColorProfile (ic__jxl_fn.JxlDecoderSetPreferredColorProfile)
#define JxlDecoderSubscribeEvents (ic__jxl_fn.JxlDecoderSubscribeEvents)
#endif

#endif /* IC_JXL_LIB_H */
