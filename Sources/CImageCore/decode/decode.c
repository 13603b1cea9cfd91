/*
 * decode.c — the decode and probe entry points: limits, memory accounting,
 * cancellation, and the EXIF orientation applied last.
 */
#include <stdlib.h>
#include <string.h>

#include "ic_op_attention.h"

#include "ic_dec_color.h"
#include "ic_decoder.h"
#include "ic_formats.h"
#include "ic_sink.h"
#include "ic_transform.h"

void ic_limits_init(ic_limits *limits) {
    limits->max_pixels = IC_DEFAULT_MAX_PIXELS;
    limits->max_frames = IC_DEFAULT_MAX_FRAMES;
    limits->max_input_bytes = IC_DEFAULT_MAX_INPUT_BYTES;
    limits->max_memory_bytes = IC_DEFAULT_MAX_MEMORY_BYTES;
}

void ic_decode_options_init(ic_decode_options *options) {
    memset(options, 0, sizeof *options);
    ic_limits_init(&options->limits);
}

void ic_cancel_flag_set(int *flag, int value) { __atomic_store_n(flag, value, __ATOMIC_RELEASE); }

int ic_cancel_flag_get(const int *flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }

bool ic__dec_cancelled(const ic__decoder *d) { return ic__budget_cancelled(&d->budget); }

ic_status ic__dec_fail_cancelled(ic__decoder *d) {
    return ic__set_error(d->err, IC_ERR_CANCELLED, "%s: decode cancelled", ic_format_name(d->format));
}

bool ic__dec_try_reserve(ic__decoder *d, uint64_t bytes) { return ic__budget_try_charge(&d->budget, bytes); }

ic_status ic__dec_reserve(ic__decoder *d, uint64_t bytes) {
    if (ic__dec_try_reserve(d, bytes)) return IC_OK;
    return ic__set_error(d->err, IC_ERR_LIMIT_EXCEEDED,
                        "%s: decoding needs more than the memory limit of %.1f MiB",
                        ic_format_name(d->format), ic__mib(d->opts.limits.max_memory_bytes));
}

void ic__dec_release(ic__decoder *d, uint64_t bytes) { ic__budget_refund(&d->budget, bytes); }

void *ic__dec_malloc(ic__decoder *d, size_t size) {
    if (ic__dec_reserve(d, size) != IC_OK) return NULL;
    void *p = malloc(size ? size : 1);
    if (!p) {
        ic__dec_release(d, size);
        ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes",
                     ic_format_name(d->format), size);
    }
    return p;
}

void ic__dec_free(ic__decoder *d, void *p, size_t size) { ic__budget_free(&d->budget, p, size); }

static void free_output(ic__decoder *d) {
    ic__dec_sink_free(d);
    ic__color_free(d);
    if (d->image) {
        ic__dec_release(d, ic_image_byte_count(d->image));
        ic_image_free(d->image);
        d->image = NULL;
    }
}

/* Replaces d->image by a copy with EXIF orientation `orientation` applied. */
static ic_status apply_orientation(ic__decoder *d, uint8_t orientation) {
    const ic_image *img = d->image;
    uint32_t dw = orientation >= 5 ? img->height : img->width;
    uint32_t dh = orientation >= 5 ? img->width : img->height;
    uint64_t bytes = (uint64_t)ic__stride_for_width(dw) * dh * img->frame_count;
    ic_status st = ic__dec_reserve(d, bytes);
    if (st != IC_OK) return st;
    ic_image *oriented;
    st = ic_image_orient(d->image, (ic_orientation)orientation, &oriented, d->err);
    if (st != IC_OK) {
        ic__dec_release(d, bytes);
        return st;
    }
    ic__dec_release(d, ic_image_byte_count(d->image));
    ic_image_free(d->image);
    d->image = oriented;
    return IC_OK;
}

static ic_status unsupported(ic_error *err, ic_format f) {
    if (f == IC_FORMAT_UNKNOWN) {
        return ic__set_error(err, IC_ERR_UNKNOWN_FORMAT,
                            "unknown format: the data is not JPEG, PNG, GIF, WebP, AVIF, HEIF/HEIC or JPEG XL");
    }
    return ic__set_error(err, IC_ERR_UNSUPPORTED_FORMAT, "unsupported format: %s",
                        ic_format_name(f));
}

/* Cuts a FILL thumbnail's window from the upright, covering output (ic__dec_cuts_window). */
static ic_status cut_window(ic__decoder *d) {
    const ic_decode_options *o = &d->opts;
    ic_image *window;
    ic_status st = ic_crop_placed(d->image, o->thumbnail_width, o->thumbnail_height,
                                  o->thumbnail_smart ? NULL : &o->thumbnail_gravity, o->cancel_flag,
                                  &window, d->err);
    if (st != IC_OK) return st;
    if (window->is_opaque) d->all_opaque = 1;
    ic_image_free(d->image);
    d->image = window;
    return IC_OK;
}

void ic__dec_init(ic__decoder *d, const ic_decode_options *options, ic_error *err) {
    memset(d, 0, sizeof *d);
    if (options) {
        d->opts = *options;
    } else {
        ic_decode_options_init(&d->opts);
    }
    d->err = err;
    d->orientation = 1;
    ic__budget_init(&d->budget, d->opts.limits.max_memory_bytes, d->opts.cancel_flag);
}

