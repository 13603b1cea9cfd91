/*
 * sink.c — where decoded rows go: planning the output size, limit checks,
 * and the row sink (direct into the output, or streamed through the resampler
 * so the full-size bitmap never exists). Rows of a tagged image go through its
 * colour transform first, at the codec's size, before premultiplying; in direct
 * mode, with use_helper_thread, on a helper thread while the codec decodes on.
 * The resampler premultiplies straight rows as it reads them, so rows handed
 * over from a decoder's own buffer are read there, not copied.
 */
#include <math.h>
#include <string.h>

#include "ic_decoder.h"
#include "ic_sink.h"

/* Plans the output for a stored size; see ic_decode_options. */
static void plan(ic__decoder *d, uint32_t width, uint32_t height) {
    const ic_decode_options *o = &d->opts;
    uint32_t box_w = o->thumbnail_width, box_h = o->thumbnail_height;
    /* The box is for the upright picture; the plan is in stored orientation. */
    if (d->orientation >= 5 && !o->keep_orientation) {
        uint32_t t = box_w;
        box_w = box_h;
        box_h = t;
    }
    ic__plan_geometry_placed(width, height, box_w, box_h, o->thumbnail_mode, o->allow_upscale != 0,
                            ic__dec_cuts_window(d) ? NULL : &o->thumbnail_gravity, &d->plan);
    uint64_t limit = o->scale_down_limit_bytes;
    uint64_t bytes = (uint64_t)d->plan.out_w * d->plan.out_h * 4;
    if (limit && bytes > limit) {
        double f = sqrt((double)limit / (double)bytes);
        uint32_t w = (uint32_t)floor(d->plan.out_w * f), h = (uint32_t)floor(d->plan.out_h * f);
        d->plan.out_w = w ? w : 1;
        d->plan.out_h = h ? h : 1;
    }
}

bool ic__dec_cuts_window(const ic__decoder *d) {
    const ic_decode_options *o = &d->opts;
    return o->thumbnail_mode == IC_RESIZE_FILL && o->thumbnail_width && o->thumbnail_height &&
           (o->thumbnail_smart || o->thumbnail_gravity.kind != IC_GRAVITY_CENTRE);
}

bool ic__dec_plans_resize(const ic__decoder *d) {
    const ic__geometry *g = &d->plan;
    return g->out_w != d->source_width || g->out_h != d->source_height || g->crop.x != 0 ||
           g->crop.y != 0 || g->crop.w != d->source_width || g->crop.h != d->source_height;
}

uint32_t ic__dec_shrink_denominator(const ic__decoder *d, uint32_t max_denominator) {
    if (!ic__dec_plans_resize(d)) return 1;
    const ic__geometry *g = &d->plan;
    uint32_t w = d->source_width, h = d->source_height;
    for (uint32_t den = max_denominator; den > 1; den /= 2) {
        double cw = (w + den - 1) / den, ch = (h + den - 1) / den;
        if (g->crop.w * cw / w >= g->out_w && g->crop.h * ch / h >= g->out_h) return den;
    }
    return 1;
}

ic_status ic__dec_check_size(ic__decoder *d, uint32_t width, uint32_t height, uint32_t frames,
                            uint64_t extra_bytes) {
    const char *name = ic_format_name(d->format);
    const ic_limits *lim = &d->opts.limits;
    if (width == 0 || height == 0) {
        return ic__set_error(d->err, IC_ERR_CORRUPT, "%s: image size %ux%u is empty", name,
                            width, height);
    }
    uint64_t pixels = (uint64_t)width * height;
    if (lim->max_pixels && pixels > lim->max_pixels) {
        return ic__set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                            "%s: image is %ux%u (%llu pixels), over the limit of %llu pixels",
                            name, width, height, (unsigned long long)pixels,
                            (unsigned long long)lim->max_pixels);
    }
    if (lim->max_frames && frames > lim->max_frames) {
        return ic__set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                            "%s: animation has %u frames, over the limit of %u", name, frames,
                            lim->max_frames);
    }
    d->source_width = width;
    d->source_height = height;
    plan(d, width, height);
    if (!frames) frames = 1;
    uint64_t bytes = (uint64_t)ic__stride_for_width(d->plan.out_w) * d->plan.out_h * frames;
    if (ic__dec_plans_resize(d)) {
        bytes += ic__scaler_bytes(width, height, &d->plan.crop, d->plan.out_w, d->plan.out_h) +
                 (uint64_t)IC_SINK_ROWS * ic__stride_for_width(width);
    }
    if (lim->max_memory_bytes &&
        (bytes > lim->max_memory_bytes || extra_bytes > lim->max_memory_bytes - bytes ||
         d->budget.current > lim->max_memory_bytes - bytes - extra_bytes)) {
        return ic__set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                            "%s: decoding %ux%u x %u frame(s) needs %.1f MiB, over the memory "
                            "limit of %.1f MiB",
                            name, width, height, frames,
                            ic__mib(bytes + extra_bytes + d->budget.current),
                            ic__mib(lim->max_memory_bytes));
    }
    return IC_OK;
}

