/*
 * dc_markers.c — the DC decoder's walk (see jpeg_dc.c): the marker segments between
 * scans (DHT, DQT, DRI, SOS; APPn and COM skipped) and each scan's header, checked as
 * libjpeg checks them, up to the scan that completes every component's DC. It finds
 * where each scan's entropy-coded data starts and ends, and decodes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "dc_internal.h"

ic__jpeg_dc_step ic__jpeg_dc_give_way(ic__jpeg_dc *dc, const char *why) {
    dc->why = why;
    dc->state = W_GIVEN_WAY;
    return IC_JPEG_DC_GIVE_WAY;
}

/* The derived table for Huffman slot `slot` (0-3 DC, 4-7 AC) as defined now; -1 when
 * libjpeg would refuse it (missing or bad: JERR_NO_HUFF_TABLE, JERR_BAD_HUFF_TABLE). With
 * `check_only` nothing is kept. */
static int table_for(ic__jpeg_dc *dc, int slot, bool check_only) {
    if (!dc->hdef[slot]) return -1;
    for (int i = 0; i < dc->ntables; i++) {
        if (dc->table_slot[i] == slot && dc->table_ver[i] == dc->hver[slot]) return i;
    }
    if (check_only) {
        dc_huff probe;
        return ic__jpeg_dc_build_huff(dc->hbits[slot], dc->hvals[slot], slot < 4, &probe) ? 0 : -1;
    }
    if (dc->ntables == DC_MAX_TABLES) return -1;
    if (ic__dec_reserve(dc->d, sizeof(dc_huff)) != IC_OK) return -1;
    dc->reserved += sizeof(dc_huff);
    dc_huff *grown = realloc(dc->tables, sizeof(dc_huff) * (size_t)(dc->ntables + 1));
    if (!grown) return -1;
    dc->tables = grown;
    if (!ic__jpeg_dc_build_huff(dc->hbits[slot], dc->hvals[slot], slot < 4, &dc->tables[dc->ntables])) return -1;
    dc->table_slot[dc->ntables] = (uint8_t)slot;
    dc->table_ver[dc->ntables] = dc->hver[slot];
    return dc->ntables++;
}

static bool dc_complete(const ic__jpeg_dc *dc) {
    for (int c = 0; c < dc->ncomp; c++) {
        if (dc->comp[c].coef_bits[0] != 0) return false;
    }
    return true;
}

