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
 * found while decoding, and the rows already written are then dropped (ic_dec_unbegin).
 *
 * Memory: a window of 3v+3 block rows per component (DC, the AC nonzero history, and for
 * a 2x2 component the 24 AC values its IDCT reads), one iMCU row of samples, and the
 * Huffman tables of at most 32 scans; output rows go to the sink two iMCU rows behind the
 * decoding (the smoothing's window). The scans are decoded in lockstep, one iMCU row of
 * every scan at a time, from bytes held in memory: the whole file for ic_decode; for the
 * incremental decode, the bytes from the first scan to the end of the walk (compressed,
 * they are smaller than any decoded form of those scans: 0.5 MB for the 17 MP file).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ic_jpeg_dc_internal.h"

#define DC_MAX_SCANS 32
#define DC_MAX_TABLES 48
/* libjpeg's D_MAX_BLOCKS_IN_MCU. */
#define DC_MAX_MCU_BLOCKS 10

/* Zigzag index -> natural position, with libjpeg's 16 extra entries of 63 (corrupt runs
 * that pass the end of a block store at position 63). */
static const uint8_t NATURAL[80] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33,
    40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36,
    29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54,
    47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63,
};

/* The 2x2 IDCT reads rows and columns 0, 1, 3, 5 and 7 of a block: its 25 inputs are kept
 * as a 5x5 array, DC first. Index of a row or column there, or -1. */
static const int8_t SUPPORT[8] = {0, 1, -1, 2, -1, 3, -1, 4};

/* ---- Huffman tables (jdhuff.c's jpeg_make_d_derived_tbl, its checks included). ---- */

typedef struct dc_huff {
    uint16_t fast[512]; /* 9-bit lookahead: length << 8 | symbol; 0 for longer codes */
    int32_t maxcode[18];
    int32_t valoffset[18];
    uint8_t vals[256];
} dc_huff;

/* False when libjpeg would refuse the table (JERR_BAD_HUFF_TABLE). */
static bool build_huff(const uint8_t bits[17], const uint8_t vals[256], bool dc_table, dc_huff *h) {
    uint8_t size[257];
    uint32_t code_of[257];
    int p = 0;
    for (int l = 1; l <= 16; l++) {
        int n = bits[l];
        if (p + n > 256) return false;
        while (n--) size[p++] = (uint8_t)l;
    }
    size[p] = 0;
    int count = p;
    uint32_t code = 0;
    int si = size[0];
    p = 0;
    while (size[p]) {
        while (size[p] == si) code_of[p++] = code++;
        if ((uint64_t)code >= (uint64_t)1 << si) return false;
        code <<= 1;
        si++;
    }
    memset(h->fast, 0, sizeof h->fast);
    p = 0;
    for (int l = 1; l <= 16; l++) {
        if (bits[l]) {
            h->valoffset[l] = p - (int32_t)code_of[p];
            p += bits[l];
            h->maxcode[l] = (int32_t)code_of[p - 1];
        } else {
            h->maxcode[l] = -1;
            h->valoffset[l] = 0;
        }
    }
    h->maxcode[17] = 0xFFFFF;
    h->valoffset[17] = 0;
    memcpy(h->vals, vals, 256);
    p = 0;
    for (int l = 1; l <= 9; l++) {
        for (int i = 0; i < bits[l]; i++, p++) {
            uint32_t first = code_of[p] << (9 - l);
            for (uint32_t k = 0; k < (1u << (9 - l)); k++) {
                h->fast[first + k] = (uint16_t)(l << 8 | vals[p]);
            }
        }
    }
    if (dc_table) {
        for (int i = 0; i < count; i++) {
            if (vals[i] > 15) return false;
        }
    }
    return true;
}

/* ---- The bit reader (jdhuff.c's, with its marker rules). ---- */

typedef struct dc_reader {
    const uint8_t *p;   /* next byte not yet in buf */
    const uint8_t *end; /* end of the walked bytes */
    uint64_t buf;       /* the next bit at bit 63 */
    int n;              /* bits in buf; the last `fake` of them are zeros past the data */
    int fake;
    int marker;         /* the marker the data ran into: its code, -1 at the end, 0 none yet */
    const uint8_t *after_marker;
    bool bad;           /* a code not in its table */
} dc_reader;

/* Fills buf to more than 56 bits. Past a marker (or the end) the bits are zeros that
 * the data does not have: libjpeg warns when it needs one (JWRN_HIT_MARKER), which
 * jpeg.c turns into an error, so reading one means giving way (see overran). */
static inline void fill(dc_reader *r) {
    while (r->n <= 56) {
        if (r->marker) {
            r->n += 8;
            r->fake += 8;
            continue;
        }
        if (r->end - r->p >= 8) {
            /* Up to 7 bytes at once when none of them is 0xFF. */
            uint64_t word;
            memcpy(&word, r->p, 8);
            uint64_t ff = ~word;
            ff = (ff - 0x0101010101010101ull) & ~ff & 0x8080808080808080ull;
            if (!ff) {
                int take = (64 - r->n) >> 3;
                if (take > 7) take = 7;
                for (int i = 0; i < take; i++) {
                    r->buf |= (uint64_t)r->p[i] << (56 - r->n);
                    r->n += 8;
                }
                r->p += take;
                continue;
            }
        }
        if (r->p >= r->end) {
            r->marker = -1;
            r->after_marker = r->p;
            continue;
        }
        uint8_t c = *r->p;
        if (c == 0xFF) {
            const uint8_t *q = r->p + 1;
            while (q < r->end && *q == 0xFF) q++;
            if (q >= r->end) {
                r->marker = -1;
                r->after_marker = q;
                continue;
            }
            if (*q != 0) {
                r->marker = *q;
                r->after_marker = q + 1;
                continue;
            }
            r->p = q + 1;
        } else {
            r->p++;
        }
        r->buf |= (uint64_t)c << (56 - r->n);
        r->n += 8;
    }
}

static inline uint32_t get_bits(dc_reader *r, int count) {
    uint32_t v = (uint32_t)(r->buf >> (64 - count));
    r->buf <<= count;
    r->n -= count;
    return v;
}

/* Consumes `count` bits whose values do not matter (fake ones past a marker included, so
 * overran still sees them). */
