/*
 * webp.c — WebP decoding: libwebp for stills, libwebpdemux's animation decoder
 * for animations (it composites frames with blending and disposal).
 *
 * libwebp writes straight RGBA, which we premultiply with ImageKit's exact
 * formula (libwebp's own premultiplied mode rounds differently); a thumbnail's
 * rows are premultiplied by the resampler as it reads them, where libwebp left
 * them.
 *
 * Thumbnails (see thumbnail_codec_size): libwebp's scaler shrinks an opaque
 * picture on load to twice the output size and the resampler's Lanczos-3 does
 * the rest. libvips has the scaler go all the way, which costs less (the
 * scaler's work grows with the width it produces) but leaves an area average
 * alone, several dB further from a Lanczos-3 of the full decode on a detailed
 * photo. A picture with alpha is decoded at full size and resampled from there.
 *
 * Stills go through libwebp's incremental decoder. Given a cancel flag, the
 * input is handed over in steps and the flag is looked at between steps, as
 * the other decoders look at it between rows; a thumbnail's rows then go to
 * the resampler as each step finishes them. Animations look at the flag
 * between frames. What a still decode accepts and how it fails stay
 * WebPDecode's (see decode_into).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>

#include "../common/ic_bytes.h"
#include "ic_dec_color.h"
#include "ic_decoder.h"
#include "ic_exif.h"
#include "ic_formats.h"
#include "ic_inc_engine.h"
#include "ic_sink.h"

static const char *vp8_status_text(VP8StatusCode code) {
    switch (code) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "invalid bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "cancelled";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated";
    default: return "decoder error";
    }
}

/* Input bytes a still's decode takes between two looks at the cancel flag: an eighth of the
 * file (libwebp's lossless decoder redoes up to 8 rows at each step), at least 64 KiB. A
 * decode without a cancel flag takes the input in one step. */
#define WEBP_MIN_STEP ((size_t)64 * 1024)
#define WEBP_STEPS 8

static ic_status vp8_failure(ic__decoder *d, VP8StatusCode code) {
    ic_status st;
    switch (code) {
    case VP8_STATUS_OUT_OF_MEMORY: st = IC_ERR_OUT_OF_MEMORY; break;
    case VP8_STATUS_UNSUPPORTED_FEATURE: st = IC_ERR_UNSUPPORTED_FEATURE; break;
    case VP8_STATUS_NOT_ENOUGH_DATA: st = IC_ERR_TRUNCATED; break;
    case VP8_STATUS_USER_ABORT: st = IC_ERR_CANCELLED; break;
    default: st = IC_ERR_CORRUPT; break;
    }
    if (st == IC_ERR_TRUNCATED) {
        return ic__set_error(d->err, st, "WebP: truncated after %zu bytes", d->size);
    }
    return ic__set_error(d->err, st, "WebP: %s", vp8_status_text(code));
}

/* Whether the RIFF container, or a chunk up to and including the image data, claims more bytes
 * than the input has (or the input ends before the image data). */
static bool container_overruns(const uint8_t *p, size_t n) {
    if (n < 12 || ic__le32(p + 4) > n - 8) return true;
    size_t at = 12;
    while (n - at >= 8) {
        uint32_t size = ic__le32(p + at + 4);
        if (size > n - at - 8) return true;
        if (memcmp(p + at, "VP8 ", 4) == 0 || memcmp(p + at, "VP8L", 4) == 0) return false;
        at += 8 + (size_t)size + (size & 1);
        if (at > n) return true;
    }
    return true;
}

/* A thumbnail's codec-size picture (straight RGBA, `height` rows, in the sink's frame:
 * ic__dec_frame_alloc), whose rows go to the sink as libwebp finishes them. */
typedef struct codec_rows {
    uint32_t height;
    bool alpha;
    uint32_t done; /* rows handed to the sink */
} codec_rows;

