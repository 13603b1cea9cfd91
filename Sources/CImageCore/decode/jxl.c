/*
 * jxl.c — JPEG XL decoding with libjxl (0.7), codestreams and containers, on
 * the calling thread (no parallel runner).
 *
 * Output: JXL_TYPE_UINT8 RGBA; libjxl converts from its float pipeline (and
 * from 16-bit or float sources) by clamping to [0, 1] and rounding v * 255 to
 * the nearest integer. Grey images come as R = G = B. Straight alpha is
 * premultiplied by the sink; an image whose alpha is associated
 * (alpha_premultiplied) comes premultiplied from libjxl and is passed through, its colour
 * clamped to its alpha.
 *
 * Orientation: libjxl applies it (and reports the oriented size); with
 * keep_orientation=1 it is told to keep the stored orientation
 * (JxlDecoderSetKeepOrientation), and the image reports the file's value.
 *
 * Animation: all_frames=1 decodes every displayed frame, composited by libjxl
 * (coalescing on); delays are the frame durations in ticks x 1000 x
 * tps_denominator / tps_numerator, rounded to milliseconds; the loop count is
 * the animation header's num_loops. The number of frames is not in any header:
 * a first pass reads the frame headers only (libjxl skips the frame data when no
 * pixels are asked for) and stops as soon as max_frames is passed, so the
 * limits are checked before any pixel is allocated.
 *
 * Colour: for XYB-encoded images (uses_original_profile false, the usual lossy
 * case) libjxl is asked for sRGB output (JxlDecoderSetPreferredColorProfile):
 * its own conversion from XYB, the cheapest path and exact for sRGB, so no ICC
 * transform follows. Other images come in their original space: an embedded ICC
 * profile, or the one libjxl writes for an enumerated space that is not sRGB,
 * goes to the colour code (an sRGB one is recognised there and costs nothing).
 * With IC_COLOR_RAW no preference is set. The image keeps the file's ICC profile
 * when it embeds one.
 *
 * Limits: the size from JXL_DEC_BASIC_INFO is checked (ic__dec_check_size) with
 * an estimate of libjxl's working memory — one frame of float samples per
 * channel, twice when the image is animated (libjxl keeps reference frames) —
 * before the output is allocated.
 *
 * The input is handed over in steps (JxlDecoderSetInput/ReleaseInput) and the
 * cancel flag is looked at between them and between frames.
 *
 * Thumbnails decode the full frame and shrink it through the sink. libjxl 0.7's
 * progressive DC (JxlDecoderSetProgressiveDetail kDC, JXL_DEC_FRAME_PROGRESSION,
 * JxlDecoderFlushImage) was measured as the source of a 256 px thumbnail of a
 * 12 MP lossy file (distance 1, effort 3; callgrind instruction counts, full
 * input, RGBA8 out): reaching the DC costs 0.44 G of the full decode's 3.06 G,
 * but 0.7 has no downsampled output — the flush renders the DC upsampled 8x to
 * full size — so the DC path costs 5.52 G, 1.8x the full decode (1.4x at effort 7
 * or distance 0.5), for a thumbnail 57 dB from the full one. Lossless and other
 * modular files send no DC event.
 *
 * libjxl is opened by the first decode or probe (codecs/ic_jxl_lib.h); when it cannot be, both
 * fail with IC_ERR_UNSUPPORTED_FORMAT and the loader's reason.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../codecs/ic_jxl_lib.h"
#include "ic_dec_color.h"
#include "ic_decoder.h"
#include "ic_formats.h"
#include "ic_sink.h"

/* Input bytes handed to libjxl between two looks at the cancel flag: a sixteenth of the
 * file, at least 64 KiB (libjxl re-reads an unfinished section at each step). */
#define JXL_MIN_STEP ((size_t)64 * 1024)
#define JXL_STEPS 16

/* The input, fed in steps. */
typedef struct feeder {
    const uint8_t *data;
    size_t size;
    size_t end; /* bytes handed over so far */
    size_t step;
} feeder;

static void feed_start(JxlDecoder *dec, feeder *f, const uint8_t *data, size_t size) {
    f->data = data;
    f->size = size;
    f->step = size / JXL_STEPS > JXL_MIN_STEP ? size / JXL_STEPS : JXL_MIN_STEP;
    f->end = size < f->step ? size : f->step;
    JxlDecoderSetInput(dec, data, f->end);
}