static inline void skip_bits(dc_reader *r, int count) {
    while (count > 0) {
        if (r->n < 32) fill(r);
        int take = count < 32 ? count : 32;
        r->buf <<= take;
        r->n -= take;
        count -= take;
    }
}

static inline bool overran(const dc_reader *r) { return r->n < r->fake || r->bad; }

/* One Huffman symbol; needs 16 bits in buf. -1 (and r->bad) for a code not in the table. */
static inline int decode_symbol(dc_reader *r, const dc_huff *h) {
    uint32_t peek = (uint32_t)(r->buf >> 48);
    uint32_t f = h->fast[peek >> 7];
    if (f) {
        r->buf <<= f >> 8;
        r->n -= (int)(f >> 8);
        return (int)(f & 0xFF);
    }
    for (int l = 10; l <= 16; l++) {
        int32_t code = (int32_t)(peek >> (16 - l));
        if (code <= h->maxcode[l]) {
            r->buf <<= l;
            r->n -= l;
            return h->vals[(code + h->valoffset[l]) & 0xFF];
        }
    }
    r->bad = true;
    return 0;
}

/* F.12: the sign extension. */
static inline int extend(uint32_t v, int s) {
    return v < (1u << (s - 1)) ? (int)v - (1 << s) + 1 : (int)v;
}

/* ---- The decode's state. ---- */

enum { SCAN_DC_FIRST, SCAN_DC_REFINE, SCAN_AC_FIRST, SCAN_AC_REFINE };

typedef struct dc_scan {
    uint8_t kind, ncomp, comp[4], Ss, Se, Ah, Al;
    uint8_t table[4];  /* DC first: the DC table of each component; AC: [0] the AC table */
    uint16_t restart;  /* restart interval in MCUs (0: none) */
    size_t start;      /* offset of its entropy-coded data */
    dc_reader r;
    int last_dc[4];
    uint32_t eobrun;
    uint32_t to_go;
    int next_rst;
} dc_scan;

typedef struct dc_comp {
    int id, h, v, qslot;
    uint32_t wib, hib;   /* size in blocks (libjpeg's width/height_in_blocks) */
    int ssize;           /* 1 or 2: samples a side of a block at 1/8 */
    int hexp, vexp;      /* box upsampling factors */
    bool latched;
    uint16_t q[64];      /* the quantisation table latched at its first scan (natural order) */
    int16_t q25[25];     /* libjpeg's IDCT multipliers (short) at the 2x2 IDCT's inputs */
    int coef_bits[64];
    int latch[10];       /* coef_bits[0..9] when the output starts */
    bool change_dc;
    uint32_t ring;       /* block rows in the window */
    int16_t *dcv;        /* ring x wib DC values */
    uint64_t *nz;        /* ring x wib: AC coefficients that are nonzero (bit = zigzag index) */
    int16_t *ac;         /* 2x2 components: ring x wib x 24 AC values (the 2x2 IDCT's) */
    uint8_t *rows;       /* the samples of one iMCU row: (v * ssize) x pw */
    size_t pw;           /* wib * ssize */
} dc_comp;

enum { W_ENTROPY, W_SEGMENT, W_AFTER, W_DONE, W_GIVEN_WAY };

struct ic_jpeg_dc {
    ic_decoder *d;
    const char *why;
    int ncomp;
    dc_comp comp[3];
    uint32_t width, height, out_w, out_h;
    int max_h, max_v;
    uint32_t imcu_rows, mcus_per_row;
    bool smoothing_allowed; /* cinfo->do_block_smoothing */
    bool smoothing;
    /* The tables as the walk has read them: Huffman 0-3 DC, 4-7 AC. */
    uint8_t hbits[8][17];
    uint8_t hvals[8][256];
    bool hdef[8];
    uint32_t hver[8];
    uint16_t quant[4][64];
    bool qdef[4];
    uint16_t restart;
    dc_huff *tables;
    int ntables;
    uint8_t table_slot[DC_MAX_TABLES];
    uint32_t table_ver[DC_MAX_TABLES];
    dc_scan scans[DC_MAX_SCANS];
    int nscans;
    int state;
    size_t pos;
    size_t end;
    uint64_t reserved; /* table bytes counted against the limit */
    int8_t slot_of_zz[64]; /* zigzag index -> index in the 5x5 IDCT inputs (0: not read) */
    /* jdcolor.c's tables: R = Y + crr[Cr], G = Y + ((cbg[Cb] + crg[Cr]) >> 16), B = Y + cbb[Cb]. */
    int crr[256], cbb[256];
    int32_t crg[256], cbg[256];
};

static ic_jpeg_dc_step give_way(ic_jpeg_dc *dc, const char *why) {
    dc->why = why;
    dc->state = W_GIVEN_WAY;
    return IC_JPEG_DC_GIVE_WAY;
}

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

