/*
 * ic_hash.h — SHA-256 (file names of the disk tier, the CLI's pixel digests) and
 * XXH64 (the disk tier's checksums: fast, not cryptographic).
 */
#ifndef IC_HASH_H
#define IC_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Incremental SHA-256 state. */
typedef struct ic_sha256 {
    uint32_t state[8];
    uint64_t length;
    uint8_t block[64];
    size_t block_used;
} ic_sha256;

/** Starts a digest. */
void ic_sha256_init(ic_sha256 *ctx);
/** Adds bytes. */
void ic_sha256_update(ic_sha256 *ctx, const void *data, size_t size);
/** Finishes and writes the 32-byte digest. */
void ic_sha256_final(ic_sha256 *ctx, uint8_t digest[32]);

/**
 * XXH64 of `size` bytes with `seed`, written from the published xxHash
 * specification. Several GB/s; detects damage, not tampering.
 */
uint64_t ic_xxh64(const void *data, size_t size, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* IC_HASH_H */
