/*
 * ic_png_testing.h — TEST-ONLY hook of the PNG decoder. A service never calls
 * this: ic_decode picks the PNG path itself (the libdeflate fast path, or
 * libpng when the fast path declines a file). Tests use it to decode one file
 * through each path and compare the pixels.
 *
 * Not part of the umbrella header: Swift reaches it with
 * `import CImageCore.Testing` (an explicit submodule, see module.modulemap),
 * C with #include "ic_png_testing.h".
 */
#ifndef IC_PNG_TESTING_H
#define IC_PNG_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "ic_decode.h"
#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which PNG decoder ic_decode_png_path uses. */
typedef enum ic_png_path {
    /** What ic_decode does: the fast path, or libpng when the fast path declines the file. */
    IC_PNG_PATH_AUTO = 0,
    /** libpng only (row streaming, libpng's transforms). */
    IC_PNG_PATH_LIBPNG = 1,
    /** The fast path only: a file it declines fails with the reason instead. */
    IC_PNG_PATH_FAST = 2
} ic_png_path;

/** ic_decode with the PNG path chosen (other formats decode as with ic_decode). */
ic_status ic_decode_png_path(const uint8_t *data, size_t size, const ic_decode_options *options,
                             ic_png_path path, ic_image **out, ic_decode_stats *stats,
                             ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_PNG_TESTING_H */