bool ic_jpeg_dc_takes(j_decompress_ptr cinfo, uint64_t *need, const char **why) {
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
    uint64_t total = sizeof(ic_jpeg_dc) + 8 * sizeof(dc_huff);
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

/* ---- The walk: marker segments and scan headers. ---- */

/* The derived table for Huffman slot `slot` (0-3 DC, 4-7 AC) as defined now; -1 when
 * libjpeg would refuse it (missing or bad: JERR_NO_HUFF_TABLE, JERR_BAD_HUFF_TABLE). With
 * `check_only` nothing is kept. */
static int table_for(ic_jpeg_dc *dc, int slot, bool check_only) {
    if (!dc->hdef[slot]) return -1;
    for (int i = 0; i < dc->ntables; i++) {
        if (dc->table_slot[i] == slot && dc->table_ver[i] == dc->hver[slot]) return i;
    }
    if (check_only) {
        dc_huff probe;
        return build_huff(dc->hbits[slot], dc->hvals[slot], slot < 4, &probe) ? 0 : -1;
    }
    if (dc->ntables == DC_MAX_TABLES) return -1;
    if (ic_dec_reserve(dc->d, sizeof(dc_huff)) != IC_OK) return -1;
    dc->reserved += sizeof(dc_huff);
    dc_huff *grown = realloc(dc->tables, sizeof(dc_huff) * (size_t)(dc->ntables + 1));
    if (!grown) return -1;
    dc->tables = grown;
    if (!build_huff(dc->hbits[slot], dc->hvals[slot], slot < 4, &dc->tables[dc->ntables])) return -1;
    dc->table_slot[dc->ntables] = (uint8_t)slot;
    dc->table_ver[dc->ntables] = dc->hver[slot];
    return dc->ntables++;
}

static bool dc_complete(const ic_jpeg_dc *dc) {
    for (int c = 0; c < dc->ncomp; c++) {
        if (dc->comp[c].coef_bits[0] != 0) return false;
    }
    return true;
}

/*
 * A scan header: checks it as libjpeg's per_scan_setup, latch_quant_tables and
 * start_pass_phuff_decoder do, but stricter (a progression libjpeg only warns about
 * gives way), and unless `check_only` records the scan. `comps` are frame indices in
 * scan order; `tables` the SOS table byte of each.
 */
static ic_jpeg_dc_step add_scan(ic_jpeg_dc *dc, int ncomp, const int *comps, const uint8_t *tables,
                                int Ss, int Se, int Ah, int Al, size_t start, bool check_only) {
    if (!check_only && dc->nscans == DC_MAX_SCANS) {
        return give_way(dc, "more than 32 scans before the DC coefficients are complete");
    }
    bool dc_band = Ss == 0;
    if ((dc_band && Se != 0) || (!dc_band && (Se < Ss || Se > 63 || ncomp != 1)) ||
        (Ah != 0 && Al != Ah - 1) || Al > 13) {
        return give_way(dc, "a scan libjpeg refuses (bad progression parameters)");
    }
    if (ncomp > 1) {
        int blocks = 0;
        for (int i = 0; i < ncomp; i++) blocks += dc->comp[comps[i]].h * dc->comp[comps[i]].v;
        if (blocks > DC_MAX_MCU_BLOCKS) return give_way(dc, "an MCU of more than 10 blocks");
    }
    dc_scan scan, *s = &scan;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < ncomp; i++) {
        dc_comp *c = &dc->comp[comps[i]];
        const int *bits = c->coef_bits;
        if (dc_band) {
            if (bits[0] != (Ah == 0 ? -1 : Ah)) return give_way(dc, "an unusual DC progression");
        } else {
            if (bits[0] < 0) return give_way(dc, "an AC scan before its component's DC");
            for (int k = Ss; k <= Se; k++) {
                if (bits[k] != (Ah == 0 ? -1 : Ah)) return give_way(dc, "an unusual AC progression");
            }
        }
        if (!c->latched && !dc->qdef[c->qslot]) {
            return give_way(dc, "a component without its quantisation table");
        }
        int slot = dc_band ? tables[i] >> 4 : 4 + (tables[i] & 15);
        bool needs_table = !dc_band || Ah == 0;
        if (needs_table) {
            if ((dc_band ? tables[i] >> 4 : tables[i] & 15) > 3) {
                return give_way(dc, "a Huffman table number over 3");
            }
            int t = table_for(dc, slot, check_only);
            if (t < 0) return give_way(dc, "a missing or invalid Huffman table");
            s->table[i] = (uint8_t)t;
        }
    }
    if (check_only) return IC_JPEG_DC_READY;
    for (int i = 0; i < ncomp; i++) {
        dc_comp *c = &dc->comp[comps[i]];
        for (int k = Ss; k <= Se; k++) c->coef_bits[k] = Al;
        if (!c->latched) {
            memcpy(c->q, dc->quant[c->qslot], sizeof c->q);
            c->latched = true;
        }
        s->comp[i] = (uint8_t)comps[i];
    }
    s->kind = dc_band ? (Ah == 0 ? SCAN_DC_FIRST : SCAN_DC_REFINE)
                      : (Ah == 0 ? SCAN_AC_FIRST : SCAN_AC_REFINE);
    s->ncomp = (uint8_t)ncomp;
    s->Ss = (uint8_t)Ss;
    s->Se = (uint8_t)Se;
    s->Ah = (uint8_t)Ah;
    s->Al = (uint8_t)Al;
    s->restart = dc->restart;
    s->start = start;
    dc->scans[dc->nscans++] = scan;
    return IC_JPEG_DC_MORE;
}

/* An SOS segment's body (after its length). */
static ic_jpeg_dc_step parse_sos(ic_jpeg_dc *dc, const uint8_t *b, size_t len, size_t start,
                                 bool check_only) {
    int n = len ? b[0] : 0;
    if (n < 1 || n > 4 || len != (size_t)(2 * n + 4)) return give_way(dc, "a bad SOS segment");
    int comps[4];
    uint8_t tables[4];
    int prev = -1;
    for (int i = 0; i < n; i++) {
        int found = -1;
        for (int c = 0; c < dc->ncomp; c++) {
            if (dc->comp[c].id == b[1 + 2 * i]) found = c;
        }
        /* libjpeg's lookup can miss a component listed after a later one: frame order only. */
        if (found <= prev) return give_way(dc, "scan components out of frame order");
        prev = found;
        comps[i] = found;
        tables[i] = b[2 + 2 * i];
    }
    return add_scan(dc, n, comps, tables, b[1 + 2 * n], b[2 + 2 * n], b[3 + 2 * n] >> 4,
                    b[3 + 2 * n] & 15, start, check_only);
}

static bool parse_dht(ic_jpeg_dc *dc, const uint8_t *b, size_t len) {
    while (len > 16) {
        int index = b[0];
        uint8_t bits[17];
        bits[0] = 0;
        size_t count = 0;
        for (int i = 1; i <= 16; i++) {
            bits[i] = b[i];
            count += b[i];
        }
        len -= 17;
        b += 17;
        if (count > 256 || count > len) return false;
        int slot;
        if (index & 0x10) {
            index -= 0x10;
            if (index >= 4) return false;
            slot = 4 + index;
        } else {
            if (index >= 4) return false;
            slot = index;
        }
        memcpy(dc->hbits[slot], bits, sizeof bits);
        memset(dc->hvals[slot], 0, 256);
        memcpy(dc->hvals[slot], b, count);
        dc->hdef[slot] = true;
        dc->hver[slot]++;
        b += count;
        len -= count;
    }
    return len == 0;
}

static bool parse_dqt(ic_jpeg_dc *dc, const uint8_t *b, size_t len) {
    while (len > 0) {
        int n = b[0] & 15, prec = b[0] >> 4;
        size_t need = 1 + (prec ? 128 : 64);
        if (n >= 4 || prec > 1 || len < need) return false;
        for (int i = 0; i < 64; i++) {
            dc->quant[n][NATURAL[i]] = prec ? (uint16_t)(b[1 + 2 * i] << 8 | b[2 + 2 * i]) : b[1 + i];
        }
        dc->qdef[n] = true;
        b += need;
        len -= need;
    }
    return true;
}

