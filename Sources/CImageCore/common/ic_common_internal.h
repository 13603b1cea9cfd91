/*
 * ic_common_internal.h — what every part of the C core shares: error
 * formatting, clocks and a character class (common/). Not installed.
 */
#ifndef IC_COMMON_INTERNAL_H
#define IC_COMMON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ic_error.h"

#if defined(__GNUC__)
#define IC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define IC_PRINTF(f, a)
#endif

/* ---- Errors (error.c). ---- */

/** Fills err (if non-NULL) with code and a formatted message; returns code. */
ic_status ic__set_error(ic_error *err, ic_status code, const char *fmt, ...) IC_PRINTF(3, 4);

/**
 * Fills err for a failed system call: IC_ERR_NO_SPACE for ENOSPC and EDQUOT,
 * IC_ERR_IO otherwise, with the formatted message, ": " and strerror(errnum).
 * Returns the code.
 */
ic_status ic__sys_error(ic_error *err, int errnum, const char *fmt, ...) IC_PRINTF(3, 4);

/** Clears err to IC_OK with an empty message. */
void ic__clear_error(ic_error *err);

/** Bytes as MiB, for messages. */
double ic__mib(uint64_t bytes);

/* ---- Time and characters. ---- */

/** Milliseconds of CLOCK_MONOTONIC, for ages and intervals. */
static inline uint64_t ic__monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/** Wall-clock time in ms since the Unix epoch, for times stored in or compared with files. */
static inline int64_t ic__realtime_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/** True for the ASCII white space of HTTP headers and XML: space, tab, CR and LF. */
static inline bool ic__is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* ---- A helper thread over a growing range (thread.c). ---- */

/**
 * The least work, in pixels, worth starting a helper thread for, given the figure a build for
 * services uses. A fuzz build (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, scripts/fuzz.sh) uses
 * 1024: its harnesses' images are at most 64 Ki pixels, and the helpers' code must be reached.
 */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define IC_HELPER_MIN_PIXELS(pixels) ((uint64_t)1024)
#else
#define IC_HELPER_MIN_PIXELS(pixels) ((uint64_t)(pixels))
#endif

/** Work on indices [begin, end) of a range (rows of an image, say). */
typedef void (*ic_range_fn)(void *ctx, uint32_t begin, uint32_t end);

/**
 * One helper thread that runs `fn` on chunks of a range while the caller
 * produces it: the caller makes indices ready in order (ic__range_helper_extend),
 * the helper takes `chunk` of them at a time, and at the end the caller takes
 * chunks too until none is left. Each index is handed to `fn` exactly once, so
 * when chunks are independent the result does not depend on who ran which; work
 * whose chunks must run in order is left to the helper alone (ic__range_helper_drain).
 * The helper sleeps on a condition variable while nothing is ready (no spinning).
 */
typedef struct ic__range_helper ic__range_helper;

/**
 * Starts the helper on a range beginning at `start` (nothing ready yet); NULL when
 * no thread could be made (the caller then does the work itself).
 */
ic__range_helper *ic__range_helper_start(ic_range_fn fn, void *ctx, uint32_t start, uint32_t chunk);

/** The end of what is ready so far (start until the first extend). Caller's thread only. */
uint32_t ic__range_helper_ready(const ic__range_helper *h);

/** Makes indices up to `end` ready (an end below the current one changes nothing). */
void ic__range_helper_extend(ic__range_helper *h, uint32_t end);

/**
 * Indices below the returned one are done: handed out and their work returned
 * (the helper works through its claims in order). Called by the caller's thread
 * before ic__range_helper_finish; what the helper wrote for them is visible to
 * the caller afterwards (both sides take the lock).
 */
uint32_t ic__range_helper_done(ic__range_helper *h);

/**
 * With `complete`, runs what is ready and unclaimed on the calling thread as well,
 * waits for the helper's last chunk, and ends it; without, claims nothing more and
 * ends the helper after its current chunk (a failed decode). Frees `h`.
 */
void ic__range_helper_finish(ic__range_helper *h, bool complete);

/**
 * Lets the helper alone run what is ready, in order, then ends it: for work whose chunks
 * must run one after another on one thread (the calling thread takes none). Frees `h`.
 */
void ic__range_helper_drain(ic__range_helper *h);

#endif /* IC_COMMON_INTERNAL_H */
