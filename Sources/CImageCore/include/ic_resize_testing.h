/*
 * ic_resize_testing.h — TEST-ONLY hook of the resizer. A service calls ic_resize or
 * ic_resize_with_helper, which decides itself whether and how to split a resize into
 * bands. Tests use this to split any resize into a chosen number of bands, on the
 * calling thread, and compare the pixels with a whole-frame resize.
 *
 * Not part of the umbrella header: Swift reaches it with
 * `import CImageCore.Testing` (an explicit submodule, see module.modulemap),
 * C with #include "ic_resize_testing.h".
 */
#ifndef IC_RESIZE_TESTING_H
#define IC_RESIZE_TESTING_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"
#include "ic_resize.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ic_resize, the output rows of a still split into `bands` bands (at least 1) of equal
 * height (the last one shorter), run on the calling thread from the last band to the
 * first, alternating between two scalers sharing one set of filters — the pieces the
 * helper thread of ic_resize_with_helper runs, in an order it never uses. Animations
 * are resized whole.
 */
ic_status ic_resize_in_bands(const ic_image *src, uint32_t width, uint32_t height,
                             ic_resize_mode mode, int allow_upscale, uint32_t bands, ic_image **out,
                             ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_RESIZE_TESTING_H */