/* libjpeg's smoothing_ok, and what decompress_smooth_data latches, once the DC is in. */
static void decide_smoothing(ic_jpeg_dc *dc) {
    static const int Q_POS[10] = {0, 1, 8, 16, 9, 2, 3, 10, 17, 24};
    bool useful = false, ok = dc->smoothing_allowed;
    for (int c = 0; c < dc->ncomp && ok; c++) {
        dc_comp *comp = &dc->comp[c];
        for (int i = 0; i < 10; i++) {
            if (comp->q[Q_POS[i]] == 0) ok = false;
        }
        bool no_ac = true;
        for (int k = 0; k < 10; k++) {
            comp->latch[k] = comp->coef_bits[k];
            if (k > 0 && comp->coef_bits[k] != 0) useful = true;
            if (k > 0 && comp->coef_bits[k] != -1) no_ac = false;
        }
        comp->change_dc = no_ac;
    }
    dc->smoothing = ok && useful;
}

ic_jpeg_dc_step ic_jpeg_dc_walk(ic_jpeg_dc *dc, const uint8_t *data, size_t size, bool eof) {
    if (dc->state == W_DONE) return IC_JPEG_DC_READY;
    if (dc->state == W_GIVEN_WAY) return IC_JPEG_DC_GIVE_WAY;
    if (ic_dec_cancelled(dc->d)) {
        ic_dec_fail_cancelled(dc->d);
        return IC_JPEG_DC_CANCELLED;
    }
    for (;;) {
        if (dc->state == W_ENTROPY) {
            /* The scan's data ends at the first marker other than RSTn. */
            size_t i = dc->pos;
            for (;;) {
                const uint8_t *ff = i < size ? memchr(data + i, 0xFF, size - i) : NULL;
                if (!ff) {
                    dc->pos = size;
                    goto more;
                }
                i = (size_t)(ff - data);
                size_t j = i + 1;
                while (j < size && data[j] == 0xFF) j++;
                if (j >= size) {
                    dc->pos = i;
                    goto more;
                }
                if (data[j] == 0 || (data[j] >= 0xD0 && data[j] <= 0xD7)) {
                    i = j + 1;
                    continue;
                }
                dc->pos = i;
                break;
            }
            if (ic_dec_cancelled(dc->d)) {
                ic_dec_fail_cancelled(dc->d);
                return IC_JPEG_DC_CANCELLED;
            }
            dc->state = W_SEGMENT;
            if (dc_complete(dc)) {
                decide_smoothing(dc);
                if (!dc->smoothing) {
                    /* libjpeg reads nothing more (its bit reader stops at this marker). */
                    size_t j = dc->pos + 1;
                    while (data[j] == 0xFF) j++;
                    dc->end = j + 1;
                    dc->state = W_DONE;
                    return IC_JPEG_DC_READY;
                }
                /* Block smoothing reads on to the next scan's header (or EOI). */
                dc->state = W_AFTER;
            }
            continue;
        }
        /* At a marker segment between scans. */
        size_t at = dc->pos;
        if (at >= size) goto more;
        if (data[at] != 0xFF) return give_way(dc, "bytes between marker segments");
        size_t j = at + 1;
        while (j < size && data[j] == 0xFF) j++;
        if (j >= size) goto more;
        int m = data[j];
        size_t seg = j + 1;
        if (m >= 0xD0 && m <= 0xD7) {
            dc->pos = seg;
            continue;
        }
        if (m == 0xD9) {
            if (dc->state != W_AFTER) {
                return give_way(dc, "the file ends before the DC coefficients are complete");
            }
            dc->end = seg;
            dc->state = W_DONE;
            return IC_JPEG_DC_READY;
        }
        if (!(m == 0xC4 || m == 0xDB || m == 0xDD || m == 0xDA || m == 0xFE || (m >= 0xE0 && m <= 0xEF))) {
            return give_way(dc, "a marker other than a table, restart, APPn or COM between scans");
        }
        if (size - seg < 2) goto more;
        size_t len = (size_t)data[seg] << 8 | data[seg + 1];
        if (len < 2) return give_way(dc, "a marker segment shorter than its length field");
        if (size - seg < len) goto more;
        const uint8_t *body = data + seg + 2;
        size_t blen = len - 2;
        dc->pos = seg + len;
        switch (m) {
        case 0xC4:
            if (!parse_dht(dc, body, blen)) return give_way(dc, "a DHT segment libjpeg refuses");
            break;
        case 0xDB:
            if (!parse_dqt(dc, body, blen)) return give_way(dc, "a DQT segment libjpeg refuses");
            break;
        case 0xDD:
            if (blen != 2) return give_way(dc, "a DRI segment libjpeg refuses");
            dc->restart = (uint16_t)(body[0] << 8 | body[1]);
            break;
        case 0xDA: {
            bool after = dc->state == W_AFTER;
            ic_jpeg_dc_step st = parse_sos(dc, body, blen, dc->pos, after);
            if (st == IC_JPEG_DC_GIVE_WAY) return st;
            if (after) {
                dc->end = dc->pos;
                dc->state = W_DONE;
                return IC_JPEG_DC_READY;
            }
            dc->state = W_ENTROPY;
            break;
        }
        default:
            break; /* APPn, COM */
        }
    }
more:
    if (eof) return give_way(dc, "the file ends before the walk does");
    return IC_JPEG_DC_MORE;
}

size_t ic_jpeg_dc_end(const ic_jpeg_dc *dc) { return dc->end; }

const char *ic_jpeg_dc_why(const ic_jpeg_dc *dc) { return dc->why; }

/* ---- Setting up. ---- */

ic_jpeg_dc *ic_jpeg_dc_new(ic_decoder *d, j_decompress_ptr cinfo) {
    ic_jpeg_dc *dc = calloc(1, sizeof *dc);
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
        int pos = NATURAL[k], r = SUPPORT[pos >> 3], col = SUPPORT[pos & 7];
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
        give_way(dc, "scan components out of frame order");
    } else {
        add_scan(dc, n, comps, tables, cinfo->Ss, cinfo->Se, cinfo->Ah, cinfo->Al, 0, false);
    }
    return dc;
}