/* After JXL_DEC_NEED_MORE_INPUT: hands over the next step; false at the end of the input.
 * The input is never closed (JxlDecoderCloseInput), so a file that ends early is reported
 * as needing more input — truncated — rather than as an invalid codestream. */
static bool feed_more(JxlDecoder *dec, feeder *f) {
    size_t unread = JxlDecoderReleaseInput(dec);
    if (f->end == f->size) return false;
    size_t from = f->end - unread;
    f->end = f->size - f->end > f->step ? f->end + f->step : f->size;
    JxlDecoderSetInput(dec, f->data + from, f->end - from);
    return true;
}

static ic_status truncated(ic_error *err, size_t size) {
    return ic__set_error(err, IC_ERR_TRUNCATED, "JPEG XL: truncated after %zu bytes", size);
}

/* Runs the decoder to its next event, feeding input and looking at the cancel flag. */
static JxlDecoderStatus next_event(ic__decoder *d, JxlDecoder *dec, feeder *f, ic_status *st) {
    for (;;) {
        if (d && ic__dec_cancelled(d)) {
            *st = ic__dec_fail_cancelled(d);
            return JXL_DEC_ERROR;
        }
        JxlDecoderStatus s = JxlDecoderProcessInput(dec);
        if (s != JXL_DEC_NEED_MORE_INPUT) return s;
        if (!feed_more(dec, f)) return JXL_DEC_NEED_MORE_INPUT;
    }
}

/* The status for an unexpected event `s` (or a libjxl error). */
static ic_status event_failure(ic_error *err, JxlDecoderStatus s, size_t size, const char *when) {
    if (s == JXL_DEC_NEED_MORE_INPUT) return truncated(err, size);
    if (s == JXL_DEC_SUCCESS) {
        return ic__set_error(err, IC_ERR_CORRUPT, "JPEG XL: the file ends %s", when);
    }
    return ic__set_error(err, IC_ERR_CORRUPT, "JPEG XL: invalid codestream %s", when);
}

/* Frames the file shows (up to `stop` + 1), from their headers; their delays in ms when
 * `delays` is set. 0 with *st set on failure. */
static uint32_t count_frames(ic__decoder *d, const uint8_t *data, size_t size, uint32_t stop,
                             uint32_t *delays, uint32_t ndelays, ic_error *err, ic_status *st) {
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec) {
        *st = ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG XL: cannot create a decoder");
        return 0;
    }
    JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_FRAME);
    feeder f;
    feed_start(dec, &f, data, size);
    JxlBasicInfo info;
    memset(&info, 0, sizeof info);
    uint32_t frames = 0;
    *st = IC_OK;
    for (;;) {
        JxlDecoderStatus s = next_event(d, dec, &f, st);
        if (*st != IC_OK) break;
        if (s == JXL_DEC_BASIC_INFO) {
            JxlDecoderGetBasicInfo(dec, &info);
        } else if (s == JXL_DEC_FRAME) {
            JxlFrameHeader fh;
            if (JxlDecoderGetFrameHeader(dec, &fh) != JXL_DEC_SUCCESS) {
                *st = event_failure(err, JXL_DEC_ERROR, size, "in a frame header");
                break;
            }
            if (delays && frames < ndelays && info.animation.tps_numerator) {
                double ms = (double)fh.duration * 1000.0 * info.animation.tps_denominator /
                            info.animation.tps_numerator;
                delays[frames] = ms >= UINT32_MAX ? UINT32_MAX : (uint32_t)lround(ms);
            }
            frames++;
            if (fh.is_last || frames > stop) break;
        } else if (s == JXL_DEC_SUCCESS) {
            break;
        } else {
            *st = event_failure(err, s, size, "before its last frame");
            break;
        }
    }
    JxlDecoderDestroy(dec);
    if (*st == IC_OK && frames == 0) {
        *st = ic__set_error(err, IC_ERR_CORRUPT, "JPEG XL: no frame");
    }
    return *st == IC_OK ? frames : 0;
}

/* An sRGB (or sRGB-grey) encoding, for JxlDecoderSetPreferredColorProfile. */
static JxlColorEncoding srgb_encoding(bool grey) {
    JxlColorEncoding c;
    memset(&c, 0, sizeof c);
    c.color_space = grey ? JXL_COLOR_SPACE_GRAY : JXL_COLOR_SPACE_RGB;
    c.white_point = JXL_WHITE_POINT_D65;
    c.primaries = JXL_PRIMARIES_SRGB;
    c.transfer_function = JXL_TRANSFER_FUNCTION_SRGB;
    c.rendering_intent = JXL_RENDERING_INTENT_PERCEPTUAL;
    return c;
}

