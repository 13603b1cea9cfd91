/* trim.c — the bounding box of what differs from the background, found with rows scanned in
 * 16-pixel chunks (top and bottom rows whole, the rows between only from each end up to the
 * box found so far), then the crop to it. */
#include <math.h>

#include "ic_op_trim.h"

#include "ic_color_ops_internal.h"
#include "ic_resize.h"

/* Pixels in one chunk of a scan, and its bytes. */
#define CHUNK_PIXELS 16u
#define CHUNK_BYTES (4 * CHUNK_PIXELS)

/* The samples a background pixel's neighbours may have, repeated over a chunk: a sample s
 * differs when s < lo or s > hi. */
typedef struct trim_range {
    uint8_t lo[CHUNK_BYTES], hi[CHUNK_BYTES];
} trim_range;

/* Nonzero when one of `bytes` samples (a multiple of 4, at most CHUNK_BYTES) is out of range. */
static inline int chunk_differs(const uint8_t *restrict p, const trim_range *restrict r, size_t bytes) {
    uint8_t any = 0;
    for (size_t i = 0; i < bytes; i++) any |= (uint8_t)((p[i] < r->lo[i]) | (p[i] > r->hi[i]));
    return any;
}

/* The first pixel in [from, to) of `row` that differs, or `to`. */
static uint32_t first_differing(const uint8_t *row, uint32_t from, uint32_t to, const trim_range *r) {
    uint32_t x = from;
    while (to - x >= CHUNK_PIXELS && !chunk_differs(row + 4 * (size_t)x, r, CHUNK_BYTES)) x += CHUNK_PIXELS;
    for (; x < to; x++) {
        if (chunk_differs(row + 4 * (size_t)x, r, 4)) return x;
    }
    return to;
}

/* The last pixel in [from, to) of `row` that differs, or `to` when none does. */
static uint32_t last_differing(const uint8_t *row, uint32_t from, uint32_t to, const trim_range *r) {
    uint32_t end = to;
    while (end - from >= CHUNK_PIXELS &&
           !chunk_differs(row + 4 * (size_t)(end - CHUNK_PIXELS), r, CHUNK_BYTES)) {
        end -= CHUNK_PIXELS;
    }
    while (end > from) {
        end--;
        if (chunk_differs(row + 4 * (size_t)end, r, 4)) return end;
    }
    return to;
}

/* The box found so far over the frames: rows [top, bottom), columns [left, right); empty
 * while top == height. */
typedef struct trim_state {
    uint32_t top, bottom, left, right;
} trim_state;

/* True, on the first row and every IC_OP_CANCEL_ROWS rows after (counted in *rows), once the
 * caller has cancelled. */
static bool cancel_due(const int *cancel_flag, uint32_t *rows) {
    return cancel_flag && (*rows)++ % IC_OP_CANCEL_ROWS == 0 && ic_cancel_flag_get(cancel_flag);
}

/* Widens `s` by the differing pixels of one frame. False, with the error set, when cancelled. */
static bool scan_frame(const uint8_t *pixels, size_t stride, uint32_t width, uint32_t height,
                       const trim_range *r, const int *cancel_flag, trim_state *s, ic_error *err) {
    uint32_t rows = 0;
    for (uint32_t y = 0; y < s->top; y++) {
        if (cancel_due(cancel_flag, &rows)) goto cancelled;
        if (first_differing(pixels + (size_t)y * stride, 0, width, r) < width) {
            s->top = y;
            break;
        }
    }
    if (s->top == height) return true; /* nothing differs in any frame so far */
    for (uint32_t y = height; y > s->bottom; y--) {
        if (cancel_due(cancel_flag, &rows)) goto cancelled;
        if (first_differing(pixels + (size_t)(y - 1) * stride, 0, width, r) < width) {
            s->bottom = y;
            break;
        }
    }
    for (uint32_t y = s->top; y < s->bottom && (s->left > 0 || s->right < width); y++) {
        if (cancel_due(cancel_flag, &rows)) goto cancelled;
        const uint8_t *row = pixels + (size_t)y * stride;
        uint32_t x = first_differing(row, 0, s->left, r);
        if (x < s->left) s->left = x;
        uint32_t from = s->right > s->left ? s->right : s->left;
        x = last_differing(row, from, width, r);
        if (x < width) s->right = x + 1;
    }
    return true;
cancelled:
    ic__set_error(err, IC_ERR_CANCELLED, "trim: cancelled");
    return false;
}

ic_status ic_find_trim(const ic_image *src, double threshold, const uint8_t *background,
                       const int *cancel_flag, ic_trim_box *box, ic_error *err) {
    if (!src || !box) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "trim: NULL argument");
    *box = (ic_trim_box){0, 0, 0, 0};
    if (!(threshold >= 0 && threshold <= IC_TRIM_MAX_THRESHOLD)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "trim: the threshold %g is not within 0...%g",
                            threshold, IC_TRIM_MAX_THRESHOLD);
    }
    const uint8_t *bg = background ? background : src->pixels;
    /* Samples are integers: a difference above t is one above floor(t). */
    int t = (int)floor(threshold);
    trim_range r;
    for (size_t i = 0; i < CHUNK_BYTES; i++) {
        int b = bg[i % 4];
        r.lo[i] = (uint8_t)(b - t < 0 ? 0 : b - t);
        r.hi[i] = (uint8_t)(b + t > 255 ? 255 : b + t);
    }
    trim_state s = {src->height, 0, src->width, 0};
    for (uint32_t f = 0; f < src->frame_count; f++) {
        if (!scan_frame(ic_image_frame(src, f), src->stride, src->width, src->height, &r, cancel_flag, &s, err)) {
            return IC_ERR_CANCELLED;
        }
    }
    if (s.top < s.bottom) *box = (ic_trim_box){s.left, s.top, s.right - s.left, s.bottom - s.top};
    return IC_OK;
}

ic_status ic_trim(const ic_image *src, double threshold, const uint8_t *background, const int *cancel_flag,
                  ic_image **out, ic_error *err) {
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "trim: NULL argument");
    *out = NULL;
    ic_trim_box box;
    ic_status st = ic_find_trim(src, threshold, background, cancel_flag, &box, err);
    if (st != IC_OK) return st;
    if (box.width == 0) return ic_crop(src, 0, 0, src->width, src->height, out, err);
    return ic_crop(src, box.x, box.y, box.width, box.height, out, err);
}