void ic_jpeg_dc_free(ic_jpeg_dc *dc) {
    if (!dc) return;
    for (int c = 0; c < dc->ncomp; c++) {
        free(dc->comp[c].dcv);
        free(dc->comp[c].nz);
        free(dc->comp[c].ac);
        free(dc->comp[c].rows);
    }
    free(dc->tables);
    ic_dec_release(dc->d, dc->reserved);
    free(dc);
}

/* ---- Decoding the scans (jdphuff.c's decode_mcu_* routines). ---- */

static inline int16_t *dc_at(dc_comp *c, uint32_t row) { return c->dcv + (size_t)(row % c->ring) * c->wib; }
static inline uint64_t *nz_at(dc_comp *c, uint32_t row) { return c->nz + (size_t)(row % c->ring) * c->wib; }
static inline int16_t *ac_at(dc_comp *c, uint32_t row) {
    return c->ac ? c->ac + (size_t)(row % c->ring) * c->wib * 24 : NULL;
}

/* Before an MCU: a restart marker when one is due (jdphuff.c's process_restart). */
static bool restart(ic_jpeg_dc *dc, dc_scan *s) {
    (void)dc;
    dc_reader *r = &s->r;
    if (overran(r)) return false;
    int code = r->marker;
    const uint8_t *after = r->after_marker;
    if (!code) {
        /* next_marker: skip to the first FF that is not followed by 00. */
        const uint8_t *p = r->p;
        for (;;) {
            while (p < r->end && *p != 0xFF) p++;
            if (p >= r->end) return false;
            const uint8_t *q = p + 1;
            while (q < r->end && *q == 0xFF) q++;
            if (q >= r->end) return false;
            if (*q != 0) {
                code = *q;
                after = q + 1;
                break;
            }
            p = q + 1;
        }
    }
    if (code != 0xD0 + s->next_rst) return false;
    r->p = after;
    r->buf = 0;
    r->n = 0;
    r->fake = 0;
    r->marker = 0;
    s->next_rst = (s->next_rst + 1) & 7;
    memset(s->last_dc, 0, sizeof s->last_dc);
    s->eobrun = 0;
    s->to_go = s->restart;
    return true;
}

/* DC first scan, one block; `out` NULL for a block outside the image. */
static inline bool dc_first_block(ic_jpeg_dc *dc, dc_scan *s, int ci, int16_t *out) {
    dc_reader *r = &s->r;
    if (r->n < 32) fill(r);
    int t = decode_symbol(r, &dc->tables[s->table[ci]]);
    int diff = 0;
    if (t) diff = extend(get_bits(r, t), t);
    int last = s->last_dc[ci];
    if ((last >= 0 && diff > INT_MAX - last) || (last < 0 && diff < INT_MIN - last)) return false;
    last += diff;
    s->last_dc[ci] = last;
    if (out) *out = (int16_t)(uint16_t)((uint32_t)last << s->Al);
    return true;
}

static inline void dc_refine_block(dc_scan *s, int16_t *out) {
    dc_reader *r = &s->r;
    if (r->n < 1) fill(r);
    if (get_bits(r, 1) && out) *out = (int16_t)(*out | (1 << s->Al));
}

/* AC first scan, one block: `nz` its nonzero mask, `vals` its 2x2 IDCT inputs or NULL. */
static void ac_first_block(ic_jpeg_dc *dc, dc_scan *s, uint64_t *nz, int16_t *vals) {
    if (s->eobrun) {
        s->eobrun--;
        return;
    }
    dc_reader *r = &s->r;
    const dc_huff *h = &dc->tables[s->table[0]];
    int Se = s->Se, Al = s->Al;
    for (int k = s->Ss; k <= Se; k++) {
        if (r->n < 32) fill(r);
        int sym = decode_symbol(r, h);
        int run = sym >> 4, size = sym & 15;
        if (size) {
            k += run;
            int v = extend(get_bits(r, size), size);
            int16_t coef = (int16_t)(uint16_t)((uint32_t)v << Al);
            int zz = k > 63 ? 63 : k;
            if (coef) {
                *nz |= 1ull << zz;
            } else {
                *nz &= ~(1ull << zz);
            }
            if (vals && dc->slot_of_zz[zz]) vals[dc->slot_of_zz[zz] - 1] = coef;
        } else if (run == 15) {
            k += 15;
        } else {
            uint32_t eob = 1u << run;
            if (run) eob += get_bits(r, run);
            s->eobrun = eob - 1;
            break;
        }
    }
}

static inline void correct(const ic_jpeg_dc *dc, int16_t *vals, int k, int p1) {
    if (!vals || !dc->slot_of_zz[k]) return;
    int16_t *v = &vals[dc->slot_of_zz[k] - 1];
    if ((*v & p1) == 0) *v = (int16_t)(*v + (*v >= 0 ? p1 : -p1));
}

/* Zigzag positions a..b (empty when a > b; a, b <= 64). */
static inline uint64_t band(int a, int b) {
    uint64_t from = a >= 64 ? 0 : ~0ull << a;
    uint64_t to = b >= 63 ? ~0ull : (1ull << (b + 1)) - 1;
    return b < a ? 0 : from & to;
}

/* The correction bits of the already-nonzero coefficients in `m` (one each, in order). */
static inline void corrections(const ic_jpeg_dc *dc, dc_reader *r, uint64_t m, int16_t *vals, int p1) {
    if (!vals) {
        skip_bits(r, __builtin_popcountll(m));
        return;
    }
    while (m) {
        int k = __builtin_ctzll(m);
        m &= m - 1;
        if (r->n < 1) fill(r);
        if (get_bits(r, 1)) correct(dc, vals, k, p1);
    }
}