/* Hands rows [r->done, end) to the sink. libwebp writes a row once, and the sink reads the
 * rows without changing them (the resampler premultiplies as it reads), there or, with
 * use_helper_thread, on a helper thread while libwebp decodes the next ones. */
static void hand_rows(ic__decoder *d, codec_rows *r, uint32_t end) {
    if (end <= r->done) return;
    ic__dec_put_frame_rows(d, r->done, end - r->done, r->alpha);
    r->done = end;
}

/* Runs libwebp's incremental decoder over the input with `config`, a step at a time, handing
 * the rows each step finishes to `rows` (NULL: none); stops with *cancelled set once the
 * cancel flag is. */
static VP8StatusCode decode_in_steps(ic__decoder *d, WebPDecoderConfig *config, codec_rows *rows,
                                     bool *cancelled) {
    WebPIDecoder *idec = WebPIDecode(NULL, 0, config);
    if (!idec) return VP8_STATUS_OUT_OF_MEMORY;
    size_t step = d->size / WEBP_STEPS > WEBP_MIN_STEP ? d->size / WEBP_STEPS : WEBP_MIN_STEP;
    if (!d->opts.cancel_flag) step = d->size;
    size_t fed = 0;
    VP8StatusCode code = VP8_STATUS_SUSPENDED;
    while (code == VP8_STATUS_SUSPENDED && fed < d->size) {
        if (ic__dec_cancelled(d)) {
            *cancelled = true;
            break;
        }
        fed = d->size - fed > step ? fed + step : d->size;
        code = WebPIUpdate(idec, d->data, fed);
        int last_y = 0;
        if (rows && (code == VP8_STATUS_OK || code == VP8_STATUS_SUSPENDED) &&
            WebPIDecGetRGB(idec, &last_y, NULL, NULL, NULL) && last_y > 0) {
            hand_rows(d, rows, (uint32_t)last_y);
        }
    }
    WebPIDelete(idec);
    return code;
}

/* libwebp's settings for a still: straight RGBA into `buf` (`stride` apart, `size`
 * bytes), at scaled_w x scaled_h (0: full size); false if libwebp refuses its version. */
static bool init_config(const ic__decoder *d, WebPDecoderConfig *config, uint8_t *buf,
                        size_t stride, size_t size, uint32_t scaled_w, uint32_t scaled_h) {
    if (!WebPInitDecoderConfig(config)) return false;
    config->output.colorspace = MODE_RGBA;
    config->output.is_external_memory = 1;
    config->output.u.RGBA.rgba = buf;
    config->output.u.RGBA.stride = (int)stride;
    config->output.u.RGBA.size = size;
    if (scaled_w) {
        config->options.use_scaling = 1;
        config->options.scaled_width = (int)scaled_w;
        config->options.scaled_height = (int)scaled_h;
    }
    config->options.use_threads = d->opts.use_helper_thread != 0;
    return true;
}

/*
 * Decodes into `buf` (straight RGBA, `stride` apart, `size` bytes) at
 * scaled_w x scaled_h (0: full size); with `rows`, buf is that picture, whose
 * rows go to the sink as they are finished.
 *
 * The incremental decoder expects more input to come, so it is more lenient
 * than WebPDecode (a file whose container claims more bytes than there are
 * may decode) and names some failures differently (a bad alpha plane is a
 * "user abort"). So WebPDecode judges the headers of a container that claims
 * too much — given an empty output buffer it parses them, checking sizes
 * against the input, and then refuses the buffer — and says what went wrong
 * when the incremental decode fails.
 */
