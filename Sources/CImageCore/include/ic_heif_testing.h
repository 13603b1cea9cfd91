/*
 * ic_heif_testing.h — TEST-ONLY hook of the HEIF decoder's library check. A service
 * never calls this: the first HEIF decode or probe loads libheif and runs the same
 * check on the version it finds. Tests use it to see the message a libheif of
 * another version gets.
 *
 * Not part of the umbrella header: Swift reaches it with
 * `import CImageCore.Testing` (an explicit submodule, see module.modulemap),
 * C with #include "ic_heif_testing.h".
 */
#ifndef IC_HEIF_TESTING_H
#define IC_HEIF_TESTING_H

#include <stdint.h>

#include "ic_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Whether a libheif whose heif_get_version_number() is `version_number` (0xMMmmpp00:
 * major, minor, patch) is the release ImageKit's HEIF decoder mirrors (the same major
 * and minor; decode/heif/README.md). IC_OK, or IC_ERR_UNSUPPORTED_FORMAT with a message
 * naming both versions in `err` (which may be NULL).
 */
ic_status ic_heif_check_version(uint32_t version_number, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_HEIF_TESTING_H */