/* AC refinement scan, one block. */
static void ac_refine_block(ic_jpeg_dc *dc, dc_scan *s, uint64_t *nz, int16_t *vals) {
    dc_reader *r = &s->r;
    const dc_huff *h = &dc->tables[s->table[0]];
    int Se = s->Se, p1 = 1 << s->Al;
    int k = s->Ss;
    if (s->eobrun == 0) {
        for (; k <= Se; k++) {
            if (r->n < 32) fill(r);
            int sym = decode_symbol(r, h);
            int run = sym >> 4, size = sym & 15;
            int newval = 0;
            if (size) {
                if (size != 1) r->bad = true; /* libjpeg warns and goes on: give way */
                newval = get_bits(r, 1) ? p1 : -p1;
            } else if (run != 15) {
                uint32_t eob = 1u << run;
                if (run) eob += get_bits(r, run);
                s->eobrun = eob;
                break;
            }
            /* Past `run` zero-history coefficients to the next one (or the band's end),
             * with a correction bit for each nonzero one on the way. */
            uint64_t rest = band(k, Se);
            uint64_t zeros = ~*nz & rest;
            for (int i = 0; i < run && zeros; i++) zeros &= zeros - 1;
            int stop = zeros ? __builtin_ctzll(zeros) : Se + 1;
            corrections(dc, r, *nz & band(k, stop - 1), vals, p1);
            k = stop;
            if (newval) {
                int zz = k > 63 ? 63 : k;
                *nz |= 1ull << zz;
                if (vals && dc->slot_of_zz[zz]) vals[dc->slot_of_zz[zz] - 1] = (int16_t)newval;
            }
        }
    }
    if (s->eobrun > 0) {
        corrections(dc, r, *nz & band(k, Se), vals, p1);
        s->eobrun--;
    }
}

/* One MCU's worth of restart bookkeeping: false when a restart marker is wrong. */
static inline bool before_mcu(ic_jpeg_dc *dc, dc_scan *s) {
    if (!s->restart) return true;
    if (s->to_go == 0 && !restart(dc, s)) return false;
    s->to_go--;
    return true;
}

/* Decodes iMCU row R of scan s. False: give way. */
static bool decode_scan_row(ic_jpeg_dc *dc, dc_scan *s, uint32_t R) {
    if (s->ncomp > 1) {
        /* An interleaved DC scan: MCUs of h x v blocks of each component, blocks outside the
         * image (right and bottom edge padding) decoded and dropped. */
        for (uint32_t m = 0; m < dc->mcus_per_row; m++) {
            if (!before_mcu(dc, s)) return false;
            for (int i = 0; i < s->ncomp; i++) {
                dc_comp *c = &dc->comp[s->comp[i]];
                for (int yy = 0; yy < c->v; yy++) {
                    uint32_t row = R * (uint32_t)c->v + (uint32_t)yy;
                    int16_t *line = row < c->hib ? dc_at(c, row) : NULL;
                    for (int xx = 0; xx < c->h; xx++) {
                        uint32_t col = m * (uint32_t)c->h + (uint32_t)xx;
                        int16_t *out = line && col < c->wib ? &line[col] : NULL;
                        if (s->kind == SCAN_DC_FIRST) {
                            if (!dc_first_block(dc, s, i, out)) return false;
                        } else {
                            dc_refine_block(s, out);
                        }
                    }
                }
            }
        }
        return !overran(&s->r);
    }
    dc_comp *c = &dc->comp[s->comp[0]];
    uint32_t first = R * (uint32_t)c->v, last = first + (uint32_t)c->v;
    if (last > c->hib) last = c->hib;
    for (uint32_t row = first; row < last; row++) {
        int16_t *line = dc_at(c, row);
        uint64_t *nz = nz_at(c, row);
        int16_t *ac = ac_at(c, row);
        for (uint32_t x = 0; x < c->wib; x++) {
            if (!before_mcu(dc, s)) return false;
            switch (s->kind) {
            case SCAN_DC_FIRST:
                if (!dc_first_block(dc, s, 0, &line[x])) return false;
                break;
            case SCAN_DC_REFINE:
                dc_refine_block(s, &line[x]);
                break;
            case SCAN_AC_FIRST:
                ac_first_block(dc, s, &nz[x], ac ? ac + (size_t)x * 24 : NULL);
                break;
            default:
                ac_refine_block(dc, s, &nz[x], ac ? ac + (size_t)x * 24 : NULL);
                break;
            }
        }
        if (overran(&s->r)) return false;
    }
    return !overran(&s->r);
}

/* ---- Output: block smoothing, reduced IDCTs (jdcoefct.c, jidctred.c). ---- */

/* libjpeg's post-IDCT range limit: x & 1023 through its table. */
static inline uint8_t range_limit(int x) {
    int i = x & 1023;
    if (i < 128) return (uint8_t)(i + 128);
    if (i < 512) return 255;
    if (i < 896) return 0;
    return (uint8_t)(i - 896);
}

/* jpeg_idct_1x1. */
static inline uint8_t idct_1x1(int16_t coef, int16_t q) {
    int v = (int)coef * (int)q;
    return range_limit((int)(((int64_t)v + 4) >> 3));
}

static inline int16_t sat16(int32_t v) { return v < -32768 ? -32768 : v > 32767 ? 32767 : (int16_t)v; }

static inline uint8_t sat_sample(int32_t v) { return (uint8_t)((v < -128 ? -128 : v > 127 ? 127 : v) + 128); }

/* jsimd_idct_2x2_sse2 (libjpeg-turbo 2.1, x86-64): dequantised in 16 bits (pmullw), pass
 * sums in wrapping 32 bits, pass-1 results other than column 0 saturated to 16 bits, output
 * saturated. w: the 5x5 inputs (rows and columns 0,1,3,5,7), q: their multipliers. */
static void idct_2x2(const int16_t w[25], const int16_t q[25], uint8_t out[4]) {
    int32_t A[5], B[5];
    for (int c = 0; c < 5; c++) {
        if ((w[c] | w[5 + c] | w[10 + c] | w[15 + c] | w[20 + c]) == 0) {
            A[c] = B[c] = 0; /* (0 + 4096) >> 13 */
            continue;
        }
        int16_t d0 = (int16_t)(uint16_t)(w[c] * q[c]);
        int16_t d1 = (int16_t)(uint16_t)(w[5 + c] * q[5 + c]);
        int16_t d3 = (int16_t)(uint16_t)(w[10 + c] * q[10 + c]);
        int16_t d5 = (int16_t)(uint16_t)(w[15 + c] * q[15 + c]);
        int16_t d7 = (int16_t)(uint16_t)(w[20 + c] * q[20 + c]);
        int32_t t0 = (d1 * 29692 + d3 * -10426) + (d5 * 6967 + d7 * -5906);
        uint32_t t10 = (uint32_t)((int32_t)d0 * 32768);
        A[c] = (int32_t)(t10 + (uint32_t)t0 + 4096u) >> 13;
        B[c] = (int32_t)(t10 - (uint32_t)t0 + 4096u) >> 13;
    }
    const int32_t *rows[2] = {A, B};
    for (int r = 0; r < 2; r++) {
        const int32_t *X = rows[r];
        int32_t t0 = (sat16(X[1]) * 29692 + sat16(X[2]) * -10426) + (sat16(X[3]) * 6967 + sat16(X[4]) * -5906);
        uint32_t t10 = (uint32_t)X[0] << 15;
        out[2 * r] = sat_sample((int32_t)(t10 + (uint32_t)t0 + (1u << 19)) >> 20);
        out[2 * r + 1] = sat_sample((int32_t)(t10 - (uint32_t)t0 + (1u << 19)) >> 20);
    }
}