static ic_status decode_into(ic__decoder *d, uint8_t *buf, size_t stride, size_t size,
                             uint32_t scaled_w, uint32_t scaled_h, codec_rows *rows) {
    WebPDecoderConfig config;
    if (!init_config(d, &config, buf, stride, 0, scaled_w, scaled_h)) {
        return vp8_failure(d, VP8_STATUS_INVALID_PARAM);
    }
    if (container_overruns(d->data, d->size)) {
        VP8StatusCode code = WebPDecode(d->data, d->size, &config);
        if (code != VP8_STATUS_INVALID_PARAM) return vp8_failure(d, code);
    }
    config.output.u.RGBA.size = size;
    bool cancelled = false;
    VP8StatusCode code = decode_in_steps(d, &config, rows, &cancelled);
    if (cancelled) return ic__dec_fail_cancelled(d);
    if (code != VP8_STATUS_OK) {
        /* WebPDecode writes the picture again: the rows handed over are read first. */
        if (rows) ic__dec_frame_wait(d);
        code = WebPDecode(d->data, d->size, &config);
    }
    WebPFreeDecBuffer(&config.output);
    if (code != VP8_STATUS_OK) return vp8_failure(d, code);
    if (rows) hand_rows(d, rows, rows->height);
    return IC_OK;
}

/* Whether decoded pixels may be transparent. Only a lossy image without an
 * ALPH chunk is certainly opaque: a lossless one carries alpha in its pixels
 * whatever its header's has_alpha hint says. */
static bool may_have_alpha(const WebPBitstreamFeatures *f) { return f->has_alpha || f->format != 1; }

/* The size libwebp decodes a thumbnail at. For opaque pictures libwebp's own
 * area-averaging scaler shrinks on load (to no less than twice the output). It
 * scales a lossy picture's colour and alpha separately, which would fringe
 * transparent edges, and a lossless one's premultiplied values with its own
 * rounding; so pictures with alpha are decoded at full size and resampled
 * premultiplied, and their thumbnails are those of the full decode. */
static void thumbnail_codec_size(const ic__decoder *d, uint32_t w, uint32_t h, bool alpha,
                                 uint32_t *cw, uint32_t *ch) {
    *cw = w;
    *ch = h;
    if (alpha) return;
    const ic__geometry *g = &d->plan;
    double k = 2.0 * g->out_w / g->crop.w;
    double ky = 2.0 * g->out_h / g->crop.h;
    if (ky > k) k = ky;
    if (k < 1) {
        *cw = (uint32_t)ceil(w * k);
        *ch = (uint32_t)ceil(h * k);
    }
}

static ic_status decode_still(ic__decoder *d, const WebPBitstreamFeatures *f) {
    uint32_t w = (uint32_t)f->width, h = (uint32_t)f->height;
    bool alpha = may_have_alpha(f);
    ic_status st = ic__dec_check_size(d, w, h, 1, 0);
    if (st != IC_OK) return st;
    if (!ic__dec_plans_resize(d)) {
        st = ic__dec_begin(d, w, h, 1);
        if (st != IC_OK) return st;
        ic_image *img = d->image;
        st = decode_into(d, img->pixels, img->stride, img->frame_size, 0, 0, NULL);
        if (st != IC_OK) return st;
        if (alpha || ic__color_sink_converts(&d->color)) ic__dec_rows_done(d, 0, 0, h, alpha);
        return IC_OK;
    }
    uint32_t cw, ch;
    thumbnail_codec_size(d, w, h, alpha, &cw, &ch);
    size_t stride = ic__stride_for_width(cw);
    uint8_t *frame;
    st = ic__dec_frame_alloc(d, stride, ch, &frame);
    if (st != IC_OK) return st;
    st = ic__dec_begin(d, cw, ch, 1);
    if (st != IC_OK) return st;
    codec_rows rows = {ch, alpha, 0};
    return decode_into(d, frame, stride, stride * ch, cw == w ? 0 : cw, ch, &rows);
}

