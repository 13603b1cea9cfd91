/*
 * jpeg_dc.c — ImageKit's own DC-only decoder for progressive JPEG thumbnails at 1/8 scale.
 *
 * Why: at 1/8 scale libjpeg-turbo's IDCT reads a block's DC coefficient (and, for a
 * subsampled chroma component scaled 2x2, a few low AC coefficients). A progressive file
 * sends DC first, so jpeg.c stops reading once every component's DC (refinements
 * included) is in. But libjpeg can only do that in buffered-image mode, which allocates
 * and zeroes the whole image's coefficients before the first scan: 51 MB for a 17 MP
 * 4:2:0 photo whose 1/8 output is 0.8 MB of samples. Measured on the benchmark inputs
 * (256 px thumbnails, libjpeg's default progression): 17 MP, 2 MB file: memory counted
 * 51.9 MB -> 0.77 MB, CPU 68 -> 25 ms, callgrind 539M -> 301M instructions; 12 MP: 36.8
 * -> 0.69 MB, 48 -> 18 ms, 382M -> 214M.
 *
 * What it gives: rows bit-identical to jpeg.c's libjpeg path (libjpeg-turbo 2.1, buffered
 * image, jpeg_start_output after the scan that completes the DC): the scans up to that
 * point decoded as jdphuff.c does; libjpeg's block smoothing (jdcoefct.c: low AC
 * coefficients estimated from the 5x5 neighbouring DC values, and the DC itself while a
 * component has no AC data, with its edge and sliding-window rules, its Al clamping and
 * its off switches); the 1x1 reduced IDCT (jidctred.c) and, for a component scaled 2x2
 * (4:2:0 chroma), the arithmetic of libjpeg-turbo's x86-64 SSE2 2x2 IDCT, which it uses
 * unless the environment turns SSE2 off (then, and on other CPUs, such files go to
 * libjpeg): 16-bit dequantisation, 32-bit wrapping sums, saturation; box
 * upsampling (at 1/8 libjpeg never upsamples "fancy") and jdcolor.c's fixed-point
 * YCbCr->RGB tables (its AVX2 code computes the same values for every input: checked
 * exhaustively).
 *
 * What it takes: 8-bit Huffman progressive files, grey (1 component) or YCbCr (3), with
 * sampling factors of 1 or 2 that libjpeg scales to 1x1 or 2x2 blocks at 1/8 (4:4:4,
 * 4:2:2, 4:2:0, 4:4:0 and the like). AC scans that come before the DC is complete (the
 * usual libjpeg script refines the DC after most AC scans) are decoded too: a component
 * scaled 2x2 needs their values, and every scan libjpeg decodes must be checked as it
 * checks it, so that a file libjpeg refuses is refused alike. Scans after the DC is
 * complete are not read.
 *
 * What it gives way on (libjpeg then decodes the file from its first scan, so its answer
 * stands): arithmetic coding, other colour spaces, other sampling, another CPU's 2x2 IDCT,
 * and anything unusual in the data: more than 32 scans before the DC is complete, a
 * progression libjpeg would only warn about, a marker segment it would refuse or that is
 * not a table, restart or APPn/COM segment, bytes between segments, missing tables, a
 * Huffman code that is not in its table, entropy-coded data that ends before its blocks
 * do, restart markers out of order, a DC value that overflows, a file that ends before the
 * DC is complete. The walk decides most of these before anything is decoded; the rest are
 * found while decoding, and the rows already written are then dropped (ic__dec_unbegin).
 *
 * Memory: a window of 3v+3 block rows per component (DC, the AC nonzero history, and for
 * a 2x2 component the 24 AC values its IDCT reads), one iMCU row of samples, and the
 * Huffman tables of at most 32 scans; output rows go to the sink two iMCU rows behind the
 * decoding (the smoothing's window). The scans are decoded in lockstep, one iMCU row of
 * every scan at a time, from bytes held in memory: the whole file for ic_decode; for the
 * incremental decode, the bytes from the first scan to the end of the walk (compressed,
 * they are smaller than any decoded form of those scans: 0.5 MB for the 17 MP file).
 *
 * Files, by layer: dc_bits.h/.c (Huffman tables and the bit reader), dc_markers.c (the
 * walk: marker segments and scan headers), dc_entropy.c (decoding the scans),
 * dc_idct.c (smoothing, reduced IDCTs, upsampling and colour); this file takes a file,
 * sets up and runs them.
 */
#include <stdlib.h>
#include <string.h>

