/*
 * hevc_sps.c — the picture size an HEVC sequence parameter set declares (ITU-T H.265
 * 7.3.2.2), read as libde265 1.0 reads it: libde265 allocates the picture (its planes and
 * its per-block metadata) at that size, whatever the HEIF item's ispe says, and libheif
 * then converts the whole decoded picture. heif.c checks this size against the limits
 * before libheif decodes. Also the part libde265 puts out (the conformance window), which
 * must fill a grid's tile (heif_boxes.c).
 *
 * The NAL's payload is read with its emulation-prevention bytes (00 00 03) removed; bits
 * past the end read as zeros and an Exp-Golomb code with more than 20 leading zeros is
 * refused, both as in libde265, so a parameter set this reader refuses is one libde265
 * refuses too (and then decodes nothing with it).
 */
#include "ic_heif_internal.h"

/* The NAL unit type of a sequence parameter set. */
#define NAL_SPS 33

typedef struct bit_reader {
    uint8_t rbsp[IC_HEVC_SPS_BYTES]; /* enough up to the picture size: 7 sub-layers of 96 bits,
                                      * four Exp-Golomb codes of up to 41 bits */
    size_t bytes;
    size_t at; /* in bits */
} bit_reader;

static uint32_t read_bits(bit_reader *r, unsigned count) {
    uint32_t v = 0;
    for (unsigned i = 0; i < count; i++, r->at++) {
        size_t byte = r->at >> 3;
        unsigned bit = byte < r->bytes ? (r->rbsp[byte] >> (7 - (r->at & 7))) & 1 : 0;
        v = v << 1 | bit;
    }
    return v;
}

static void skip_bits(bit_reader *r, unsigned count) { r->at += count; }

/* An unsigned Exp-Golomb code; false with more than 20 leading zeros (libde265's limit). */
static bool read_ue(bit_reader *r, uint32_t *v) {
    unsigned zeros = 0;
    while (read_bits(r, 1) == 0) {
        if (++zeros > 20) return false;
    }
    *v = zeros ? read_bits(r, zeros) + ((1u << zeros) - 1) : 0;
    return true;
}

bool ic__hevc_sps_picture(const uint8_t *nal, size_t size, ic__hevc_picture *out) {
    if (size < 3 || ((nal[0] >> 1) & 0x3F) != NAL_SPS) return false;
    bit_reader r = {.bytes = 0, .at = 0};
    /* libde265 removes them over the whole NAL: the header's second byte may begin a 00 00. */
    unsigned zeros = nal[1] == 0 ? 1 : 0;
    for (size_t i = 2; i < size && r.bytes < sizeof r.rbsp; i++) {
        if (zeros >= 2 && nal[i] == 3) {
            zeros = 0;
            continue;
        }
        zeros = nal[i] == 0 ? zeros + 1 : 0;
        r.rbsp[r.bytes++] = nal[i];
    }
    skip_bits(&r, 4); /* sps_video_parameter_set_id */
    unsigned sub_layers = read_bits(&r, 3) + 1;
    if (sub_layers > 7) return false;
    skip_bits(&r, 1); /* sps_temporal_id_nesting_flag */
    /* profile_tier_level: the general profile (88 bits) and level (8), then each sub-layer's
     * two presence flags, padding to 8 sub-layers, and the profiles and levels present. */
    skip_bits(&r, 96);
    bool profile[7] = {false}, level[7] = {false};
    for (unsigned i = 0; i + 1 < sub_layers; i++) {
        profile[i] = read_bits(&r, 1) != 0;
        level[i] = read_bits(&r, 1) != 0;
    }
    if (sub_layers > 1) skip_bits(&r, 2 * (8 - (sub_layers - 1)));
    for (unsigned i = 0; i + 1 < sub_layers; i++) {
        skip_bits(&r, (profile[i] ? 88 : 0) + (level[i] ? 8 : 0));
    }
    uint32_t id, chroma, width, height;
    if (!read_ue(&r, &id) || id >= 16 || !read_ue(&r, &chroma) || chroma > 3) return false;
    if (chroma == 3) skip_bits(&r, 1); /* separate_colour_plane_flag */
    if (!read_ue(&r, &width) || !read_ue(&r, &height)) return false;
    if (width == 0 || height == 0 || width > 65535 || height > 65535) return false;
    /* The conformance window, in chroma samples: what libde265 puts out is the picture less
     * the window's offsets (none left when they reach past it). */
    uint32_t left = 0, right = 0, top = 0, bottom = 0;
    if (read_bits(&r, 1) &&
        (!read_ue(&r, &left) || !read_ue(&r, &right) || !read_ue(&r, &top) || !read_ue(&r, &bottom))) {
        return false;
    }
    uint64_t unit_x = chroma == 1 || chroma == 2 ? 2 : 1, unit_y = chroma == 1 ? 2 : 1;
    uint64_t cut_x = unit_x * ((uint64_t)left + right), cut_y = unit_y * ((uint64_t)top + bottom);
    out->width = width;
    out->height = height;
    out->visible_width = cut_x < width ? (uint32_t)(width - cut_x) : 0;
    out->visible_height = cut_y < height ? (uint32_t)(height - cut_y) : 0;
    out->chroma_format = (uint8_t)chroma;
    return true;
}