static ic_status decode_animation(ic__decoder *d) {
    WebPData data = {d->data, d->size};
    WebPDemuxState state;
    WebPDemuxer *demux = WebPDemuxPartial(&data, &state);
    if (!demux) return ic__set_error(d->err, IC_ERR_CORRUPT, "WebP: invalid container");
    if (state != WEBP_DEMUX_DONE) {
        WebPDemuxDelete(demux);
        return ic__set_error(d->err, IC_ERR_TRUNCATED, "WebP: truncated after %zu bytes", d->size);
    }
    uint32_t w = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
    uint32_t h = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    uint32_t count = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
    d->loop_count = WebPDemuxGetI(demux, WEBP_FF_LOOP_COUNT);
    uint32_t frames = d->opts.all_frames ? count : 1;
    uint32_t *delays = NULL;
    if (count == 0) {
        WebPDemuxDelete(demux);
        return ic__set_error(d->err, IC_ERR_CORRUPT, "WebP: animation has no frames");
    }
    /* The animation decoder keeps two canvases of its own. */
    uint64_t canvas = (uint64_t)w * h * 4;
    ic_status st = ic__dec_check_size(d, w, h, d->opts.all_frames ? count : 1, 2 * canvas);
    if (st == IC_OK) st = ic__dec_reserve(d, 2 * canvas);
    if (st != IC_OK) {
        WebPDemuxDelete(demux);
        return st;
    }
    st = ic__dec_begin(d, w, h, frames);
    if (st != IC_OK) {
        ic__dec_release(d, 2 * canvas);
        WebPDemuxDelete(demux);
        return st;
    }
    delays = d->image->frame_delays_ms;
    WebPIterator it;
    if (delays && WebPDemuxGetFrame(demux, 1, &it)) {
        uint32_t i = 0;
        do {
            delays[i++] = it.duration > 0 ? (uint32_t)it.duration : 0;
        } while (i < frames && WebPDemuxNextFrame(&it));
        WebPDemuxReleaseIterator(&it);
    }
    WebPDemuxDelete(demux);

    WebPAnimDecoderOptions aopts;
    if (!WebPAnimDecoderOptionsInit(&aopts)) {
        ic__dec_release(d, 2 * canvas);
        return ic__set_error(d->err, IC_ERR_INTERNAL, "WebP: library version mismatch");
    }
    aopts.color_mode = MODE_RGBA;
    aopts.use_threads = d->opts.use_helper_thread != 0;
    WebPAnimDecoder *dec = WebPAnimDecoderNew(&data, &aopts);
    if (!dec) {
        ic__dec_release(d, 2 * canvas);
        return ic__set_error(d->err, IC_ERR_CORRUPT, "WebP: invalid animation");
    }
    st = IC_OK;
    for (uint32_t f = 0; f < frames; f++) {
        if (ic__dec_cancelled(d)) {
            st = ic__dec_fail_cancelled(d);
            break;
        }
        uint8_t *buf;
        int timestamp;
        if (!WebPAnimDecoderHasMoreFrames(dec) || !WebPAnimDecoderGetNext(dec, &buf, &timestamp)) {
            st = ic__set_error(d->err, IC_ERR_CORRUPT, "WebP: frame %u cannot be decoded", f);
            break;
        }
        ic__dec_put_rows(d, f, 0, h, buf, (size_t)w * 4, true);
    }
    WebPAnimDecoderDelete(dec);
    ic__dec_release(d, 2 * canvas);
    return st;
}

ic_status ic__webp_decode(ic__decoder *d) {
    WebPBitstreamFeatures f;
    VP8StatusCode code = WebPGetFeatures(d->data, d->size, &f);
    if (code != VP8_STATUS_OK) return vp8_failure(d, code);
    d->orientation = ic__webp_exif_orientation(d->data, d->size);
    const uint8_t *icc;
    size_t icc_size;
    if (ic__icc_webp_find(d->data, d->size, &icc, &icc_size)) ic__color_take_profile(d, icc, icc_size);
    ic__color_prepare(d, IC_COLOR_INPUT_RGBA);
    if (f.has_animation) return decode_animation(d);
    return decode_still(d, &f);
}