#include "dc_internal.h"

/* Zigzag index -> natural position, with libjpeg's 16 extra entries of 63 (corrupt runs
 * that pass the end of a block store at position 63). */
const uint8_t ic__jpeg_dc_natural[80] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33,
    40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36,
    29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54,
    47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63,
};

/* The 2x2 IDCT reads rows and columns 0, 1, 3, 5 and 7 of a block: its 25 inputs are kept
 * as a 5x5 array, DC first. Index of a row or column there, or -1. */
static const int8_t SUPPORT[8] = {0, 1, -1, 2, -1, 3, -1, 4};

/* ---- Taking a file. ---- */

/* Whether libjpeg-turbo's 2x2 IDCT is its SSE2 kernel, which this file reproduces: on
 * x86-64 always, unless the environment turns SSE2 off (init_simd in its simd/x86_64/jsimd.c:
 * JSIMD_FORCENONE=1, or JSIMD_FORCEAVX2=1, which keeps AVX2 alone); its C kernel differs
 * for coefficients whose dequantised values overflow 16 bits. */
static bool sse2_idct_2x2(void) {
#if defined(__x86_64__)
    const char *none = getenv("JSIMD_FORCENONE"), *avx2 = getenv("JSIMD_FORCEAVX2");
    return !(none && strcmp(none, "1") == 0) && !(avx2 && strcmp(avx2, "1") == 0);
#else
    return false;
#endif
}

/* Window rows of a component: block rows from 2 above the first row an output iMCU row
 * smooths to the last row decoded two iMCU rows later. */
static uint32_t ring_rows(int v) { return 3u * (uint32_t)v + 3u; }

static uint64_t comp_need(const jpeg_component_info *c) {
    int s = c->DCT_scaled_size;
    uint64_t rows = (uint64_t)c->width_in_blocks * s * c->v_samp_factor * s;
    uint64_t per_block = 2 + 8 + (s == 2 ? 48 : 0);
    return rows + (uint64_t)ring_rows(c->v_samp_factor) * c->width_in_blocks * per_block;
}

bool ic__jpeg_dc_takes(j_decompress_ptr cinfo, uint64_t *need, const char **why) {
    *why = NULL;
    if (!cinfo->progressive_mode || cinfo->arith_code) {
        *why = "not a Huffman-coded progressive file";
        return false;
    }
    if (cinfo->data_precision != 8 || cinfo->scale_num != 1 || cinfo->scale_denom != 8 ||
        cinfo->out_color_space != JCS_EXT_RGBA || cinfo->quantize_colors || cinfo->CCIR601_sampling) {
        *why = "not an 8-bit RGBA decode at 1/8";
        return false;
    }
    bool grey = cinfo->num_components == 1 && cinfo->jpeg_color_space == JCS_GRAYSCALE;
    bool ycc = cinfo->num_components == 3 && cinfo->jpeg_color_space == JCS_YCbCr;
    if (!grey && !ycc) {
        *why = "neither greyscale nor YCbCr";
        return false;
    }
    for (int i = 0; i < cinfo->num_components; i++) {
        const jpeg_component_info *c = &cinfo->comp_info[i];
        if (c->h_samp_factor < 1 || c->h_samp_factor > 2 || c->v_samp_factor < 1 ||
            c->v_samp_factor > 2 || c->quant_tbl_no < 0 || c->quant_tbl_no >= 4) {
            *why = "sampling factors other than 1 and 2";
            return false;
        }
        for (int j = 0; j < i; j++) {
            if (cinfo->comp_info[j].component_id == c->component_id) {
                *why = "two components with one identifier";
                return false;
            }
        }
    }
    jpeg_calc_output_dimensions(cinfo);
    if (cinfo->min_DCT_scaled_size != 1 ||
        cinfo->output_width != (cinfo->image_width + 7) / 8 ||
        cinfo->output_height != (cinfo->image_height + 7) / 8) {
        *why = "an unexpected output size";
        return false;
    }
    uint64_t total = sizeof(ic__jpeg_dc) + 8 * sizeof(dc_huff);
    for (int i = 0; i < cinfo->num_components; i++) {
        const jpeg_component_info *c = &cinfo->comp_info[i];
        int s = c->DCT_scaled_size;
        if (s != 1 && s != 2) {
            *why = "a component libjpeg scales by more than 2x2";
            return false;
        }
        if (s == 2 && !sse2_idct_2x2()) {
            *why = "a 2x2-scaled component (only libjpeg-turbo's x86-64 SSE2 2x2 IDCT is reproduced)";
            return false;
        }
        if (cinfo->max_h_samp_factor % (c->h_samp_factor * s) != 0 ||
            cinfo->max_v_samp_factor % (c->v_samp_factor * s) != 0) {
            *why = "fractional upsampling";
            return false;
        }
        total += comp_need(c);
    }
    *need = total;
    return true;
}

