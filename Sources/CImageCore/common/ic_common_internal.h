/*
 * ic_common_internal.h — what every part of the C core shares: error
 * formatting (common/). Not installed.
 */
#ifndef IC_COMMON_INTERNAL_H
#define IC_COMMON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"

#if defined(__GNUC__)
#define IC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define IC_PRINTF(f, a)
#endif

/* ---- Errors (error.c). ---- */

/** Fills err (if non-NULL) with code and a formatted message; returns code. */
ic_status ic_set_error(ic_error *err, ic_status code, const char *fmt, ...) IC_PRINTF(3, 4);

/** Clears err to IC_OK with an empty message. */
void ic_clear_error(ic_error *err);

/** Bytes as MiB, for messages. */
double ic_mib(uint64_t bytes);

#endif /* IC_COMMON_INTERNAL_H */