static bool is_srgb(const JxlColorEncoding *c) {
    return (c->color_space == JXL_COLOR_SPACE_RGB || c->color_space == JXL_COLOR_SPACE_GRAY) &&
           c->white_point == JXL_WHITE_POINT_D65 &&
           (c->color_space == JXL_COLOR_SPACE_GRAY || c->primaries == JXL_PRIMARIES_SRGB) &&
           c->transfer_function == JXL_TRANSFER_FUNCTION_SRGB;
}

/* Copies the profile libjxl reports for `target` into the decode's colour state. */
static void take_icc(ic__decoder *d, JxlDecoder *dec, JxlColorProfileTarget target) {
    size_t size = 0;
    if (JxlDecoderGetICCProfileSize(dec, NULL, target, &size) != JXL_DEC_SUCCESS || size == 0 ||
        size > IC_ICC_MAX_BYTES) {
        return;
    }
    uint8_t *icc = ic__dec_malloc(d, size);
    if (!icc) return;
    if (JxlDecoderGetColorAsICCProfile(dec, NULL, target, icc, size) == JXL_DEC_SUCCESS) {
        ic__color_take_profile(d, icc, size);
    }
    ic__dec_free(d, icc, size);
}

/* At JXL_DEC_COLOR_ENCODING: chooses the output space and what the sink converts. */
static void choose_color(ic__decoder *d, JxlDecoder *dec, const JxlBasicInfo *info) {
    bool grey = info->num_color_channels == 1;
    JxlColorEncoding original;
    bool enumerated = JxlDecoderGetColorAsEncodedProfile(dec, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL,
                                                         &original) == JXL_DEC_SUCCESS;
    if (!enumerated) take_icc(d, dec, JXL_COLOR_PROFILE_TARGET_ORIGINAL);
    if (d->opts.color_mode == IC_COLOR_RAW) return;
    if (!info->uses_original_profile) {
        JxlColorEncoding srgb = srgb_encoding(grey);
        if (JxlDecoderSetPreferredColorProfile(dec, &srgb) == JXL_DEC_SUCCESS) return;
    }
    if (enumerated && is_srgb(&original)) return;
    if (enumerated) take_icc(d, dec, JXL_COLOR_PROFILE_TARGET_DATA);
    ic__color_prepare(d, grey ? IC_COLOR_INPUT_GRAY : IC_COLOR_INPUT_RGBA);
}

/* libjxl's working memory for w x h (see the top of the file). */
static uint64_t working_bytes(const JxlBasicInfo *info) {
    uint64_t px = (uint64_t)info->xsize * info->ysize;
    uint64_t channels = info->num_color_channels + (info->alpha_bits ? 1 : 0);
    return px * channels * 4 * (info->have_animation ? 2 : 1);
}

typedef struct jxl_job {
    ic__decoder *d;
    JxlDecoder *dec;
    feeder f;
    JxlBasicInfo info;
    uint32_t frames; /* frames to decode */
    uint64_t reserved;
    ic__dec_buffer staging; /* a full frame when the sink resamples */
    size_t staging_stride;
} jxl_job;

/* Sets the limits, plans and begins the output once the basic info is known. */
static ic_status on_basic_info(jxl_job *j) {
    ic__decoder *d = j->d;
    JxlBasicInfo *info = &j->info;
    if (JxlDecoderGetBasicInfo(j->dec, info) != JXL_DEC_SUCCESS) {
        return ic__set_error(d->err, IC_ERR_CORRUPT, "JPEG XL: invalid image header");
    }
    uint32_t w = info->xsize, h = info->ysize;
    uint64_t work = working_bytes(info);
    /* A size check before anything else: the frame count comes after it. */
    ic_status st = ic__dec_check_size(d, w, h, 1, work);
    if (st != IC_OK) return st;
    uint32_t frames = 1;
    uint32_t max = d->opts.limits.max_frames;
    if (info->have_animation && d->opts.all_frames) {
        frames = count_frames(d, d->data, d->size, max ? max : UINT32_MAX - 1, NULL, 0, d->err, &st);
        if (st != IC_OK) return st;
        st = ic__dec_check_size(d, w, h, frames, work);
        if (st != IC_OK) return st;
    }
    j->frames = frames;
    bool resample = ic__dec_plans_resize(d);
    if (resample) {
        j->staging_stride = ic__stride_for_width(w);
        st = ic__dec_buffer_alloc(d, j->staging_stride * h, &j->staging);
        if (st != IC_OK) return st;
    }
    st = ic__dec_reserve(d, work);
    if (st != IC_OK) return st;
    j->reserved = work;
    st = ic__dec_begin(d, w, h, frames);
    if (st != IC_OK) return st;
    if (info->have_animation) {
        d->loop_count = info->animation.num_loops;
        if (d->image->frame_delays_ms) {
            count_frames(d, d->data, d->size, frames - 1, d->image->frame_delays_ms, frames,
                         d->err, &st);
        }
    }
    return st;
}