ic_status ic__dec_buffer_alloc(ic__decoder *d, size_t size, ic__dec_buffer *buf) {
    memset(buf, 0, sizeof *buf);
    ic_status st = ic__dec_reserve(d, size);
    if (st != IC_OK) return st;
    buf->p = ic__buffer_alloc(d->opts.pool, size, &buf->kind, &buf->capacity);
    if (!buf->p) {
        ic__dec_release(d, size);
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes",
                            ic_format_name(d->format), size);
    }
    buf->size = size;
    return IC_OK;
}

void ic__dec_buffer_free(ic__decoder *d, ic__dec_buffer *buf) {
    if (!buf->p) return;
    ic__buffer_free(d->opts.pool, buf->p, buf->capacity, buf->kind);
    ic__dec_release(d, buf->size);
    memset(buf, 0, sizeof *buf);
}

/* Smallest image whose conversion gets a helper thread. */
#define HELPER_MIN_PIXELS IC_HELPER_MIN_PIXELS(1u << 18)

/* Converts and, with `straight_alpha`, premultiplies one codec row; false if not opaque. */
static bool finish_row(const ic__decoder *d, uint8_t *row, bool straight_alpha) {
    if (ic__color_sink_converts(&d->color)) ic__color_convert_row(&d->color, row, d->codec_width);
    return !straight_alpha || ic_premultiply_row(row, d->codec_width);
}

/* The helper's work: rows [begin, end) of the single frame, in the output (direct mode). */
static void helper_rows(void *ctx, uint32_t begin, uint32_t end) {
    ic__decoder *d = ctx;
    for (uint32_t y = begin; y < end; y++) {
        if (!finish_row(d, ic__dec_row(d, 0, y), d->helper_straight)) {
            __atomic_store_n(&d->helper_transparent, 1, __ATOMIC_RELAXED);
        }
    }
}

/* Ends the helper thread, after its work (`complete`) or abandoning it. */
static void end_helper(ic__decoder *d, bool complete) {
    if (!d->helper) return;
    ic__range_helper_finish(d->helper, complete);
    d->helper = NULL;
    if (__atomic_load_n(&d->helper_transparent, __ATOMIC_RELAXED)) d->all_opaque = false;
}

ic_status ic__dec_begin(ic__decoder *d, uint32_t width, uint32_t height, uint32_t frames) {
    d->codec_width = width;
    d->codec_height = height;
    const ic__geometry *g = &d->plan;
    /* The planned region in codec pixels (the codec may have shrunk on load). */
    double sx = (double)width / d->source_width, sy = (double)height / d->source_height;
    ic__rect crop = {g->crop.x * sx, g->crop.y * sy, g->crop.w * sx, g->crop.h * sy};
    bool direct = g->out_w == width && g->out_h == height && crop.x == 0 && crop.y == 0 &&
                  crop.w == width && crop.h == height;
    ic_status st;
    if (!direct) {
        uint64_t bytes = ic__scaler_bytes(width, height, &crop, g->out_w, g->out_h);
        st = ic__dec_reserve(d, bytes);
        if (st != IC_OK) return st;
        st = ic__scaler_create(width, height, &crop, g->out_w, g->out_h, &d->scaler, d->err);
        if (st != IC_OK) {
            ic__dec_release(d, bytes);
            return st;
        }
        d->scaler_bytes = bytes;
        d->scratch_stride = ic__stride_for_width(width);
        st = ic__dec_buffer_alloc(d, d->scratch_stride * IC_SINK_ROWS, &d->scratch);
        if (st != IC_OK) return st;
    }
    size_t bytes = ic__stride_for_width(g->out_w) * (size_t)g->out_h * frames;
    st = ic__dec_reserve(d, bytes);
    if (st != IC_OK) return st;
    st = ic__image_create_in(d->opts.pool, g->out_w, g->out_h, frames, &d->image, d->err);
    if (st != IC_OK) {
        ic__dec_release(d, bytes);
        return st;
    }
    d->all_opaque = true;
    /* A helper thread for the colour conversion: worth its start (tens of microseconds) only
     * on large images, and one frame (direct-mode rows of animations come in any order). */
    if (direct && d->opts.use_helper_thread && frames == 1 && ic__color_sink_converts(&d->color) &&
        height >= 4 * IC_HELPER_ROWS && (uint64_t)width * height >= HELPER_MIN_PIXELS) {
        d->helper = ic__range_helper_start(helper_rows, d, 0, IC_HELPER_ROWS);
    }
    return IC_OK;
}

