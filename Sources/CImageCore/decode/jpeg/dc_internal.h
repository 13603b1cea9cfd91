/*
 * dc_internal.h — what the DC decoder's files share (see jpeg_dc.c): its state and
 * the entry of each layer. The marker walk (dc_markers.c) records the scans and
 * tables; the entropy decoder (dc_entropy.c) decodes an iMCU row of a scan into the
 * block-row windows; the output (dc_idct.c) smooths, transforms and converts a row of
 * them into the sink; jpeg_dc.c sets up and runs the three. Not installed.
 */
#ifndef IC_JPEG_DC_STATE_H
#define IC_JPEG_DC_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc_bits.h"
#include "ic_jpeg_dc_internal.h"

#define DC_MAX_SCANS 32
#define DC_MAX_TABLES 48
/* libjpeg's D_MAX_BLOCKS_IN_MCU. */
#define DC_MAX_MCU_BLOCKS 10

/* Zigzag index -> natural position, with libjpeg's 16 extra entries of 63 (corrupt runs
 * that pass the end of a block store at position 63); in jpeg_dc.c. */
extern const uint8_t ic__jpeg_dc_natural[80];

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

struct ic__jpeg_dc {
    ic__decoder *d;
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

/* A component's block-row windows: row `row` of its DC values, nonzero masks and (2x2
 * components) IDCT inputs; NULL for the last when the component keeps none. */
static inline int16_t *dc_at(dc_comp *c, uint32_t row) { return c->dcv + (size_t)(row % c->ring) * c->wib; }
static inline uint64_t *nz_at(dc_comp *c, uint32_t row) { return c->nz + (size_t)(row % c->ring) * c->wib; }
static inline int16_t *ac_at(dc_comp *c, uint32_t row) {
    return c->ac ? c->ac + (size_t)(row % c->ring) * c->wib * 24 : NULL;
}

/* Sets the reason, stops the walk, and returns IC_JPEG_DC_GIVE_WAY (dc_markers.c). */
ic__jpeg_dc_step ic__jpeg_dc_give_way(ic__jpeg_dc *dc, const char *why);

/*
 * A scan header: checks it as libjpeg's per_scan_setup, latch_quant_tables and
 * start_pass_phuff_decoder do, but stricter (a progression libjpeg only warns about
 * gives way), and unless `check_only` records the scan. `comps` are frame indices in
 * scan order; `tables` the SOS table byte of each (dc_markers.c).
 */
ic__jpeg_dc_step ic__jpeg_dc_add_scan(ic__jpeg_dc *dc, int ncomp, const int *comps, const uint8_t *tables,
                                    int Ss, int Se, int Ah, int Al, size_t start, bool check_only);

/* Decodes iMCU row R of scan s into the windows (dc_entropy.c). False: give way. */
bool ic__jpeg_dc_decode_row(ic__jpeg_dc *dc, dc_scan *s, uint32_t R);

/* iMCU row R of every component, then its output rows through the sink (dc_idct.c). */
void ic__jpeg_dc_output_row(ic__jpeg_dc *dc, uint32_t R);

#endif /* IC_JPEG_DC_STATE_H */
