/*
 * ic_bytes.h — reading and writing the fixed-size integers of file formats (big- and
 * little-endian), byte by byte: no alignment needed, the same on every CPU. The one
 * copy every container walk uses. Not installed.
 */
#ifndef IC_BYTES_H
#define IC_BYTES_H

#include <stdint.h>

/** The big-endian 16-bit value at p[0..2). */
static inline uint32_t ic__be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }

/** The big-endian 32-bit value at p[0..4). */
static inline uint32_t ic__be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/** The little-endian 16-bit value at p[0..2). */
static inline uint32_t ic__le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

/** The little-endian 32-bit value at p[0..4). */
static inline uint32_t ic__le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/** Writes `v` big-endian at p[0..4). */
static inline void ic__put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

#endif /* IC_BYTES_H */