/* Feeds one codec row to the resampler: premultiplied, or (`straight_alpha`) premultiplied
 * by the resampler as it reads it. */
static void feed(ic__decoder *d, uint32_t frame, uint32_t y, const uint8_t *row,
                 bool straight_alpha) {
    if (d->sink_frame != frame + 1) {
        ic__scaler_begin_frame(d->scaler, ic_image_frame(d->image, frame), d->image->stride);
        d->sink_frame = frame + 1;
    }
    if (straight_alpha) {
        ic__scaler_push_straight(d->scaler, y, row);
    } else {
        ic__scaler_push(d->scaler, y, row);
    }
}

void ic__dec_rows_done(ic__decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                      bool straight_alpha) {
    /* Rows that continue what the helper has: its work (one alpha treatment throughout). */
    if (d->helper && y == ic__range_helper_ready(d->helper) &&
        (y == 0 || straight_alpha == d->helper_straight)) {
        if (y == 0) d->helper_straight = straight_alpha;
        ic__range_helper_extend(d->helper, y + count);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint8_t *row = ic__dec_row(d, frame, y + i);
        if (!d->scaler) {
            if (!finish_row(d, row, straight_alpha)) d->all_opaque = false;
            continue;
        }
        /* ic__dec_finish takes the opacity from the resampled output. */
        if (ic__color_sink_converts(&d->color)) ic__color_convert_row(&d->color, row, d->codec_width);
        feed(d, frame, y + i, row, straight_alpha);
    }
}

/* Hands one codec row from the decoder's own buffer to the resampler (read in place when it
 * needs no colour conversion) or to the output. */
static void put_row(ic__decoder *d, uint32_t frame, uint32_t y, const uint8_t *from, bool straight_alpha) {
    if (d->scaler && !ic__color_sink_converts(&d->color)) {
        feed(d, frame, y, from, straight_alpha);
        return;
    }
    memcpy(ic__dec_row(d, frame, y), from, (size_t)d->codec_width * 4);
    ic__dec_rows_done(d, frame, y, 1, straight_alpha);
}

/* With use_helper_thread, resamples the only frame, handed over whole (src: its first row),
 * in bands of output rows on two threads (ic__scaler_run_bands: the pixels of one thread's
 * pass) when it is large enough and needs no colour conversion; false when it does not (or
 * the second scaler, its memory or the thread cannot be had), with nothing written. */
static bool resample_in_bands(ic__decoder *d, const uint8_t *src, size_t stride, bool straight_alpha) {
    if (!d->opts.use_helper_thread || d->image->frame_count != 1 || d->sink_frame != 0 ||
        ic__color_sink_converts(&d->color)) {
        return false;
    }
    uint32_t bands = ic__scaler_helper_bands(d->scaler);
    uint64_t bytes = ic__scaler_fork_bytes(d->scaler);
    if (!bands || !ic__dec_try_reserve(d, bytes)) return false;
    ic__scaler *fork;
    bool done = ic__scaler_fork(d->scaler, &fork, NULL) == IC_OK;
    if (done) {
        done = ic__scaler_run_bands(d->scaler, fork, src, stride, straight_alpha,
                                   ic_image_frame(d->image, 0), d->image->stride, bands, true);
        ic__scaler_free(fork);
    }
    ic__dec_release(d, bytes);
    if (done) d->sink_frame = 1;
    return done;
}

void ic__dec_put_rows(ic__decoder *d, uint32_t frame, uint32_t y, uint32_t count,
                     const uint8_t *src, size_t stride, bool straight_alpha) {
    if (d->scaler && frame == 0 && y == 0 && count == d->codec_height &&
        resample_in_bands(d, src, stride, straight_alpha)) {
        return;
    }
    for (uint32_t i = 0; i < count; i++) put_row(d, frame, y + i, src + (size_t)i * stride, straight_alpha);
}