ic_status ic__dec_complete(ic__decoder *d, ic_status st, ic_image **out, ic_decode_stats *stats) {
    ic_error *err = d->err;
    if (st == IC_OK && !d->image) {
        st = ic__set_error(err, IC_ERR_INTERNAL, "%s: decoder produced no image",
                          ic_format_name(d->format));
    }
    if (st == IC_OK) st = ic__dec_finish(d);
    if (st == IC_OK && d->orientation > 1 && !d->opts.keep_orientation && !d->codec_oriented) {
        st = apply_orientation(d, d->orientation);
    }
    if (st == IC_OK && ic__dec_cuts_window(d)) st = cut_window(d);
    if (st != IC_OK) {
        free_output(d);
        if (err && err->code == IC_OK) {
            ic__set_error(err, st, "%s: %s", ic_format_name(d->format), ic_status_name(st));
        }
        return st;
    }
    ic_image *img = d->image;
    d->image = NULL;
    img->source_format = d->format;
    img->source_width = d->source_width;
    img->source_height = d->source_height;
    img->orientation = d->orientation;
    img->orientation_applied = d->orientation > 1 && !d->opts.keep_orientation;
    img->is_opaque = d->all_opaque;
    img->loop_count = d->loop_count;
    ic__color_finish(d, img);
    if (stats) {
        stats->peak_bytes = d->budget.peak;
        stats->codec_width = d->codec_width;
        stats->codec_height = d->codec_height;
        stats->helper_rows = d->helper_rows;
    }
    ic__clear_error(err);
    *out = img;
    return IC_OK;
}

void ic__dec_abandon(ic__decoder *d) { free_output(d); }

static ic_status decode_with(const uint8_t *data, size_t size, const ic_decode_options *options,
                             ic_png_path png_path, ic_jpeg_path jpeg_path, ic_image **out,
                             ic_decode_stats *stats, ic_error *err) {
    ic__clear_error(err);
    if (stats) memset(stats, 0, sizeof *stats);
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "decode: NULL output pointer");
    *out = NULL;
    if (!data || size == 0) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "decode: no data");

    ic__decoder d;
    ic__dec_init(&d, options, err);
    d.data = data;
    d.size = size;
    d.format = ic_sniff(data, size);
    d.png_path = png_path;
    d.jpeg_path = jpeg_path;

    if (d.opts.limits.max_input_bytes && size > d.opts.limits.max_input_bytes) {
        return ic__set_error(err, IC_ERR_LIMIT_EXCEEDED,
                            "%s: input is %zu bytes, over the limit of %llu bytes",
                            d.format == IC_FORMAT_UNKNOWN ? "decode" : ic_format_name(d.format),
                            size, (unsigned long long)d.opts.limits.max_input_bytes);
    }

    ic_status st;
    switch (d.format) {
    case IC_FORMAT_JPEG: st = ic__jpeg_decode(&d); break;
    case IC_FORMAT_PNG: st = ic__png_decode(&d); break;
    case IC_FORMAT_GIF: st = ic__gif_decode(&d); break;
    case IC_FORMAT_WEBP: st = ic__webp_decode(&d); break;
    case IC_FORMAT_AVIF: st = ic__avif_decode(&d); break;
    case IC_FORMAT_HEIC:
    case IC_FORMAT_HEIF: st = ic__heif_decode(&d); break;
    case IC_FORMAT_JXL: st = ic__jxl_decode(&d); break;
    default: return unsupported(err, d.format);
    }
    return ic__dec_complete(&d, st, out, stats);
}

ic_status ic_decode(const uint8_t *data, size_t size, const ic_decode_options *options,
                    ic_image **out, ic_decode_stats *stats, ic_error *err) {
    return decode_with(data, size, options, IC_PNG_PATH_AUTO, IC_JPEG_PATH_AUTO, out, stats, err);
}

ic_status ic_decode_png_path(const uint8_t *data, size_t size, const ic_decode_options *options,
                             ic_png_path path, ic_image **out, ic_decode_stats *stats,
                             ic_error *err) {
    return decode_with(data, size, options, path, IC_JPEG_PATH_AUTO, out, stats, err);
}

ic_status ic_decode_jpeg_path(const uint8_t *data, size_t size, const ic_decode_options *options,
                              ic_jpeg_path path, ic_image **out, ic_decode_stats *stats,
                              ic_error *err) {
    return decode_with(data, size, options, IC_PNG_PATH_AUTO, path, out, stats, err);
}

ic_status ic_probe(const uint8_t *data, size_t size, ic_info *info, ic_error *err) {
    ic__clear_error(err);
    if (!info) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "probe: NULL info pointer");
    memset(info, 0, sizeof *info);
    if (!data || size == 0) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "probe: no data");
    ic_format f = ic_sniff(data, size);
    info->format = f;
    info->orientation = 1;
    info->frame_count = 1;
    info->bit_depth = 8;
    switch (f) {
    case IC_FORMAT_JPEG: return ic__jpeg_probe(data, size, info, err);
    case IC_FORMAT_PNG: return ic__png_probe(data, size, info, err);
    case IC_FORMAT_GIF: return ic__gif_probe(data, size, info, err);
    case IC_FORMAT_WEBP: return ic__webp_probe(data, size, info, err);
    case IC_FORMAT_AVIF: return ic__avif_probe(data, size, info, err);
    case IC_FORMAT_HEIC:
    case IC_FORMAT_HEIF: return ic__heif_probe(data, size, info, err);
    case IC_FORMAT_JXL: return ic__jxl_probe(data, size, info, err);
    default: return unsupported(err, f);
    }
}
