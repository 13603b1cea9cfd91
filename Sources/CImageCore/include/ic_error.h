/*
 * ic_error.h — status codes and error values shared by every ImageKit C call.
 *
 * Every call that can fail returns an ic_status and, when given a non-NULL
 * ic_error, fills it with the same code and a human sentence such as
 * "PNG: IDAT CRC mismatch". Messages are always NUL-terminated.
 */
#ifndef IC_ERROR_H
#define IC_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/** Result of an ImageKit C call. The numeric values are stable. */
typedef enum ic_status {
    IC_OK = 0,
    /** A caller passed an argument the call cannot use (NULL, zero size, bad option). */
    IC_ERR_INVALID_ARGUMENT = 1,
    /** The bytes are not an image format ImageKit recognises. */
    IC_ERR_UNKNOWN_FORMAT = 2,
    /** The format is recognised (TIFF, HEIC, …) but ImageKit does not decode it. */
    IC_ERR_UNSUPPORTED_FORMAT = 3,
    /** The format is supported but this file uses a feature that is not (12-bit JPEG, …). */
    IC_ERR_UNSUPPORTED_FEATURE = 4,
    /** The image exceeds a configured limit (pixels, frames, input or output bytes). */
    IC_ERR_LIMIT_EXCEEDED = 5,
    /** The data is malformed (bad CRC, invalid code stream, impossible header). */
    IC_ERR_CORRUPT = 6,
    /** The data ends before the image is complete. */
    IC_ERR_TRUNCATED = 7,
    /** An allocation failed. */
    IC_ERR_OUT_OF_MEMORY = 8,
    /** A file-system or socket operation failed (see the message for errno text). */
    IC_ERR_IO = 9,
    /** The operation was cancelled by its caller. */
    IC_ERR_CANCELLED = 10,
    /** An encoder rejected the image or its options. */
    IC_ERR_ENCODE = 11,
    /** The disk tier has no room (ENOSPC / EDQUOT). */
    IC_ERR_NO_SPACE = 12,
    /** A cached entry does not exist (a miss, not a failure). */
    IC_ERR_NOT_FOUND = 13,
    /** An internal invariant failed; please report it. */
    IC_ERR_INTERNAL = 14
} ic_status;

/** Capacity of ic_error.message, including the terminating NUL. */
#define IC_ERROR_MESSAGE_CAPACITY 256

/** A status code with the sentence that explains it. */
typedef struct ic_error {
    ic_status code;
    char message[IC_ERROR_MESSAGE_CAPACITY];
} ic_error;

/** A short constant name for a status, e.g. "corrupt data". Never NULL. */
const char *ic_status_name(ic_status status);

#ifdef __cplusplus
}
#endif

#endif /* IC_ERROR_H */