ic_status ic__dec_frame_alloc(ic__decoder *d, size_t stride, uint32_t height, uint8_t **rows) {
    ic_status st = ic__dec_buffer_alloc(d, stride * height, &d->frame);
    d->frame_stride = stride;
    *rows = d->frame.p;
    return st;
}

/* The resampler thread's work: rows [begin, end) of the frame, in order, on one thread. */
static void resample_rows(void *ctx, uint32_t begin, uint32_t end) {
    ic__decoder *d = ctx;
    for (uint32_t y = begin; y < end; y++) {
        put_row(d, 0, y, d->frame.p + (size_t)y * d->frame_stride, d->resampler_straight);
    }
    __atomic_store_n(&d->resampled_rows, ic__scaler_rows_written(d->scaler), __ATOMIC_RELEASE);
}

/* Ends the resampler thread: after it has fed every row handed over (`complete`), or after
 * its current chunk (a failed decode). */
static void end_resampler(ic__decoder *d, bool complete) {
    if (!d->resampler) return;
    if (complete) {
        ic__range_helper_drain(d->resampler);
    } else {
        ic__range_helper_finish(d->resampler, false);
    }
    d->resampler = NULL;
}

void ic__dec_put_frame_rows(ic__decoder *d, uint32_t y, uint32_t count, bool straight_alpha) {
    /* A first piece that is not the whole frame: a thread for the resampler, if the frame
     * pays for its start (the same measure as for bands). */
    if (d->scaler && !d->resampler && d->opts.use_helper_thread && y == 0 && count < d->codec_height &&
        d->image->frame_count == 1 && d->sink_frame == 0 && ic__scaler_helper_bands(d->scaler)) {
        d->resampler_straight = straight_alpha;
        d->resampler = ic__range_helper_start(resample_rows, d, 0, IC_HELPER_ROWS);
    }
    if (d->resampler && y == ic__range_helper_ready(d->resampler) &&
        straight_alpha == d->resampler_straight) {
        ic__range_helper_extend(d->resampler, y + count);
        return;
    }
    /* Rows that do not continue the helper's: fed here, after the helper's. */
    end_resampler(d, true);
    ic__dec_put_rows(d, 0, y, count, d->frame.p + (size_t)y * d->frame_stride, d->frame_stride,
                    straight_alpha);
}

void ic__dec_frame_wait(ic__decoder *d) { end_resampler(d, true); }

uint32_t ic__dec_rows_complete(const ic__decoder *d, uint32_t codec_rows) {
    if (d->resampler) return __atomic_load_n(&d->resampled_rows, __ATOMIC_ACQUIRE);
    uint32_t done = d->scaler ? ic__scaler_rows_written(d->scaler) : codec_rows;
    /* Rows the colour helper converts to sRGB are complete once it has converted them. */
    if (d->helper) {
        uint32_t converted = ic__range_helper_done(d->helper);
        if (converted < done) done = converted;
    }
    return done;
}

void ic__dec_sink_free(ic__decoder *d) {
    end_helper(d, false);
    end_resampler(d, false);
    if (d->scaler) {
        ic__scaler_free(d->scaler);
        d->scaler = NULL;
        ic__dec_release(d, d->scaler_bytes);
        d->scaler_bytes = 0;
    }
    ic__dec_buffer_free(d, &d->scratch);
    ic__dec_buffer_free(d, &d->frame);
}

void ic__dec_unbegin(ic__decoder *d) {
    ic__dec_sink_free(d);
    if (d->image) {
        ic__dec_release(d, ic_image_byte_count(d->image));
        ic_image_free(d->image);
        d->image = NULL;
    }
    d->codec_width = d->codec_height = 0;
    d->sink_frame = 0;
    d->all_opaque = false;
    d->helper_straight = false;
    d->helper_transparent = 0;
    d->resampler_straight = false;
    d->resampled_rows = 0;
}

ic_status ic__dec_finish(ic__decoder *d) {
    end_helper(d, true);
    end_resampler(d, true);
    bool resampled = d->scaler != NULL;
    bool complete = !resampled || (d->sink_frame == d->image->frame_count && ic__scaler_done(d->scaler));
    ic__dec_sink_free(d);
    if (!complete) {
        return ic__set_error(d->err, IC_ERR_INTERNAL, "%s: the decoder delivered too few rows",
                            ic_format_name(d->format));
    }
    if (resampled) {
        ic__image_update_opacity(d->image);
        d->all_opaque = d->image->is_opaque;
    }
    return IC_OK;
}
