/*
 * incremental.c — the incremental decode. The first bytes are kept until the
 * format is known (and, for PNG, until the chunks before the first IDAT are
 * in; for WebP, until the headers before the image data are; for GIF, until
 * the screen descriptor and the global colour table are); then a format with
 * an engine (ic__inc_engine: JPEG, PNG, WebP stills, GIF without all_frames)
 * consumes every piece as it arrives, writing rows into the same sink
 * ic_decode uses, and ends through the same ic__dec_complete. An engine may
 * stream with the body kept (IC_INC_STREAMING_KEPT): if it then fails on the
 * data, ic_decode decodes the kept body at finish and its answer stands. Other
 * formats and options keep the whole body and hand it to ic_decode at finish.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ic_apng.h"
#include "ic_decoder.h"
#include "ic_exif.h"
#include "ic_inc_engine.h"
#include "ic_sink.h"
#include "ic_incremental.h"
#include "ic_transform.h"

/* Bytes ic_sniff needs to tell the binary formats apart (ISO BMFF brands included). */
#define SNIFF_BYTES 64

struct ic_incremental {
    ic_decode_options opts;
    ic_format format;
    uint64_t total;          /* bytes fed so far */
    /* Bytes kept: the start of the body before an engine takes over, or the
     * whole body when the format is decoded at finish or the engine streams
     * with the body kept. */
    uint8_t *bytes;
    size_t size;
    size_t capacity;
    bool gathering;          /* decided: ic_decode at finish */
    /* The streaming decode, once started. */
    ic__decoder d;
    const ic__inc_engine *engine;
    void *state;
    bool streamed;           /* the engine is past its header */
    bool kept;               /* ... and the bytes are kept for ic_decode should it fail */
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

static const char *format_name(const ic_incremental *inc) {
    return inc->format == IC_FORMAT_UNKNOWN ? "decode" : ic_format_name(inc->format);
}

/* Releases the engine and whatever output its decode holds. */
static void drop_engine(ic_incremental *inc) {
    if (!inc->engine) return;
    inc->engine->free(inc->state);
    inc->engine = NULL;
    inc->state = NULL;
    ic__dec_abandon(&inc->d);
}

/* A failure of the data (not of a limit, memory or cancellation): the kind a
 * whole-body decode may answer differently. */
static bool is_data_failure(ic_status st) {
    return st == IC_ERR_CORRUPT || st == IC_ERR_TRUNCATED || st == IC_ERR_UNSUPPORTED_FEATURE;
}

/* An engine that kept the body failed on the data: ic_decode gets the whole
 * body at finish, and its answer is the decode's. */
static ic_status fall_back(ic_incremental *inc) {
    drop_engine(inc);
    memset(&inc->failure_error, 0, sizeof inc->failure_error);
    inc->gathering = true;
    return IC_OK;
}

/* Records the engine's failure (its sentence is in failure_error) as final,
 * unless the body is kept for ic_decode and the failure is the data's. */
static ic_status engine_failed(ic_incremental *inc, ic_error *err, ic_status st) {
    bool kept = inc->kept || (inc->engine && inc->engine->phase(inc->state) == IC_INC_STREAMING_KEPT);
    if (kept && is_data_failure(st)) return fall_back(inc);
    drop_engine(inc);
    inc->failure = st;
    if (inc->failure_error.code == IC_OK) {
        inc->failure_error.code = st;
        snprintf(inc->failure_error.message, sizeof inc->failure_error.message, "%s: %s",
                 format_name(inc), ic_status_name(st));
    }
    if (err) *err = inc->failure_error;
    return st;
}

ic_status ic_incremental_new(const ic_decode_options *options, ic_incremental **out,
                             ic_error *err) {
    ic__clear_error(err);
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL output pointer");
    *out = NULL;
    ic_incremental *inc = calloc(1, sizeof *inc);
    if (!inc) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "incremental decode: cannot allocate its state");
    if (options) {
        inc->opts = *options;
    } else {
        ic_decode_options_init(&inc->opts);
    }
    *out = inc;
    return IC_OK;
}