/* decompress_smooth_data's estimate of a coefficient with quantiser q from num. */
static inline int16_t estimate(int64_t num, int64_t q, int Al) {
    int pred;
    if (num >= 0) {
        pred = (int)(((q << 7) + num) / (q << 8));
        if (Al > 0 && pred >= (1 << Al)) pred = (1 << Al) - 1;
    } else {
        pred = (int)(((q << 7) - num) / (q << 8));
        if (Al > 0 && pred >= (1 << Al)) pred = (1 << Al) - 1;
        pred = (int)(0u - (unsigned)pred);
    }
    return (int16_t)(uint16_t)pred;
}

/* The 5x5 DC window of the smoothing, DC01..DC25 as libjpeg names them (row-major). */
typedef struct dc_window {
    int v[25];
} dc_window;

#define W(n) win->v[(n) - 1]

/* Writes the samples of block row b (in iMCU row R) of component c. */
static void output_block_row(ic_jpeg_dc *dc, dc_comp *c, uint32_t R, int br, int block_rows) {
    uint32_t last = dc->imcu_rows - 1;
    uint32_t b = R * (uint32_t)c->v + (uint32_t)br;
    uint32_t prev = (br > 0 || R > 0) ? b - 1 : b;
    uint32_t pprev = (br > 1 || R > 1) ? b - 2 : prev;
    uint32_t next = (br < block_rows - 1 || R < last) ? b + 1 : b;
    uint32_t nnext = (br < block_rows - 2 || R + 1 < last) ? b + 2 : next;
    const int16_t *rows[5] = {dc_at(c, pprev), dc_at(c, prev), dc_at(c, b), dc_at(c, next), dc_at(c, nnext)};
    const int16_t *cur = rows[2];
    const int16_t *ac = ac_at(c, b);
    int s = c->ssize;
    uint8_t *out = c->rows + (size_t)br * s * c->pw;
    int16_t q0 = (int16_t)c->q[0];
    bool smooth = dc->smoothing;
    if (s == 1 && !c->change_dc) {
        /* The 1x1 IDCT reads the DC alone, which smoothing changes only with change_dc. */
        for (uint32_t x = 0; x < c->wib; x++) out[x] = idct_1x1(cur[x], q0);
        return;
    }
    dc_window window, *win = &window;
    if (smooth) {
        for (int r = 0; r < 5; r++) {
            for (int k = 0; k < 5; k++) win->v[r * 5 + k] = rows[r][0];
        }
    }
    uint32_t last_col = c->wib - 1;
    int64_t Q00 = c->q[0];
    for (uint32_t x = 0; x < c->wib; x++) {
        int16_t dcval = cur[x];
        if (smooth) {
            if (x == 0 && x < last_col) {
                for (int r = 0; r < 5; r++) win->v[r * 5 + 3] = rows[r][1];
            }
            if (x + 1 < last_col) {
                for (int r = 0; r < 5; r++) win->v[r * 5 + 4] = rows[r][x + 2];
            }
            if (c->change_dc) {
                int64_t num = Q00 * (-2 * W(1) - 6 * W(2) - 8 * W(3) - 6 * W(4) - 2 * W(5) - 6 * W(6) +
                                     6 * W(7) + 42 * W(8) + 6 * W(9) - 6 * W(10) - 8 * W(11) +
                                     42 * W(12) + 152 * W(13) + 42 * W(14) - 8 * W(15) - 6 * W(16) +
                                     6 * W(17) + 42 * W(18) + 6 * W(19) - 6 * W(20) - 2 * W(21) -
                                     6 * W(22) - 8 * W(23) - 6 * W(24) - 2 * W(25));
                dcval = estimate(num, Q00, 0);
            }
        }
        if (s == 1) {
            out[x] = idct_1x1(dcval, q0);
        } else {
            int16_t w[25];
            w[0] = cur[x];
            memcpy(w + 1, ac + (size_t)x * 24, 24 * sizeof(int16_t));
            if (smooth) {
                const int *latch = c->latch;
                bool cd = c->change_dc;
                /* AC01 (w[1]), AC10 (w[5]), AC11 (w[6]); with change_dc AC03 (w[2]) and AC30
                 * (w[10]) too. AC20, AC02, AC12 and AC21 are not read by the 2x2 IDCT. */
                if (latch[1] != 0 && w[1] == 0) {
                    int sum = cd ? -W(1) - W(2) + W(4) + W(5) - 3 * W(6) + 13 * W(7) - 13 * W(9) +
                                       3 * W(10) - 3 * W(11) + 38 * W(12) - 38 * W(14) + 3 * W(15) -
                                       3 * W(16) + 13 * W(17) - 13 * W(19) + 3 * W(20) - W(21) - W(22) +
                                       W(24) + W(25)
                                 : -7 * W(11) + 50 * W(12) - 50 * W(14) + 7 * W(15);
                    w[1] = estimate(Q00 * sum, c->q[1], latch[1]);
                }
                if (latch[2] != 0 && w[5] == 0) {
                    int sum = cd ? -W(1) - 3 * W(2) - 3 * W(3) - 3 * W(4) - W(5) - W(6) + 13 * W(7) +
                                       38 * W(8) + 13 * W(9) - W(10) + W(16) - 13 * W(17) - 38 * W(18) -
                                       13 * W(19) + W(20) + W(21) + 3 * W(22) + 3 * W(23) + 3 * W(24) + W(25)
                                 : -7 * W(3) + 50 * W(8) - 50 * W(18) + 7 * W(23);
                    w[5] = estimate(Q00 * sum, c->q[8], latch[2]);
                }
                if (latch[4] != 0 && w[6] == 0) {
                    int sum = cd ? -W(1) + W(5) + 9 * W(7) - 9 * W(9) - 9 * W(17) + 9 * W(19) + W(21) - W(25)
                                 : W(10) + W(16) - 10 * W(17) + 10 * W(19) - W(2) - W(20) + W(22) - W(24) +
                                       W(4) - W(6) + 10 * W(7) - 10 * W(9);
                    w[6] = estimate(Q00 * sum, c->q[9], latch[4]);
                }
                if (cd) {
                    if (latch[6] != 0 && w[2] == 0) {
                        int sum = W(7) - W(9) + 2 * W(12) - 2 * W(14) + W(17) - W(19);
                        w[2] = estimate(Q00 * sum, c->q[3], latch[6]);
                    }
                    if (latch[9] != 0 && w[10] == 0) {
                        int sum = W(7) + 2 * W(8) + W(9) - W(17) - 2 * W(18) - W(19);
                        w[10] = estimate(Q00 * sum, c->q[24], latch[9]);
                    }
                    w[0] = dcval;
                }
            }
            uint8_t px[4];
            idct_2x2(w, c->q25, px);
            out[2 * x] = px[0];
            out[2 * x + 1] = px[1];
            out[c->pw + 2 * x] = px[2];
            out[c->pw + 2 * x + 1] = px[3];
        }
        if (smooth) {
            for (int r = 0; r < 5; r++) {
                int *v = &win->v[r * 5];
                v[0] = v[1];
                v[1] = v[2];
                v[2] = v[3];
                v[3] = v[4];
            }
        }
    }
}