static ic_status set_out_buffer(jxl_job *j, uint32_t frame) {
    ic__decoder *d = j->d;
    uint8_t *p;
    size_t stride, size;
    if (ic__dec_is_direct(d)) {
        p = ic_image_frame(d->image, frame);
        stride = d->image->stride;
        size = d->image->frame_size;
    } else {
        p = j->staging.p;
        stride = j->staging_stride;
        size = j->staging.size;
    }
    /* Our rows are 64-byte aligned: libjxl pads its rows the same way. */
    JxlPixelFormat fmt = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, IC_ROW_ALIGNMENT};
    size_t need = 0;
    if (stride != ((size_t)j->info.xsize * 4 + IC_ROW_ALIGNMENT - 1) / IC_ROW_ALIGNMENT * IC_ROW_ALIGNMENT ||
        JxlDecoderImageOutBufferSize(j->dec, &fmt, &need) != JXL_DEC_SUCCESS || need > size ||
        JxlDecoderSetImageOutBuffer(j->dec, &fmt, p, need) != JXL_DEC_SUCCESS) {
        return ic__set_error(d->err, IC_ERR_INTERNAL, "JPEG XL: the output buffer does not fit");
    }
    return IC_OK;
}

/* Associated alpha comes premultiplied, but a lossy colour may exceed its alpha by a level or
 * more: colour is clamped to alpha, which premultiplied output never exceeds. */
static void clamp_to_alpha(jxl_job *j, uint32_t frame) {
    ic__decoder *d = j->d;
    bool direct = ic__dec_is_direct(d);
    uint8_t *base = direct ? ic_image_frame(d->image, frame) : j->staging.p;
    size_t stride = direct ? d->image->stride : j->staging_stride;
    for (uint32_t y = 0; y < j->info.ysize; y++) {
        uint8_t *p = base + (size_t)y * stride;
        for (uint32_t x = 0; x < j->info.xsize; x++, p += 4) {
            if (p[0] > p[3]) p[0] = p[3];
            if (p[1] > p[3]) p[1] = p[3];
            if (p[2] > p[3]) p[2] = p[3];
        }
    }
}

/* A frame is complete in its buffer: premultiply, convert, hand to the resampler. */
static void frame_done(jxl_job *j, uint32_t frame) {
    ic__decoder *d = j->d;
    uint32_t h = j->info.ysize;
    bool alpha = j->info.alpha_bits > 0;
    bool straight = alpha && !j->info.alpha_premultiplied;
    if (alpha && !straight) {
        ic__dec_note_transparency(d);
        clamp_to_alpha(j, frame);
    }
    if (!ic__dec_is_direct(d)) {
        ic__dec_put_rows(d, frame, 0, h, j->staging.p, j->staging_stride, straight);
    } else if (straight || ic__color_sink_converts(&d->color)) {
        ic__dec_rows_done(d, frame, 0, h, straight);
    }
}

static ic_status run(jxl_job *j) {
    ic__decoder *d = j->d;
    JxlDecoder *dec = j->dec;
    JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FRAME |
                                       JXL_DEC_FULL_IMAGE);
    JxlDecoderSetKeepOrientation(dec, d->opts.keep_orientation ? JXL_TRUE : JXL_FALSE);
    feed_start(dec, &j->f, d->data, d->size);
    uint32_t frame = 0;
    ic_status st = IC_OK;
    for (;;) {
        JxlDecoderStatus s = next_event(d, dec, &j->f, &st);
        if (st != IC_OK) return st;
        switch (s) {
        case JXL_DEC_BASIC_INFO:
            st = on_basic_info(j);
            if (st != IC_OK) return st;
            break;
        case JXL_DEC_COLOR_ENCODING: choose_color(d, dec, &j->info); break;
        case JXL_DEC_FRAME: break;
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
            if (!d->image) return event_failure(d->err, JXL_DEC_ERROR, d->size, "before its header");
            st = set_out_buffer(j, frame);
            if (st != IC_OK) return st;
            break;
        case JXL_DEC_FULL_IMAGE:
            frame_done(j, frame);
            if (++frame == j->frames) return IC_OK;
            break;
        case JXL_DEC_SUCCESS:
            if (frame == 0 || !d->image) return event_failure(d->err, s, d->size, "before a frame");
            return ic__set_error(d->err, IC_ERR_CORRUPT, "JPEG XL: %u of %u frames", frame, j->frames);
        default: return event_failure(d->err, s, d->size, frame ? "in a frame" : "in its header");
        }
    }
}