/* ---- The incremental engine: stills, on libwebp's incremental decoder. ---- */

/*
 * The engine decodes a still with decode_still's steps: the same checks and
 * plan from the same headers, the output started in the same order, the same
 * libwebp configuration, and the rows handed to the sink as decode_still hands
 * them, as libwebp finishes them. It reads the body incremental.c keeps (the
 * engine streams with the body kept) and hands libwebp the whole of it with
 * WebPIUpdate, which follows the buffer when it moves. Whatever decode_still
 * would judge on the complete body (a container that claims more bytes than
 * it has, headers that read differently, a decode libwebp does not finish)
 * fails as a data failure, so ic_decode answers on the kept body instead.
 */

/* Lossy input between two updates: libwebp resumes a lossy picture at the
 * macroblock it stopped in, so small steps cost little. A lossless picture
 * restarts up to 8 rows at each step and takes decode_in_steps' steps. */
#define WEBP_LOSSY_STEP ((size_t)16 * 1024)

typedef struct webp_inc {
    ic__decoder *d;
    const uint8_t *const *body; /* incremental.c's kept body and its size */
    const size_t *body_size;
    bool started;
    bool whole_body; /* the plan cannot be made from the headers: ic_decode decides */
    bool done;       /* libwebp finished the picture */
    WebPBitstreamFeatures features;
    bool alpha;
    WebPDecoderConfig config;
    WebPIDecoder *idec;
    bool resampled;        /* libwebp decodes a thumbnail's picture into the sink's frame */
    uint32_t height;       /* codec rows */
    uint32_t rows;         /* codec rows handed to the sink */
    size_t step;           /* input bytes between two updates */
    size_t fed;            /* input bytes libwebp was given */
} webp_inc;

static ic_status inc_data_failure(webp_inc *s, VP8StatusCode code) {
    if (code == VP8_STATUS_NOT_ENOUGH_DATA || code == VP8_STATUS_SUSPENDED) {
        return ic__set_error(s->d->err, IC_ERR_TRUNCATED, "WebP: truncated after %zu bytes",
                            *s->body_size);
    }
    return ic__set_error(s->d->err, IC_ERR_CORRUPT, "WebP: %s", vp8_status_text(code));
}

/* Reads the headers and starts libwebp, as ic__webp_decode and decode_still do. */
static ic_status inc_start(webp_inc *s) {
    ic__decoder *d = s->d;
    const uint8_t *p = *s->body;
    size_t n = *s->body_size;
    s->started = true;
    WebPBitstreamFeatures *f = &s->features;
    if (WebPGetFeatures(p, n, f) != VP8_STATUS_OK || f->has_animation) {
        s->whole_body = true;
        return IC_OK;
    }
    /* An EXIF chunk usually follows the image data; the orientation it gives turns a
     * thumbnail's box, which only matters for a box that is not square. */
    bool exif = n >= 21 && memcmp(p + 12, "VP8X", 4) == 0 && (p[20] & 0x08);
    if (exif && !d->opts.keep_orientation && d->opts.thumbnail_width != d->opts.thumbnail_height) {
        s->whole_body = true;
        return IC_OK;
    }
    d->orientation = ic__webp_exif_orientation(p, n);
    const uint8_t *icc;
    size_t icc_size;
    if (ic__icc_webp_find(p, n, &icc, &icc_size)) ic__color_take_profile(d, icc, icc_size);
    ic__color_prepare(d, IC_COLOR_INPUT_RGBA);

    uint32_t w = (uint32_t)f->width, h = (uint32_t)f->height;
    s->alpha = may_have_alpha(f);
    ic_status st = ic__dec_check_size(d, w, h, 1, 0);
    if (st != IC_OK) return st;
    uint32_t cw = w, ch = h;
    uint8_t *buf;
    size_t stride, size;
    if (!ic__dec_plans_resize(d)) {
        st = ic__dec_begin(d, w, h, 1);
        if (st != IC_OK) return st;
        buf = d->image->pixels;
        stride = d->image->stride;
        size = d->image->frame_size;
    } else {
        thumbnail_codec_size(d, w, h, s->alpha, &cw, &ch);
        stride = ic__stride_for_width(cw);
        s->resampled = true;
        st = ic__dec_frame_alloc(d, stride, ch, &buf);
        if (st == IC_OK) st = ic__dec_begin(d, cw, ch, 1);
        if (st != IC_OK) return st;
        size = stride * ch;
    }
    s->height = ch;
    if (!init_config(d, &s->config, buf, stride, size, cw == w ? 0 : cw, ch)) {
        return vp8_failure(d, VP8_STATUS_INVALID_PARAM);
    }
    s->idec = WebPIDecode(NULL, 0, &s->config);
    if (!s->idec) return vp8_failure(d, VP8_STATUS_OUT_OF_MEMORY);
    size_t total = (size_t)ic__le32(p + 4) + 8;
    s->step = f->format == 1 ? WEBP_LOSSY_STEP
              : total / WEBP_STEPS > WEBP_MIN_STEP ? total / WEBP_STEPS : WEBP_MIN_STEP;
    return IC_OK;
}