#undef W

static inline uint8_t clamp255(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* iMCU row R of every component, then its output rows through the sink: box upsampling
 * (jdsample.c's int_upsample at 1/8) and jdcolor.c's conversion. */
static void output_imcu_row(ic_jpeg_dc *dc, uint32_t R) {
    for (int i = 0; i < dc->ncomp; i++) {
        dc_comp *c = &dc->comp[i];
        int block_rows = c->v;
        if (R == dc->imcu_rows - 1) {
            block_rows = (int)(c->hib % (uint32_t)c->v);
            if (block_rows == 0) block_rows = c->v;
        }
        for (int br = 0; br < block_rows; br++) output_block_row(dc, c, R, br, block_rows);
    }
    ic_decoder *d = dc->d;
    uint32_t y0 = R * (uint32_t)dc->max_v, y1 = y0 + (uint32_t)dc->max_v;
    if (y1 > dc->out_h) y1 = dc->out_h;
    for (uint32_t y = y0; y < y1; y++) {
        uint8_t *row = ic_dec_row(d, 0, y);
        const uint8_t *src[3];
        for (int i = 0; i < dc->ncomp; i++) {
            const dc_comp *c = &dc->comp[i];
            uint32_t first = R * (uint32_t)(c->v * c->ssize);
            src[i] = c->rows + (size_t)(y / (uint32_t)c->vexp - first) * c->pw;
        }
        if (dc->ncomp == 1) {
            uint32_t e = (uint32_t)dc->comp[0].hexp;
            for (uint32_t x = 0; x < dc->out_w; x++) {
                uint8_t g = src[0][x / e];
                row[4 * x] = row[4 * x + 1] = row[4 * x + 2] = g;
                row[4 * x + 3] = 255;
            }
        } else {
            uint32_t e0 = (uint32_t)dc->comp[0].hexp, e1 = (uint32_t)dc->comp[1].hexp,
                     e2 = (uint32_t)dc->comp[2].hexp;
            for (uint32_t x = 0; x < dc->out_w; x++) {
                int Y = src[0][x / e0], cb = src[1][x / e1], cr = src[2][x / e2];
                row[4 * x] = clamp255(Y + dc->crr[cr]);
                row[4 * x + 1] = clamp255(Y + (int)((dc->cbg[cb] + dc->crg[cr]) >> 16));
                row[4 * x + 2] = clamp255(Y + dc->cbb[cb]);
                row[4 * x + 3] = 255;
            }
        }
    }
    ic_dec_rows_done(d, 0, y0, y1 - y0, false);
}

static bool allocate(ic_jpeg_dc *dc) {
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
static ic_status give_way_late(ic_jpeg_dc *dc, bool *gave_way) {
    ic_dec_unbegin(dc->d);
    dc->why = "entropy-coded data libjpeg would warn about";
    *gave_way = true;
    return IC_OK;
}

ic_status ic_jpeg_dc_run(ic_jpeg_dc *dc, const uint8_t *data, size_t size, bool *gave_way) {
    ic_decoder *d = dc->d;
    *gave_way = false;
    if (dc->state != W_DONE || size < dc->end) {
        *gave_way = true;
        dc->why = "the walk is not complete";
        return IC_OK;
    }
    if (!allocate(dc)) {
        return ic_set_error(d->err, IC_ERR_OUT_OF_MEMORY, "JPEG: cannot allocate the DC decoder's buffers");
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
    ic_status st = ic_dec_begin(d, dc->out_w, dc->out_h, 1);
    if (st != IC_OK) return st;
    for (uint32_t R = 0; R < dc->imcu_rows; R++) {
        if (ic_dec_cancelled(d)) return ic_dec_fail_cancelled(d);
        for (int i = 0; i < dc->ncomp; i++) {
            dc_comp *c = &dc->comp[i];
            for (uint32_t row = R * (uint32_t)c->v; row < (R + 1) * (uint32_t)c->v && row < c->hib; row++) {
                memset(dc_at(c, row), 0, c->wib * sizeof(int16_t));
                memset(nz_at(c, row), 0, c->wib * sizeof(uint64_t));
                if (c->ac) memset(ac_at(c, row), 0, c->wib * 24 * sizeof(int16_t));
            }
        }
        for (int i = 0; i < dc->nscans; i++) {
            if (!decode_scan_row(dc, &dc->scans[i], R)) return give_way_late(dc, gave_way);
        }
        if (R >= 2) output_imcu_row(dc, R - 2);
    }
    for (uint32_t R = dc->imcu_rows >= 2 ? dc->imcu_rows - 2 : 0; R < dc->imcu_rows; R++) {
        output_imcu_row(dc, R);
    }
    return IC_OK;
}
