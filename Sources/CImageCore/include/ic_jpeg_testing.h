/*
 * ic_jpeg_testing.h — TEST-ONLY hook of the JPEG decoder. A service never calls
 * this: ic_decode picks the JPEG path itself (ImageKit's DC-only decoder for a
 * progressive file at 1/8 scale when it takes the file, libjpeg otherwise). Tests
 * and the fuzz harness use it to decode one file through each path and compare.
 *
 * Not part of the umbrella header: Swift reaches it with
 * `import CImageCore.Testing` (an explicit submodule, see module.modulemap),
 * C with #include "ic_jpeg_testing.h".
 */
#ifndef IC_JPEG_TESTING_H
#define IC_JPEG_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "ic_decode.h"
#include "ic_error.h"
#include "ic_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which JPEG decoder ic_decode_jpeg_path uses. */
typedef enum ic_jpeg_path {
    /** What ic_decode does: the DC-only decoder when it takes the file, else libjpeg. */
    IC_JPEG_PATH_AUTO = 0,
    /** libjpeg only (a progressive 1/8 decode in buffered-image mode, stopping after the DC). */
    IC_JPEG_PATH_LIBJPEG = 1,
    /**
     * The DC-only decoder only: a decode it does not take (not a progressive 1/8 decode, a
     * file it gives way on) fails with IC_ERR_UNSUPPORTED_FEATURE and the reason instead.
     */
    IC_JPEG_PATH_DC = 2
} ic_jpeg_path;

/** ic_decode with the JPEG path chosen (other formats decode as with ic_decode). */
ic_status ic_decode_jpeg_path(const uint8_t *data, size_t size, const ic_decode_options *options,
                              ic_jpeg_path path, ic_image **out, ic_decode_stats *stats,
                              ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_JPEG_TESTING_H */