/* Hands the rows libwebp finished since the last call to the sink, as decode_still does. */
static void inc_emit(webp_inc *s) {
    int last_y = 0;
    if (!WebPIDecGetRGB(s->idec, &last_y, NULL, NULL, NULL) || last_y <= (int)s->rows) return;
    uint32_t y = s->rows, count = (uint32_t)last_y - y;
    ic__decoder *d = s->d;
    if (s->resampled) {
        ic__dec_put_frame_rows(d, y, count, s->alpha);
    } else if (s->alpha || ic__color_sink_converts(&d->color)) {
        ic__dec_rows_done(d, 0, y, count, s->alpha);
    }
    s->rows = (uint32_t)last_y;
}

/* Gives libwebp the body so far; fails on anything but progress. */
static ic_status inc_update(webp_inc *s) {
    size_t n = *s->body_size;
    s->fed = n;
    VP8StatusCode code = WebPIUpdate(s->idec, *s->body, n);
    if (code != VP8_STATUS_OK && code != VP8_STATUS_SUSPENDED) return inc_data_failure(s, code);
    s->done = code == VP8_STATUS_OK;
    inc_emit(s);
    return IC_OK;
}

static ic_status inc_feed(void *state, const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    webp_inc *s = state;
    if (!s->started) {
        ic_status st = inc_start(s);
        if (st != IC_OK || s->whole_body) return st;
    }
    if (s->whole_body || s->done || *s->body_size - s->fed < s->step) return IC_OK;
    return inc_update(s);
}

static ic_status inc_end(void *state) {
    webp_inc *s = state;
    ic__decoder *d = s->d;
    if (!s->done) {
        ic_status st = inc_update(s);
        if (st != IC_OK) return st;
        if (!s->done) return inc_data_failure(s, VP8_STATUS_SUSPENDED);
    }
    const uint8_t *p = *s->body;
    size_t n = *s->body_size;
    WebPBitstreamFeatures f;
    if (container_overruns(p, n) || WebPGetFeatures(p, n, &f) != VP8_STATUS_OK ||
        f.width != s->features.width || f.height != s->features.height ||
        f.has_alpha != s->features.has_alpha || f.has_animation || f.format != s->features.format ||
        s->rows != s->height) {
        return ic__set_error(d->err, IC_ERR_CORRUPT, "WebP: the container reads differently whole");
    }
    d->orientation = ic__webp_exif_orientation(p, n);
    return IC_OK;
}

static ic__inc_phase inc_phase(const void *state) {
    const webp_inc *s = state;
    return s->whole_body ? IC_INC_WHOLE_BODY : IC_INC_STREAMING_KEPT;
}