static ic_status keep(ic_incremental *inc, const uint8_t *data, size_t size, ic_error *err) {
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

/* After the engine consumed a piece: the kept bytes are released once it reads
 * past its header, and the engine gives way when it needs the whole body. */
static ic_status settle(ic_incremental *inc) {
    switch (inc->engine->phase(inc->state)) {
    case IC_INC_HEADER:
        break;
    case IC_INC_STREAMING:
        inc->streamed = true;
        free(inc->bytes);
        inc->bytes = NULL;
        inc->size = inc->capacity = 0;
        break;
    case IC_INC_STREAMING_KEPT:
        inc->streamed = true;
        inc->kept = true;
        break;
    case IC_INC_WHOLE_BODY:
        drop_engine(inc);
        inc->gathering = true;
        break;
    }
    return IC_OK;
}

/*
 * Decides, from the bytes kept so far, whether an engine takes over (and
 * starts it on those bytes, which are then released), the body is kept for
 * ic_decode, or more bytes are needed to tell.
 */
static ic_status maybe_start(ic_incremental *inc, ic_error *err) {
    if (inc->format == IC_FORMAT_UNKNOWN) {
        if (inc->size < SNIFF_BYTES) return IC_OK;
        inc->format = ic_sniff(inc->bytes, inc->size);
    }
    ic__decoder *d = &inc->d;
    ic__dec_init(d, &inc->opts, &inc->failure_error);
    d->format = inc->format;
    d->size = inc->total;
    ic_status st;
    if (inc->format == IC_FORMAT_JPEG) {
        st = ic__jpeg_inc_new(d, &inc->engine, &inc->state);
    } else if (inc->format == IC_FORMAT_PNG) {
        size_t header = ic__png_header_size(inc->bytes, inc->size);
        if (header == 0) return IC_OK;
        if (header == SIZE_MAX || (inc->opts.all_frames && ic__apng_frame_count(inc->bytes, inc->size) > 0)) {
            inc->gathering = true;
            return IC_OK;
        }
        d->orientation = ic__png_exif_orientation(inc->bytes, inc->size);
        st = ic__png_inc_new(d, &inc->engine, &inc->state);
    } else if (inc->format == IC_FORMAT_WEBP) {
        ic__inc_phase phase = ic__webp_inc_phase(inc->bytes, inc->size);
        if (phase == IC_INC_HEADER) return IC_OK;
        if (phase == IC_INC_WHOLE_BODY) {
            inc->gathering = true;
            return IC_OK;
        }
        st = ic__webp_inc_new(d, (const uint8_t *const *)&inc->bytes, &inc->size, &inc->engine,
                             &inc->state);
    } else if (inc->format == IC_FORMAT_GIF && !inc->opts.all_frames) {
        st = ic__gif_inc_new(d, (const uint8_t *const *)&inc->bytes, &inc->size, &inc->engine,
                            &inc->state);
    } else {
        inc->gathering = true;
        return IC_OK;
    }
    if (st != IC_OK) return engine_failed(inc, err, st);
    st = inc->engine->feed(inc->state, inc->bytes, inc->size);
    return st == IC_OK ? settle(inc) : engine_failed(inc, err, st);
}

ic_status ic_incremental_feed(ic_incremental *inc, const uint8_t *data, size_t size,
                              ic_error *err) {
    ic__clear_error(err);
    if (!inc || (!data && size)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL decode or data");
    }
    if (inc->failure != IC_OK) return repeat_failure(inc, err);
    if (inc->finished) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: fed after finish");
    }
    char message[IC_ERROR_MESSAGE_CAPACITY];
    if (inc->opts.cancel_flag && ic_cancel_flag_get(inc->opts.cancel_flag)) {
        drop_engine(inc);
        snprintf(message, sizeof message, "%s: decode cancelled", format_name(inc));
        return fail(inc, err, IC_ERR_CANCELLED, message);
    }
    uint64_t limit = inc->opts.limits.max_input_bytes;
    if (limit && (uint64_t)size > limit - inc->total) {
        drop_engine(inc);
        snprintf(message, sizeof message, "%s: input is over the limit of %llu bytes",
                 format_name(inc), (unsigned long long)limit);
        return fail(inc, err, IC_ERR_LIMIT_EXCEEDED, message);
    }
    inc->total += size;
    ic_status st;
    if (inc->engine) {
        /* While the engine reads its header the bytes are kept too, in case it gives
         * way; an engine that streams with the bytes kept keeps them to the end. */
        if (!inc->streamed || inc->kept) {
            st = keep(inc, data, size, err);
            if (st != IC_OK) return st;
        }
        inc->d.size = inc->total;
        st = inc->engine->feed(inc->state, data, size);
        return st == IC_OK ? settle(inc) : engine_failed(inc, err, st);
    }
    st = keep(inc, data, size, err);
    if (st != IC_OK || inc->gathering) return st;
    return maybe_start(inc, err);
}