/* ---- Setting up. ---- */

ic__jpeg_dc *ic__jpeg_dc_new(ic__decoder *d, j_decompress_ptr cinfo) {
    ic__jpeg_dc *dc = calloc(1, sizeof *dc);
    if (!dc) return NULL;
    dc->d = d;
    dc->ncomp = cinfo->num_components;
    dc->width = cinfo->image_width;
    dc->height = cinfo->image_height;
    dc->out_w = cinfo->output_width;
    dc->out_h = cinfo->output_height;
    dc->max_h = cinfo->max_h_samp_factor;
    dc->max_v = cinfo->max_v_samp_factor;
    dc->imcu_rows = cinfo->total_iMCU_rows;
    dc->mcus_per_row = (dc->width + 8u * (uint32_t)dc->max_h - 1) / (8u * (uint32_t)dc->max_h);
    dc->smoothing_allowed = cinfo->do_block_smoothing;
    for (int i = 0; i < dc->ncomp; i++) {
        const jpeg_component_info *ci = &cinfo->comp_info[i];
        dc_comp *c = &dc->comp[i];
        c->id = ci->component_id;
        c->h = ci->h_samp_factor;
        c->v = ci->v_samp_factor;
        c->qslot = ci->quant_tbl_no;
        c->wib = ci->width_in_blocks;
        c->hib = ci->height_in_blocks;
        c->ssize = ci->DCT_scaled_size;
        c->hexp = dc->max_h / (c->h * c->ssize);
        c->vexp = dc->max_v / (c->v * c->ssize);
        c->ring = ring_rows(c->v);
        for (int k = 0; k < 64; k++) c->coef_bits[k] = -1;
    }
    for (int k = 0; k < 64; k++) {
        int pos = ic__jpeg_dc_natural[k], r = SUPPORT[pos >> 3], col = SUPPORT[pos & 7];
        dc->slot_of_zz[k] = (int8_t)(r < 0 || col < 0 ? 0 : r * 5 + col);
    }
    for (int t = 0; t < 4; t++) {
        if (cinfo->dc_huff_tbl_ptrs[t]) {
            memcpy(dc->hbits[t], cinfo->dc_huff_tbl_ptrs[t]->bits, 17);
            memcpy(dc->hvals[t], cinfo->dc_huff_tbl_ptrs[t]->huffval, 256);
            dc->hdef[t] = true;
        }
        if (cinfo->ac_huff_tbl_ptrs[t]) {
            memcpy(dc->hbits[4 + t], cinfo->ac_huff_tbl_ptrs[t]->bits, 17);
            memcpy(dc->hvals[4 + t], cinfo->ac_huff_tbl_ptrs[t]->huffval, 256);
            dc->hdef[4 + t] = true;
        }
        if (cinfo->quant_tbl_ptrs[t]) {
            memcpy(dc->quant[t], cinfo->quant_tbl_ptrs[t]->quantval, sizeof dc->quant[t]);
            dc->qdef[t] = true;
        }
    }
    dc->restart = (uint16_t)cinfo->restart_interval;
    /* The first scan, whose header libjpeg has read. */
    int comps[4];
    uint8_t tables[4];
    int n = cinfo->comps_in_scan, prev = -1;
    bool ok = n >= 1 && n <= 4;
    for (int i = 0; ok && i < n; i++) {
        const jpeg_component_info *ci = cinfo->cur_comp_info[i];
        comps[i] = ci->component_index;
        tables[i] = (uint8_t)(ci->dc_tbl_no << 4 | ci->ac_tbl_no);
        if (comps[i] <= prev || ci->dc_tbl_no > 15 || ci->ac_tbl_no > 15) ok = false;
        prev = comps[i];
    }
    dc->state = W_ENTROPY;
    if (!ok) {
        ic__jpeg_dc_give_way(dc, "scan components out of frame order");
    } else {
        ic__jpeg_dc_add_scan(dc, n, comps, tables, cinfo->Ss, cinfo->Se, cinfo->Ah, cinfo->Al, 0, false);
    }
    return dc;
}