static uint64_t inc_buffered(const void *state) {
    (void)state;
    return 0; /* libwebp reads the body incremental.c keeps, and counts */
}

static uint32_t inc_rows(const void *state) {
    const webp_inc *s = state;
    return s->rows;
}

static void inc_free(void *state) {
    webp_inc *s = state;
    if (s->idec) WebPIDelete(s->idec);
    free(s);
}

static const ic__inc_engine webp_engine = {inc_feed, inc_end, inc_phase, inc_buffered, inc_rows,
                                          inc_free};

/* Chunks a still's headers may have before its image data (VP8X, ICCP, ALPH, EXIF, ...);
 * a file with more is left to ic_decode rather than walked again at every piece. */
#define WEBP_MAX_HEADER_CHUNKS 16

ic__inc_phase ic__webp_inc_phase(const uint8_t *p, size_t n) {
    /* Given fewer bytes than its headers, WebPGetFeatures answers from VP8X alone: the
     * walk waits for the image data's chunk header and bitstream header (10 bytes for
     * VP8, 5 for VP8L), within the size the RIFF header gives, as libwebp reads it. */
    if (n < 21) return IC_INC_HEADER;
    if (memcmp(p + 12, "VP8X", 4) == 0 && (p[20] & 0x02)) return IC_INC_WHOLE_BODY;
    uint32_t riff = ic__le32(p + 4);
    if ((uint64_t)riff + 8 < n) n = (size_t)riff + 8;
    size_t at = 12;
    for (int chunk = 0; chunk < WEBP_MAX_HEADER_CHUNKS; chunk++) {
        if (at > n || n - at < 8) return IC_INC_HEADER;
        uint32_t size = ic__le32(p + at + 4);
        bool lossy = memcmp(p + at, "VP8 ", 4) == 0;
        if (lossy || memcmp(p + at, "VP8L", 4) == 0) {
            if (n - at - 8 < (lossy ? 10u : 5u)) return IC_INC_HEADER;
            WebPBitstreamFeatures f;
            bool still = WebPGetFeatures(p, n, &f) == VP8_STATUS_OK && !f.has_animation;
            return still ? IC_INC_STREAMING_KEPT : IC_INC_WHOLE_BODY;
        }
        at += 8 + (size_t)size + (size & 1);
    }
    return IC_INC_WHOLE_BODY;
}

ic_status ic__webp_inc_new(ic__decoder *d, const uint8_t *const *body, const size_t *body_size,
                          const ic__inc_engine **engine, void **state) {
    webp_inc *s = calloc(1, sizeof *s);
    if (!s) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "WebP: cannot allocate a decoder");
    s->d = d;
    s->body = body;
    s->body_size = body_size;
    *engine = &webp_engine;
    *state = s;
    return IC_OK;
}

ic_status ic__webp_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    WebPBitstreamFeatures f;
    VP8StatusCode code = WebPGetFeatures(p, n, &f);
    if (code != VP8_STATUS_OK) {
        return ic__set_error(err, code == VP8_STATUS_NOT_ENOUGH_DATA ? IC_ERR_TRUNCATED : IC_ERR_CORRUPT,
                            "WebP: %s", vp8_status_text(code));
    }
    info->width = (uint32_t)f.width;
    info->height = (uint32_t)f.height;
    info->has_alpha = (uint8_t)(f.has_alpha != 0);
    info->frame_count = 1;
    info->orientation = ic__webp_exif_orientation(p, n);
    const uint8_t *icc;
    size_t icc_size;
    if (ic__icc_webp_find(p, n, &icc, &icc_size)) ic__icc_note_probe(info, icc, icc_size, icc_size);
    if (f.has_animation) {
        WebPData data = {p, n};
        WebPDemuxer *demux = WebPDemux(&data);
        if (demux) {
            info->width = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
            info->height = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
            info->frame_count = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
            WebPDemuxDelete(demux);
        }
    }
    return IC_OK;
}