/* The orientation the file declares (libjxl reports 1 once it applies it): a header-only read. */
static uint8_t file_orientation(const uint8_t *data, size_t size) {
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec) return 1;
    JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO);
    JxlDecoderSetKeepOrientation(dec, JXL_TRUE);
    JxlDecoderSetInput(dec, data, size);
    JxlDecoderCloseInput(dec);
    JxlBasicInfo bi;
    uint8_t o = 1;
    if (JxlDecoderProcessInput(dec) == JXL_DEC_BASIC_INFO &&
        JxlDecoderGetBasicInfo(dec, &bi) == JXL_DEC_SUCCESS && bi.orientation >= 1 &&
        bi.orientation <= 8) {
        o = (uint8_t)bi.orientation;
    }
    JxlDecoderDestroy(dec);
    return o;
}

ic_status ic__jxl_decode(ic__decoder *d) {
    ic_status st = ic__jxl_load("JPEG XL", d->err);
    if (st != IC_OK) return st;
    jxl_job j;
    memset(&j, 0, sizeof j);
    j.d = d;
    j.dec = JxlDecoderCreate(NULL);
    if (!j.dec) return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG XL: cannot create a decoder");
    st = run(&j);
    JxlDecoderDestroy(j.dec);
    ic__dec_buffer_free(d, &j.staging);
    ic__dec_release(d, j.reserved);
    if (st == IC_OK) {
        d->codec_oriented = true;
        d->orientation = file_orientation(d->data, d->size);
    }
    return st;
}

ic_status ic__jxl_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err) {
    ic_status st = ic__jxl_load("JPEG XL", err);
    if (st != IC_OK) return st;
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "JPEG XL: cannot create a decoder");
    JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING);
    JxlDecoderSetKeepOrientation(dec, JXL_TRUE);
    feeder f;
    feed_start(dec, &f, data, size);
    JxlBasicInfo bi;
    bool have_info = false;
    for (;;) {
        JxlDecoderStatus s = next_event(NULL, dec, &f, &st);
        if (s == JXL_DEC_NEED_MORE_INPUT && have_info) break; /* the colour is not in the input */
        if (s == JXL_DEC_BASIC_INFO) {
            JxlDecoderGetBasicInfo(dec, &bi);
            have_info = true;
        } else if (s == JXL_DEC_COLOR_ENCODING) {
            JxlColorEncoding c;
            size_t icc_size = 0;
            if (JxlDecoderGetColorAsEncodedProfile(dec, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &c) !=
                    JXL_DEC_SUCCESS &&
                JxlDecoderGetICCProfileSize(dec, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &icc_size) ==
                    JXL_DEC_SUCCESS &&
                icc_size >= 20 && icc_size <= IC_ICC_MAX_BYTES) {
                uint8_t *icc = malloc(icc_size);
                if (icc && JxlDecoderGetColorAsICCProfile(dec, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL,
                                                          icc, icc_size) == JXL_DEC_SUCCESS) {
                    ic__icc_note_probe(info, icc, icc_size, icc_size);
                }
                free(icc);
            }
            break;
        } else {
            st = event_failure(err, s, size, "in its header");
            break;
        }
    }
    JxlDecoderDestroy(dec);
    if (st != IC_OK) return st;
    if (!have_info) return ic__set_error(err, IC_ERR_CORRUPT, "JPEG XL: no image header");
    info->width = bi.xsize;
    info->height = bi.ysize;
    info->orientation = bi.orientation >= 1 && bi.orientation <= 8 ? (uint8_t)bi.orientation : 1;
    info->has_alpha = bi.alpha_bits > 0;
    info->bit_depth = bi.bits_per_sample > 255 ? 255 : (uint8_t)bi.bits_per_sample;
    info->frame_count = 1;
    if (bi.have_animation) {
        info->frame_count = count_frames(NULL, data, size, IC_DEFAULT_MAX_FRAMES * 1000u, NULL, 0, err, &st);
        if (st != IC_OK) return st;
    }
    return IC_OK;
}