void ic__jpeg_dc_free(ic__jpeg_dc *dc) {
    if (!dc) return;
    for (int c = 0; c < dc->ncomp; c++) {
        free(dc->comp[c].dcv);
        free(dc->comp[c].nz);
        free(dc->comp[c].ac);
        free(dc->comp[c].rows);
    }
    free(dc->tables);
    ic__dec_release(dc->d, dc->reserved);
    free(dc);
}

/* ---- Running. ---- */

static bool allocate(ic__jpeg_dc *dc) {
    static const int8_t POS25[25] = {0,  1,  3,  5,  7,  8,  9,  11, 13, 15, 24, 25, 27,
                                     29, 31, 40, 41, 43, 45, 47, 56, 57, 59, 61, 63};
    for (int i = 0; i < dc->ncomp; i++) {
        dc_comp *c = &dc->comp[i];
        size_t cells = (size_t)c->ring * c->wib;
        c->pw = (size_t)c->wib * (size_t)c->ssize;
        c->dcv = calloc(cells, sizeof *c->dcv);
        c->nz = calloc(cells, sizeof *c->nz);
        if (c->ssize == 2) c->ac = calloc(cells * 24, sizeof *c->ac);
        c->rows = malloc(c->pw * (size_t)(c->v * c->ssize));
        if (!c->dcv || !c->nz || (c->ssize == 2 && !c->ac) || !c->rows) return false;
        for (int k = 0; k < 25; k++) c->q25[k] = (int16_t)c->q[POS25[k]];
    }
    for (int i = 0; i < 256; i++) {
        int64_t x = i - 128;
        dc->crr[i] = (int)((91881 * x + 32768) >> 16);
        dc->cbb[i] = (int)((116130 * x + 32768) >> 16);
        dc->crg[i] = (int32_t)(-46802 * x);
        dc->cbg[i] = (int32_t)(-22554 * x + 32768);
    }
    return true;
}

/* Gives way after the output has begun: the rows written so far are dropped. */
static ic_status give_way_late(ic__jpeg_dc *dc, bool *gave_way) {
    ic__dec_unbegin(dc->d);
    dc->why = "entropy-coded data libjpeg would warn about";
    *gave_way = true;
    return IC_OK;
}

ic_status ic__jpeg_dc_run(ic__jpeg_dc *dc, const uint8_t *data, size_t size, bool *gave_way) {
    ic__decoder *d = dc->d;
    *gave_way = false;
    if (dc->state != W_DONE || size < dc->end) {
        *gave_way = true;
        dc->why = "the walk is not complete";
        return IC_OK;
    }
    if (!allocate(dc)) {
        return ic__set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot allocate the DC decoder's buffers");
    }
    for (int i = 0; i < dc->nscans; i++) {
        dc_scan *s = &dc->scans[i];
        s->r.p = data + s->start;
        s->r.end = data + dc->end;
        s->to_go = s->restart;
    }
    /* Rows go to the sink as soon as they are final (two iMCU rows behind the decoding, for
     * the smoothing's window). Should the data turn out to be something libjpeg decodes
     * differently (give_way_late), they are dropped and libjpeg starts over. */
    ic_status st = ic__dec_begin(d, dc->out_w, dc->out_h, 1);
    if (st != IC_OK) return st;
    for (uint32_t R = 0; R < dc->imcu_rows; R++) {
        if (ic__dec_cancelled(d)) return ic__dec_fail_cancelled(d);
        for (int i = 0; i < dc->ncomp; i++) {
            dc_comp *c = &dc->comp[i];
            for (uint32_t row = R * (uint32_t)c->v; row < (R + 1) * (uint32_t)c->v && row < c->hib; row++) {
                memset(dc_at(c, row), 0, c->wib * sizeof(int16_t));
                memset(nz_at(c, row), 0, c->wib * sizeof(uint64_t));
                if (c->ac) memset(ac_at(c, row), 0, c->wib * 24 * sizeof(int16_t));
            }
        }
        for (int i = 0; i < dc->nscans; i++) {
            if (!ic__jpeg_dc_decode_row(dc, &dc->scans[i], R)) return give_way_late(dc, gave_way);
        }
        if (R >= 2) ic__jpeg_dc_output_row(dc, R - 2);
    }
    for (uint32_t R = dc->imcu_rows >= 2 ? dc->imcu_rows - 2 : 0; R < dc->imcu_rows; R++) {
        ic__jpeg_dc_output_row(dc, R);
    }
    return IC_OK;
}
