/*
 * incremental.c — the incremental decode: feeds are gathered (within
 * max_input_bytes) and decoded by ic_decode at finish. Formats with a decoder
 * that consumes bytes as they arrive plug in here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ic_decode_internal.h"
#include "ic_incremental.h"

/* Bytes ic_sniff needs to tell the binary formats apart (ISO BMFF brands included). */
#define SNIFF_BYTES 64

struct ic_incremental {
    ic_decode_options opts;
    ic_format format;
    uint8_t *bytes;
    size_t size;
    size_t capacity;
    ic_status failure;
    ic_error failure_error;
    int finished;
};

static ic_status fail(ic_incremental *inc, ic_error *err, ic_status code, const char *message) {
    inc->failure = code;
    inc->failure_error.code = code;
    snprintf(inc->failure_error.message, sizeof inc->failure_error.message, "%s", message);
    if (err) *err = inc->failure_error;
    return code;
}

static ic_status repeat_failure(const ic_incremental *inc, ic_error *err) {
    if (err) *err = inc->failure_error;
    return inc->failure;
}

ic_status ic_incremental_new(const ic_decode_options *options, ic_incremental **out,
                             ic_error *err) {
    ic_clear_error(err);
    if (!out) return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL output pointer");
    *out = NULL;
    ic_incremental *inc = calloc(1, sizeof *inc);
    if (!inc) return ic_set_error(err, IC_ERR_OUT_OF_MEMORY, "incremental decode: cannot allocate its state");
    if (options) {
        inc->opts = *options;
    } else {
        ic_decode_options_init(&inc->opts);
    }
    *out = inc;
    return IC_OK;
}

static ic_status keep(ic_incremental *inc, const uint8_t *data, size_t size, ic_error *err) {
    uint64_t limit = inc->opts.limits.max_input_bytes;
    if (limit && (uint64_t)size > limit - inc->size) {
        char message[IC_ERROR_MESSAGE_CAPACITY];
        snprintf(message, sizeof message, "%s: input is over the limit of %llu bytes",
                 inc->format == IC_FORMAT_UNKNOWN ? "decode" : ic_format_name(inc->format),
                 (unsigned long long)limit);
        return fail(inc, err, IC_ERR_LIMIT_EXCEEDED, message);
    }
    if (size > inc->capacity - inc->size) {
        size_t capacity = inc->capacity ? inc->capacity : 64 * 1024;
        while (capacity - inc->size < size) {
            if (capacity > SIZE_MAX / 2) {
                return fail(inc, err, IC_ERR_OUT_OF_MEMORY, "incremental decode: input too large to hold");
            }
            capacity *= 2;
        }
        uint8_t *grown = realloc(inc->bytes, capacity);
        if (!grown) {
            return fail(inc, err, IC_ERR_OUT_OF_MEMORY, "incremental decode: cannot hold the input");
        }
        inc->bytes = grown;
        inc->capacity = capacity;
    }
    memcpy(inc->bytes + inc->size, data, size);
    inc->size += size;
    return IC_OK;
}

ic_status ic_incremental_feed(ic_incremental *inc, const uint8_t *data, size_t size,
                              ic_error *err) {
    ic_clear_error(err);
    if (!inc || (!data && size)) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL decode or data");
    }
    if (inc->failure != IC_OK) return repeat_failure(inc, err);
    if (inc->finished) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: fed after finish");
    }
    if (inc->opts.cancel_flag && ic_cancel_flag_get(inc->opts.cancel_flag)) {
        return fail(inc, err, IC_ERR_CANCELLED, "decode cancelled");
    }
    ic_status st = keep(inc, data, size, err);
    if (st != IC_OK) return st;
    if (inc->format == IC_FORMAT_UNKNOWN && inc->size >= SNIFF_BYTES) {
        inc->format = ic_sniff(inc->bytes, inc->size);
    }
    return IC_OK;
}

ic_format ic_incremental_format(const ic_incremental *inc) {
    return inc ? inc->format : IC_FORMAT_UNKNOWN;
}

int ic_incremental_is_streaming(const ic_incremental *inc) {
    (void)inc;
    return 0;
}

uint64_t ic_incremental_buffered_bytes(const ic_incremental *inc) {
    return inc ? inc->size : 0;
}

ic_status ic_incremental_partial(ic_incremental *inc, ic_image **out, ic_error *err) {
    ic_clear_error(err);
    if (!inc || !out) return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL argument");
    *out = NULL;
    if (inc->failure != IC_OK) return repeat_failure(inc, err);
    return IC_OK;
}

ic_status ic_incremental_finish(ic_incremental *inc, ic_image **out, ic_decode_stats *stats,
                                ic_error *err) {
    ic_clear_error(err);
    if (stats) memset(stats, 0, sizeof *stats);
    if (!inc || !out) return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL argument");
    *out = NULL;
    if (inc->failure != IC_OK) return repeat_failure(inc, err);
    if (inc->finished) {
        return ic_set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: finished twice");
    }
    inc->finished = 1;
    ic_status st = ic_decode(inc->bytes, inc->size, &inc->opts, out, stats, err);
    free(inc->bytes);
    inc->bytes = NULL;
    inc->size = inc->capacity = 0;
    return st;
}

void ic_incremental_free(ic_incremental *inc) {
    if (!inc) return;
    free(inc->bytes);
    free(inc);
}
