/*
 * ic_dec_color.h — a decode's colour steps, as the format decoders call them: color/'s
 * functions on the decoder's own colour state and memory budget (color/ never sees
 * the decoder). Not installed.
 */
#ifndef IC_DEC_COLOR_H
#define IC_DEC_COLOR_H

#include <stddef.h>
#include <stdint.h>

#include "../color/ic_color_internal.h"
#include "ic_decoder.h"

/** Keeps a copy of the profile `icc` for the decode (see ic__color_state_take_profile). */
static inline void ic__color_take_profile(ic__decoder *d, const uint8_t *icc, size_t size) {
    ic__color_state_take_profile(&d->color, &d->budget, icc, size);
}

/** Takes the colour CICP code points signal (see ic__color_state_take_cicp). */
static inline void ic__color_take_cicp(ic__decoder *d, uint16_t primaries, uint16_t transfer) {
    ic__color_state_take_cicp(&d->color, &d->budget, primaries, transfer);
}

/** Reassembles and keeps a JPEG's profile (see ic__color_state_take_jpeg_chunks). */
static inline void ic__color_take_jpeg_chunks(ic__decoder *d, const ic__icc_chunk *chunks, size_t n) {
    ic__color_state_take_jpeg_chunks(&d->color, &d->budget, chunks, n);
}

/** Marks the decode's profile as present but unusable. */
static inline void ic__color_ignore(ic__decoder *d) { ic__color_state_ignore(&d->color); }

/** Chooses what happens to the pixels under the decode's colour mode (see ic__color_state_prepare). */
static inline void ic__color_prepare(ic__decoder *d, ic_color_input input) {
    ic__color_state_prepare(&d->color, d->opts.color_mode, input);
}

/** Moves the profile and the colour facts onto the output image (see ic__color_state_finish). */
static inline void ic__color_finish(ic__decoder *d, ic_image *image) {
    ic__color_state_finish(&d->color, &d->budget, image);
}

/** Releases the decode's colour state (after a failure). */
static inline void ic__color_free(ic__decoder *d) { ic__color_state_free(&d->color, &d->budget); }

#endif /* IC_DEC_COLOR_H */
