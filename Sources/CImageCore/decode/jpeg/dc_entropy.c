/*
 * dc_entropy.c — the DC decoder's entropy decoding (jdphuff.c's decode_mcu_* routines):
 * one iMCU row of a scan at a time (DC first and refinement, AC first and refinement,
 * restart markers), into the components' block-row windows, reading with dc_bits.h.
 */
#include <limits.h>
#include <string.h>

#include "dc_internal.h"

/* Before an MCU: a restart marker when one is due (jdphuff.c's process_restart). */
static bool restart(ic__jpeg_dc *dc, dc_scan *s) {
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
static inline bool dc_first_block(ic__jpeg_dc *dc, dc_scan *s, int ci, int16_t *out) {
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
static void ac_first_block(ic__jpeg_dc *dc, dc_scan *s, uint64_t *nz, int16_t *vals) {
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

static inline void correct(const ic__jpeg_dc *dc, int16_t *vals, int k, int p1) {
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
static inline void corrections(const ic__jpeg_dc *dc, dc_reader *r, uint64_t m, int16_t *vals, int p1) {
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
static void ac_refine_block(ic__jpeg_dc *dc, dc_scan *s, uint64_t *nz, int16_t *vals) {
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
static inline bool before_mcu(ic__jpeg_dc *dc, dc_scan *s) {
    if (!s->restart) return true;
    if (s->to_go == 0 && !restart(dc, s)) return false;
    s->to_go--;
    return true;
}

bool ic__jpeg_dc_decode_row(ic__jpeg_dc *dc, dc_scan *s, uint32_t R) {
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