ic__jpeg_dc_step ic__jpeg_dc_add_scan(ic__jpeg_dc *dc, int ncomp, const int *comps, const uint8_t *tables,
                                    int Ss, int Se, int Ah, int Al, size_t start, bool check_only) {
    if (!check_only && dc->nscans == DC_MAX_SCANS) {
        return ic__jpeg_dc_give_way(dc, "more than 32 scans before the DC coefficients are complete");
    }
    bool dc_band = Ss == 0;
    if ((dc_band && Se != 0) || (!dc_band && (Se < Ss || Se > 63 || ncomp != 1)) ||
        (Ah != 0 && Al != Ah - 1) || Al > 13) {
        return ic__jpeg_dc_give_way(dc, "a scan libjpeg refuses (bad progression parameters)");
    }
    if (ncomp > 1) {
        int blocks = 0;
        for (int i = 0; i < ncomp; i++) blocks += dc->comp[comps[i]].h * dc->comp[comps[i]].v;
        if (blocks > DC_MAX_MCU_BLOCKS) return ic__jpeg_dc_give_way(dc, "an MCU of more than 10 blocks");
    }
    dc_scan scan, *s = &scan;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < ncomp; i++) {
        dc_comp *c = &dc->comp[comps[i]];
        const int *bits = c->coef_bits;
        if (dc_band) {
            if (bits[0] != (Ah == 0 ? -1 : Ah)) return ic__jpeg_dc_give_way(dc, "an unusual DC progression");
        } else {
            if (bits[0] < 0) return ic__jpeg_dc_give_way(dc, "an AC scan before its component's DC");
            for (int k = Ss; k <= Se; k++) {
                if (bits[k] != (Ah == 0 ? -1 : Ah)) return ic__jpeg_dc_give_way(dc, "an unusual AC progression");
            }
        }
        if (!c->latched && !dc->qdef[c->qslot]) {
            return ic__jpeg_dc_give_way(dc, "a component without its quantisation table");
        }
        int slot = dc_band ? tables[i] >> 4 : 4 + (tables[i] & 15);
        bool needs_table = !dc_band || Ah == 0;
        if (needs_table) {
            if ((dc_band ? tables[i] >> 4 : tables[i] & 15) > 3) {
                return ic__jpeg_dc_give_way(dc, "a Huffman table number over 3");
            }
            int t = table_for(dc, slot, check_only);
            if (t < 0) return ic__jpeg_dc_give_way(dc, "a missing or invalid Huffman table");
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
static ic__jpeg_dc_step parse_sos(ic__jpeg_dc *dc, const uint8_t *b, size_t len, size_t start,
                                 bool check_only) {
    int n = len ? b[0] : 0;
    if (n < 1 || n > 4 || len != (size_t)(2 * n + 4)) return ic__jpeg_dc_give_way(dc, "a bad SOS segment");
    int comps[4];
    uint8_t tables[4];
    int prev = -1;
    for (int i = 0; i < n; i++) {
        int found = -1;
        for (int c = 0; c < dc->ncomp; c++) {
            if (dc->comp[c].id == b[1 + 2 * i]) found = c;
        }
        /* libjpeg's lookup can miss a component listed after a later one: frame order only. */
        if (found <= prev) return ic__jpeg_dc_give_way(dc, "scan components out of frame order");
        prev = found;
        comps[i] = found;
        tables[i] = b[2 + 2 * i];
    }
    return ic__jpeg_dc_add_scan(dc, n, comps, tables, b[1 + 2 * n], b[2 + 2 * n], b[3 + 2 * n] >> 4,
                    b[3 + 2 * n] & 15, start, check_only);
}

static bool parse_dht(ic__jpeg_dc *dc, const uint8_t *b, size_t len) {
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

static bool parse_dqt(ic__jpeg_dc *dc, const uint8_t *b, size_t len) {
    while (len > 0) {
        int n = b[0] & 15, prec = b[0] >> 4;
        size_t need = 1 + (prec ? 128 : 64);
        if (n >= 4 || prec > 1 || len < need) return false;
        for (int i = 0; i < 64; i++) {
            dc->quant[n][ic__jpeg_dc_natural[i]] = prec ? (uint16_t)(b[1 + 2 * i] << 8 | b[2 + 2 * i]) : b[1 + i];
        }
        dc->qdef[n] = true;
        b += need;
        len -= need;
    }
    return true;
}

/* libjpeg's smoothing_ok, and what decompress_smooth_data latches, once the DC is in. */
static void decide_smoothing(ic__jpeg_dc *dc) {
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

ic__jpeg_dc_step ic__jpeg_dc_walk(ic__jpeg_dc *dc, const uint8_t *data, size_t size, bool eof) {
    if (dc->state == W_DONE) return IC_JPEG_DC_READY;
    if (dc->state == W_GIVEN_WAY) return IC_JPEG_DC_GIVE_WAY;
    if (ic__dec_cancelled(dc->d)) {
        ic__dec_fail_cancelled(dc->d);
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
            if (ic__dec_cancelled(dc->d)) {
                ic__dec_fail_cancelled(dc->d);
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
        if (data[at] != 0xFF) return ic__jpeg_dc_give_way(dc, "bytes between marker segments");
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
                return ic__jpeg_dc_give_way(dc, "the file ends before the DC coefficients are complete");
            }
            dc->end = seg;
            dc->state = W_DONE;
            return IC_JPEG_DC_READY;
        }
        if (!(m == 0xC4 || m == 0xDB || m == 0xDD || m == 0xDA || m == 0xFE || (m >= 0xE0 && m <= 0xEF))) {
            return ic__jpeg_dc_give_way(dc, "a marker other than a table, restart, APPn or COM between scans");
        }
        if (size - seg < 2) goto more;
        size_t len = (size_t)data[seg] << 8 | data[seg + 1];
        if (len < 2) return ic__jpeg_dc_give_way(dc, "a marker segment shorter than its length field");
        if (size - seg < len) goto more;
        const uint8_t *body = data + seg + 2;
        size_t blen = len - 2;
        dc->pos = seg + len;
        switch (m) {
        case 0xC4:
            if (!parse_dht(dc, body, blen)) return ic__jpeg_dc_give_way(dc, "a DHT segment libjpeg refuses");
            break;
        case 0xDB:
            if (!parse_dqt(dc, body, blen)) return ic__jpeg_dc_give_way(dc, "a DQT segment libjpeg refuses");
            break;
        case 0xDD:
            if (blen != 2) return ic__jpeg_dc_give_way(dc, "a DRI segment libjpeg refuses");
            dc->restart = (uint16_t)(body[0] << 8 | body[1]);
            break;
        case 0xDA: {
            bool after = dc->state == W_AFTER;
            ic__jpeg_dc_step st = parse_sos(dc, body, blen, dc->pos, after);
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
    if (eof) return ic__jpeg_dc_give_way(dc, "the file ends before the walk does");
    return IC_JPEG_DC_MORE;
}

const char *ic__jpeg_dc_why(const ic__jpeg_dc *dc) { return dc->why; }
