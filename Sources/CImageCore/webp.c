/*
 * webp.c — WebP decoding: libwebp for stills, libwebpdemux's animation decoder
 * for animations (it composites frames with blending and disposal).
 *
 * libwebp writes straight RGBA, which we premultiply with ImageKit's exact
 * formula (libwebp's own premultiplied mode rounds differently).
 */
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>

#include "ic_internal.h"

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

static ic_status vp8_failure(ic_decoder *d, VP8StatusCode code) {
    ic_status st;
    switch (code) {
    case VP8_STATUS_OUT_OF_MEMORY: st = IC_ERR_OUT_OF_MEMORY; break;
    case VP8_STATUS_UNSUPPORTED_FEATURE: st = IC_ERR_UNSUPPORTED_FEATURE; break;
    case VP8_STATUS_NOT_ENOUGH_DATA: st = IC_ERR_TRUNCATED; break;
    case VP8_STATUS_USER_ABORT: st = IC_ERR_CANCELLED; break;
    default: st = IC_ERR_CORRUPT; break;
    }
    if (st == IC_ERR_TRUNCATED) {
        return ic_set_error(d->err, st, "WebP: truncated after %zu bytes", d->size);
    }
    return ic_set_error(d->err, st, "WebP: %s", vp8_status_text(code));
}

static ic_status decode_still(ic_decoder *d, const WebPBitstreamFeatures *f) {
    ic_status st = ic_dec_check_size(d, (uint32_t)f->width, (uint32_t)f->height, 1, 0);
    if (st != IC_OK) return st;
    st = ic_dec_begin(d, (uint32_t)f->width, (uint32_t)f->height, 1);
    if (st != IC_OK) return st;
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        return ic_set_error(d->err, IC_ERR_INTERNAL, "WebP: library version mismatch");
    }
    ic_image *img = d->image;
    config.output.colorspace = MODE_RGBA;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = img->pixels;
    config.output.u.RGBA.stride = (int)img->stride;
    config.output.u.RGBA.size = img->frame_size;
    VP8StatusCode code = WebPDecode(d->data, d->size, &config);
    WebPFreeDecBuffer(&config.output);
    if (code != VP8_STATUS_OK) return vp8_failure(d, code);
    if (f->has_alpha) ic_dec_rows_done(d, 0, 0, img->height, true);
    return IC_OK;
}

static ic_status decode_animation(ic_decoder *d) {
    WebPData data = {d->data, d->size};
    WebPDemuxState state;
    WebPDemuxer *demux = WebPDemuxPartial(&data, &state);
    if (!demux) return ic_set_error(d->err, IC_ERR_CORRUPT, "WebP: invalid container");
    if (state != WEBP_DEMUX_DONE) {
        WebPDemuxDelete(demux);
        return ic_set_error(d->err, IC_ERR_TRUNCATED, "WebP: truncated after %zu bytes", d->size);
    }
    uint32_t w = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH);
    uint32_t h = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    uint32_t count = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
    d->loop_count = WebPDemuxGetI(demux, WEBP_FF_LOOP_COUNT);
    d->source_width = w;
    d->source_height = h;
    uint32_t frames = d->opts.all_frames ? count : 1;
    uint32_t *delays = NULL;
    if (count == 0) {
        WebPDemuxDelete(demux);
        return ic_set_error(d->err, IC_ERR_CORRUPT, "WebP: animation has no frames");
    }
    /* The animation decoder keeps two canvases of its own. */
    uint64_t canvas = (uint64_t)w * h * 4;
    ic_status st = ic_dec_check_size(d, w, h, d->opts.all_frames ? count : 1, 2 * canvas);
    if (st == IC_OK) st = ic_dec_reserve(d, 2 * canvas);
    if (st != IC_OK) {
        WebPDemuxDelete(demux);
        return st;
    }
    st = ic_dec_begin(d, w, h, frames);
    if (st != IC_OK) {
        ic_dec_release(d, 2 * canvas);
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
        ic_dec_release(d, 2 * canvas);
        return ic_set_error(d->err, IC_ERR_INTERNAL, "WebP: library version mismatch");
    }
    aopts.color_mode = MODE_RGBA;
    aopts.use_threads = 0;
    WebPAnimDecoder *dec = WebPAnimDecoderNew(&data, &aopts);
    if (!dec) {
        ic_dec_release(d, 2 * canvas);
        return ic_set_error(d->err, IC_ERR_CORRUPT, "WebP: invalid animation");
    }
    ic_image *img = d->image;
    st = IC_OK;
    for (uint32_t f = 0; f < frames; f++) {
        if (ic_dec_cancelled(d)) {
            st = ic_dec_fail_cancelled(d);
            break;
        }
        uint8_t *buf;
        int timestamp;
        if (!WebPAnimDecoderHasMoreFrames(dec) || !WebPAnimDecoderGetNext(dec, &buf, &timestamp)) {
            st = ic_set_error(d->err, IC_ERR_CORRUPT, "WebP: frame %u cannot be decoded", f);
            break;
        }
        uint8_t *frame = ic_image_frame(img, f);
        for (uint32_t y = 0; y < h; y++) {
            memcpy(frame + (size_t)y * img->stride, buf + (size_t)y * w * 4, (size_t)w * 4);
        }
        ic_dec_rows_done(d, f, 0, h, true);
    }
    WebPAnimDecoderDelete(dec);
    ic_dec_release(d, 2 * canvas);
    return st;
}

ic_status ic_webp_decode(ic_decoder *d) {
    WebPBitstreamFeatures f;
    VP8StatusCode code = WebPGetFeatures(d->data, d->size, &f);
    if (code != VP8_STATUS_OK) return vp8_failure(d, code);
    d->source_width = (uint32_t)f.width;
    d->source_height = (uint32_t)f.height;
    if (f.has_animation) return decode_animation(d);
    return decode_still(d, &f);
}

ic_status ic_webp_probe(const uint8_t *p, size_t n, ic_info *info, ic_error *err) {
    WebPBitstreamFeatures f;
    VP8StatusCode code = WebPGetFeatures(p, n, &f);
    if (code != VP8_STATUS_OK) {
        return ic_set_error(err, code == VP8_STATUS_NOT_ENOUGH_DATA ? IC_ERR_TRUNCATED : IC_ERR_CORRUPT,
                            "WebP: %s", vp8_status_text(code));
    }
    info->width = (uint32_t)f.width;
    info->height = (uint32_t)f.height;
    info->has_alpha = (uint8_t)(f.has_alpha != 0);
    info->frame_count = 1;
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
