/*
 * dc_bits.c — the DC decoder's Huffman tables (jdhuff.c's jpeg_make_d_derived_tbl, its
 * checks included); the bit reader that reads with them is inline in dc_bits.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dc_bits.h"

bool ic__jpeg_dc_build_huff(const uint8_t bits[17], const uint8_t vals[256], bool dc_table, dc_huff *h) {
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
