/* error.c — status names and error formatting. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ic_common_internal.h"

const char *ic_status_name(ic_status status) {
    switch (status) {
    case IC_OK: return "ok";
    case IC_ERR_INVALID_ARGUMENT: return "invalid argument";
    case IC_ERR_UNKNOWN_FORMAT: return "unknown format";
    case IC_ERR_UNSUPPORTED_FORMAT: return "unsupported format";
    case IC_ERR_UNSUPPORTED_FEATURE: return "unsupported feature";
    case IC_ERR_LIMIT_EXCEEDED: return "limit exceeded";
    case IC_ERR_CORRUPT: return "corrupt data";
    case IC_ERR_TRUNCATED: return "truncated data";
    case IC_ERR_OUT_OF_MEMORY: return "out of memory";
    case IC_ERR_IO: return "I/O error";
    case IC_ERR_CANCELLED: return "cancelled";
    case IC_ERR_ENCODE: return "encode failed";
    case IC_ERR_NO_SPACE: return "no space left";
    case IC_ERR_NOT_FOUND: return "not found";
    case IC_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

ic_status ic__set_error(ic_error *err, ic_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

ic_status ic__sys_error(ic_error *err, int errnum, const char *fmt, ...) {
    ic_status code = (errnum == ENOSPC || errnum == EDQUOT) ? IC_ERR_NO_SPACE : IC_ERR_IO;
    if (!err) return code;
    char what[IC_ERROR_MESSAGE_CAPACITY];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char buf[128];
    return ic__set_error(err, code, "%s: %s", what, strerror_r(errnum, buf, sizeof buf));
}

void ic__clear_error(ic_error *err) {
    if (err) {
        err->code = IC_OK;
        err->message[0] = '\0';
    }
}

double ic__mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }
