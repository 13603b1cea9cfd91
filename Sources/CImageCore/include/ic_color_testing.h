/*
 * ic_color_testing.h — TEST-ONLY hook of the colour conversion. A service never
 * calls this: a decode picks the conversion itself (ImageKit's matrix/shaper path
 * with the fastest kernel this CPU has, else Little CMS). Tests use it to run one
 * profile's conversion through each kernel and through lcms, and compare them.
 *
 * Not part of the umbrella header: Swift reaches it with
 * `import CImageCore.Testing`, C with #include "ic_color_testing.h".
 */
#ifndef IC_COLOR_TESTING_H
#define IC_COLOR_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which code converts (ic_color_convert_with). */
typedef enum ic_color_kernel {
    /** Little CMS's transform, built as a decode builds it (perceptual, black-point compensation). */
    IC_COLOR_KERNEL_LCMS = 0,
    /** The matrix/shaper path's portable loop (float tables, no instruction-set extension). */
    IC_COLOR_KERNEL_PORTABLE = 1,
    /** The same loop compiled for AVX2 + FMA. */
    IC_COLOR_KERNEL_AVX2 = 2,
    /** The AVX-512 (F, BW, VBMI) kernel: curves in registers, segmented sRGB encoding. */
    IC_COLOR_KERNEL_AVX512 = 3,
    /** The planar AVX-512 + VNNI kernel, 64 pixels a step (the AVX-512 kernel for the rest). */
    IC_COLOR_KERNEL_AVX512_PLANAR = 4
} ic_color_kernel;

/**
 * Converts `count` RGBA pixels (alpha kept, not premultiplied) in place from the RGB
 * ICC profile `icc` to sRGB through `kernel`. Fails with IC_ERR_UNSUPPORTED_FEATURE
 * when this CPU or build lacks the kernel, or when a matrix/shaper kernel is asked
 * for a profile a decode would not give that path (lcms converts it); with
 * IC_ERR_INVALID_ARGUMENT when lcms cannot use the profile for RGB pixels or it
 * describes sRGB (a decode converts nothing then).
 */
ic_status ic_color_convert_with(const uint8_t *icc, size_t size, ic_color_kernel kernel,
                                uint8_t *rgba, size_t count, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_COLOR_TESTING_H */
