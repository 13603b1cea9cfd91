/*
 * dc_bits.h — the DC decoder's bottom layer (see jpeg_dc.c): Huffman tables as
 * jdhuff.c's jpeg_make_d_derived_tbl derives them, and the bit reader over
 * entropy-coded data, jdhuff.c's with its marker rules. Inline: the entropy decoder
 * (dc_entropy.c) calls it for every symbol. Not installed.
 */
#ifndef IC_JPEG_DC_BITS_H
#define IC_JPEG_DC_BITS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- Huffman tables. ---- */

typedef struct dc_huff {
    uint16_t fast[512]; /* 9-bit lookahead: length << 8 | symbol; 0 for longer codes */
    int32_t maxcode[18];
    int32_t valoffset[18];
    uint8_t vals[256];
} dc_huff;

/* Derives `h` from a DHT table's counts and symbols (dc_bits.c). False when libjpeg would
 * refuse the table (JERR_BAD_HUFF_TABLE). */
bool ic__jpeg_dc_build_huff(const uint8_t bits[17], const uint8_t vals[256], bool dc_table, dc_huff *h);

/* ---- The bit reader. ---- */

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

#endif /* IC_JPEG_DC_BITS_H */