ic_format ic_incremental_format(const ic_incremental *inc) {
    return inc ? inc->format : IC_FORMAT_UNKNOWN;
}

int ic_incremental_is_streaming(const ic_incremental *inc) {
    return inc && inc->streamed && !inc->gathering ? 1 : 0;
}

uint64_t ic_incremental_buffered_bytes(const ic_incremental *inc) {
    if (!inc) return 0;
    return inc->size + (inc->engine ? inc->engine->buffered(inc->state) : 0);
}

ic_status ic_incremental_partial(ic_incremental *inc, ic_image **out, ic_error *err) {
    ic__clear_error(err);
    if (!inc || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL argument");
    *out = NULL;
    if (inc->failure != IC_OK) return repeat_failure(inc, err);
    if (!inc->engine || !inc->d.image) return IC_OK;
    const ic__decoder *d = &inc->d;
    uint32_t rows = inc->engine->rows(inc->state);
    if (rows == 0) return IC_OK;
    uint32_t done = ic__dec_rows_complete(d, rows);
    const ic_image *src = d->image;
    ic_image *copy;
    ic_status st = ic__image_create_in(NULL, src->width, src->height, 1, &copy, err);
    if (st != IC_OK) return st;
    size_t bytes = (size_t)src->width * 4;
    for (uint32_t y = 0; y < src->height; y++) {
        uint8_t *to = ic_image_frame(copy, 0) + (size_t)y * copy->stride;
        if (y < done) {
            memcpy(to, ic_image_frame(src, 0) + (size_t)y * src->stride, bytes);
        } else {
            memset(to, 0, bytes);
        }
    }
    copy->source_format = d->format;
    copy->source_width = d->source_width;
    copy->source_height = d->source_height;
    copy->is_opaque = false;
    if (d->orientation > 1 && !d->opts.keep_orientation) {
        ic_image *oriented;
        st = ic_image_orient(copy, (ic_orientation)d->orientation, &oriented, err);
        ic_image_free(copy);
        if (st != IC_OK) return st;
        copy = oriented;
        copy->orientation_applied = true;
    }
    copy->orientation = d->orientation;
    *out = copy;
    return IC_OK;
}

/* ic_decode on the kept body, which is then released. */
static ic_status decode_kept(ic_incremental *inc, ic_image **out, ic_decode_stats *stats, ic_error *err) {
    ic_status st = ic_decode(inc->bytes, inc->size, &inc->opts, out, stats, err);
    free(inc->bytes);
    inc->bytes = NULL;
    inc->size = inc->capacity = 0;
    return st;
}

ic_status ic_incremental_finish(ic_incremental *inc, ic_image **out, ic_decode_stats *stats,
                                ic_error *err) {
    ic__clear_error(err);
    if (stats) memset(stats, 0, sizeof *stats);
    if (!inc || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: NULL argument");
    *out = NULL;
    if (inc->failure != IC_OK) return repeat_failure(inc, err);
    if (inc->finished) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "incremental decode: finished twice");
    }
    inc->finished = 1;
    /* A decode cancelled after its last piece ends cancelled, as ic_decode does when the flag
     * is set before it starts, even when every row is already out. */
    if (inc->opts.cancel_flag && ic_cancel_flag_get(inc->opts.cancel_flag)) {
        drop_engine(inc);
        char message[IC_ERROR_MESSAGE_CAPACITY];
        snprintf(message, sizeof message, "%s: decode cancelled", format_name(inc));
        return fail(inc, err, IC_ERR_CANCELLED, message);
    }
    if (!inc->engine) return decode_kept(inc, out, stats, err);
    ic_status st = inc->engine->end(inc->state);
    if (st != IC_OK && inc->kept && is_data_failure(st)) {
        fall_back(inc);
        return decode_kept(inc, out, stats, err);
    }
    inc->engine->free(inc->state);
    inc->engine = NULL;
    inc->state = NULL;
    st = ic__dec_complete(&inc->d, st, out, stats);
    free(inc->bytes);
    inc->bytes = NULL;
    inc->size = inc->capacity = 0;
    if (st != IC_OK) inc->failure = st;
    if (err) *err = inc->failure_error;
    return st;
}

void ic_incremental_free(ic_incremental *inc) {
    if (!inc) return;
    drop_engine(inc);
    free(inc->bytes);
    free(inc);
}
