/*
 * ic_store.h — the disk tier: one file per key, holding either a decoded
 * bitmap (filtered, LZ4-compressed rows) or the original encoded bytes.
 *
 * FILES
 *   <dir>/<hex>.ikc   an entry; <hex> is the SHA-256 of (kind byte, key bytes)
 *                     in lower-case hex (64 digits). The full key is stored in
 *                     the header and compared on read, so a hash collision is a
 *                     miss, never another key's image.
 *   <dir>/.tmp-*      a write in progress. Every write goes to a temporary file
 *                     in the same directory and is renamed over the entry, so a
 *                     reader sees the old file or the new one, never a mix.
 *                     ic_store_scan removes temporary files left by crashed
 *                     writers once they are older than a given age.
 *
 * FORMAT, version 1. All integers little-endian.
 *
 *   offset size  field
 *    0      8    magic 89 49 4B 43 0D 0A 1A 0A  ("\x89IKC\r\n\x1a\n")
 *    8      2    format version (1)
 *   10      2    size of this fixed header (96)
 *   12      1    kind: 1 bitmap, 2 data (original encoded bytes)
 *   13      1    filter applied before LZ4 (ic_store_filter, 0..3; 0 for data)
 *   14      1    flags: bit 0 every pixel opaque, bit 1 orientation applied;
 *                other bits 0
 *   15      1    EXIF orientation found in the source (1..8; 0 for data)
 *   16      4    width          (bitmap; 0 for data)
 *   20      4    height         (bitmap; 0 for data)
 *   24      4    frame count    (bitmap, >= 1; 0 for data)
 *   28      4    pixel format   (bitmap: 1 = premultiplied RGBA8; 0 for data)
 *   32      4    source format  (ic_format of the bytes the bitmap came from)
 *   36      4    source width   (as stored in the source file)
 *   40      4    source height
 *   44      4    animation loop count
 *   48      8    raw size: payload bytes before filtering and compression
 *                (bitmap: width * 4 * height * frames, rows tightly packed)
 *   56      4    chunk size: raw bytes per chunk (bitmap: a whole number of rows)
 *   60      4    key length        (1 .. IC_STORE_MAX_KEY_BYTES)
 *   64      8    creation time, ms since the Unix epoch
 *   72      8    expiry time, ms since the Unix epoch (0 = none)
 *   80      4    ETag length           (0 .. IC_STORE_MAX_ETAG_BYTES)
 *   84      4    Last-Modified length  (0 .. IC_STORE_MAX_LAST_MODIFIED_BYTES)
 *   88      4    caller metadata length (0 .. IC_STORE_MAX_USER_DATA_BYTES)
 *   92      4    frame delay count (frame count for animations, else 0)
 *   96      ...  key, ETag, Last-Modified, caller metadata (raw bytes, no NUL),
 *                then the frame delays (u32 ms each)
 *   then    8    header checksum: XXH64 (seed 0) of every byte before it
 *   then         the payload: n = ceil(raw size / chunk size) chunks back to
 *                back, each the LZ4 block (or the plain bytes) of one
 *                filtered chunk (writers keep the LZ4 block only when it saves
 *                enough; see ic_store_write_options)
 *   then  12*n   the chunk table, one record per chunk:
 *                  4  stored size; bit 31 set = stored without LZ4
 *                  8  XXH64 (seed 0) of the stored bytes
 *   then    8    XXH64 (seed 0) of the chunk table; the file ends here
 *
 *   Filters work on whole rows and restart at every chunk: the first row of a
 *   chunk has a zero row above it, so chunks decode independently (and in
 *   parallel; the table gives every chunk's offset). RGB filters keep R, G, B
 *   only (3 bytes a pixel) and are used only when every alpha is 255.
 *     0 none    the premultiplied RGBA bytes
 *     1 up      each byte minus the byte above it (mod 256)
 *     2 rgb     R, G, B of each pixel
 *     3 rgb-up  R, G, B of each pixel minus those of the pixel above
 *
 * READING never trusts the file: lengths, counts and sizes are bounded (and
 * the chunk table must account for every payload byte) before the output is
 * allocated, checksums are verified before pixels are returned,
 * and a file with a bad magic, size, structure or checksum reads as
 * IC_ERR_CORRUPT (and is deleted by ic_store_read). A file of a newer format
 * version, or holding another key, reads as IC_ERR_NOT_FOUND and is kept.
 *
 * Every call is reentrant; the store keeps no state between calls.
 *
 * FUZZING: built with -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (never in a
 * normal build) the reader accepts any checksum, so a fuzzer feeding
 * ic_store_decode reaches the parsing and decompression behind them.
 */
#ifndef IC_STORE_H
#define IC_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "ic_error.h"
#include "ic_image.h"
#include "ic_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version written by this library and the only one it reads. */
#define IC_STORE_FORMAT_VERSION 1
/** Size of the fixed part of the header. */
#define IC_STORE_FIXED_HEADER_SIZE 96
/** Longest key. */
#define IC_STORE_MAX_KEY_BYTES (64u * 1024u)
/** Longest ETag. */
#define IC_STORE_MAX_ETAG_BYTES 8192u
/** Longest Last-Modified value. */
#define IC_STORE_MAX_LAST_MODIFIED_BYTES 1024u
/** Most caller metadata. */
#define IC_STORE_MAX_USER_DATA_BYTES (1024u * 1024u)
/** Most frames of a stored animation. */
#define IC_STORE_MAX_FRAMES 100000u
/** Largest chunk (raw bytes); a bitmap row must fit in one. */
#define IC_STORE_MAX_CHUNK_BYTES (64u * 1024u * 1024u)
/** Chunk size writes use unless told otherwise. */
#define IC_STORE_DEFAULT_CHUNK_BYTES (512u * 1024u)
/** Largest payload a read accepts unless told otherwise (4 GiB). */
#define IC_STORE_DEFAULT_MAX_BYTES ((uint64_t)4 << 30)
/** Bytes of an entry file name, NUL included: 64 hex digits, ".ikc". */
#define IC_STORE_NAME_CAPACITY 72

/** What an entry holds. */
typedef enum ic_store_kind {
    /** A decoded bitmap (ic_image). */
    IC_STORE_KIND_BITMAP = 1,
    /** Bytes as given, e.g. the original encoded file. */
    IC_STORE_KIND_DATA = 2
} ic_store_kind;

/** Reversible transform of bitmap rows before LZ4 (see the format above). */
typedef enum ic_store_filter {
    IC_STORE_FILTER_NONE = 0,
    IC_STORE_FILTER_UP = 1,
    IC_STORE_FILTER_RGB = 2,
    IC_STORE_FILTER_RGB_UP = 3,
    /** Write option only: rgb for opaque bitmaps (fastest to decode, and a quarter smaller before
     *  LZ4), up for the others (smallest); chosen by the measurements in Benchmarks/CacheBenchmarks. */
    IC_STORE_FILTER_AUTO = 255
} ic_store_filter;

/** When a write forces data to stable storage. */
typedef enum ic_store_sync {
    /** Never: a power loss may lose recent entries; checksums turn any damage into misses. */
    IC_STORE_SYNC_NONE = 0,
    /** fdatasync the file before renaming it into place. */
    IC_STORE_SYNC_FILE = 1,
    /** As FILE, and fsync the directory after the rename. */
    IC_STORE_SYNC_FULL = 2
} ic_store_sync;

/** HTTP validators and caller data stored with an entry. Lengths count bytes. */
typedef struct ic_store_meta {
    /** Creation time, ms since the Unix epoch; 0 = now. */
    int64_t created_ms;
    /** Expiry time, ms since the Unix epoch; 0 = none. */
    int64_t expires_ms;
    const char *etag;
    size_t etag_length;
    const char *last_modified;
    size_t last_modified_length;
    const uint8_t *user_data;
    size_t user_data_length;
} ic_store_meta;

/** One entry to write. */
typedef struct ic_store_entry {
    /** The key, any bytes (typically UTF-8). */
    const char *key;
    size_t key_length;
    ic_store_kind kind;
    /** The bitmap, for IC_STORE_KIND_BITMAP. */
    const ic_image *image;
    /** The bytes, for IC_STORE_KIND_DATA. */
    const uint8_t *data;
    size_t data_size;
    ic_store_meta meta;
} ic_store_entry;

/** How writes encode and sync. Start from ic_store_write_options_init. */
typedef struct ic_store_write_options {
    /** ic_store_filter; IC_STORE_FILTER_AUTO by default. An rgb filter on a bitmap that is
     *  not opaque falls back to the matching RGBA filter. */
    int filter;
    /** IC_STORE_SYNC_NONE by default. */
    ic_store_sync sync;
    /** A chunk keeps its LZ4 block only when that saves at least this percentage of its
     *  (filtered) bytes, else it is stored plain: decompressing costs more time than reading
     *  the bytes a small saving saves. Default 12 (an eighth); 50 keeps LZ4 only where it
     *  halves a chunk (flat areas), so photos decode at memory speed. */
    int min_lz4_saving_percent;
    /** Raw bytes per chunk; 0 = IC_STORE_DEFAULT_CHUNK_BYTES. Rounded down to whole rows. */
    uint32_t chunk_bytes;
} ic_store_write_options;

/** Part `part` of a read split into parts; see ic_store_run_parts_fn. */
typedef void (*ic_store_part_fn)(void *arg, uint32_t part);

/**
 * Runs a read's parts for the store, on the caller's threads (the store starts
 * none): calls part(arg, 0) ... part(arg, count - 1), each exactly once, in any
 * order and on any threads (the calling thread among them, typically), and
 * returns once every call has returned. The parts write disjoint memory.
 */
typedef void (*ic_store_run_parts_fn)(void *context, uint32_t count, ic_store_part_fn part,
                                      void *arg);

/** How reads validate. Start from ic_store_read_options_init. */
typedef struct ic_store_read_options {
    /** Largest payload accepted (IC_ERR_LIMIT_EXCEEDED above it); default IC_STORE_DEFAULT_MAX_BYTES. */
    uint64_t max_bytes;
    /** ic_store_read sets the file's modification time to now on a hit when it is older than
     *  this many ms (it is the last-access time the size and age limits go by); default 60000.
     *  Negative = never. */
    int64_t touch_after_ms;
    /** ic_store_read deletes a corrupt file (default 1). */
    int remove_corrupt;
    /** Most threads decoding one entry: a payload of IC_STORE_PARALLEL_MIN_BYTES or more is
     *  split into up to this many parts (at most 16) for run_parts (default 1: no split). */
    int threads;
    /** Runs the parts of a split read (NULL: reads are not split and run on the calling
     *  thread alone). */
    ic_store_run_parts_fn run_parts;
    /** Passed to run_parts. */
    void *run_parts_context;
    /** Pool the image's pixels and the read buffers come from and return to (NULL: none). */
    ic_pool *pool;
} ic_store_read_options;

/** Smallest payload ic_store_read_options.threads splits. */
#define IC_STORE_PARALLEL_MIN_BYTES ((uint64_t)4 << 20)

/** An entry read back. Free its contents with ic_store_record_free. */
typedef struct ic_store_record {
    ic_store_kind kind;
    /** The bitmap (kind BITMAP). Owned by the record; set it to NULL to take it. */
    ic_image *image;
    /** The bytes (kind DATA), from malloc. Owned by the record; set it to NULL to take it. */
    uint8_t *data;
    size_t data_size;
    /** Filter the payload was stored with. */
    ic_store_filter filter;
    /** Size of the file (or buffer) the entry was read from. */
    uint64_t stored_size;
    /** Last access before this read, ms since the Unix epoch (the file's modification time; 0 in memory). */
    int64_t accessed_ms;
    /** Times, validators and caller data as written; the pointers point into the record
     *  and are NULL when absent. */
    ic_store_meta meta;

    /* Private. */
    void *ic_strings;
} ic_store_record;

/** Facts about a file a write produced. */
typedef struct ic_store_written {
    char name[IC_STORE_NAME_CAPACITY];
    uint64_t size;
    /** 1 if the directory was missing (e.g. deleted underneath) and the write created it. */
    int directory_created;
} ic_store_written;

/** One entry file found by ic_store_scan. */
typedef struct ic_store_file {
    char name[IC_STORE_NAME_CAPACITY];
    /** Bytes. */
    uint64_t size;
    /** Modification time (= last access), ms since the Unix epoch. */
    int64_t modified_ms;
} ic_store_file;

/** The entry files of a directory. Free with ic_store_listing_free. */
typedef struct ic_store_listing {
    ic_store_file *files;
    size_t count;
} ic_store_listing;

/** Defaults: AUTO filter, no sync, LZ4 where it saves 12 %, default chunk size. */
void ic_store_write_options_init(ic_store_write_options *options);

/** Defaults: max_bytes IC_STORE_DEFAULT_MAX_BYTES, touch after 60 s, remove corrupt files, one
 *  thread (no run_parts), no pool. */
void ic_store_read_options_init(ic_store_read_options *options);

/** The file name of (kind, key): 64 hex digits of SHA-256 and ".ikc". */
void ic_store_entry_name(ic_store_kind kind, const char *key, size_t key_length,
                         char name[IC_STORE_NAME_CAPACITY]);

/** 1 if `name` has the form of an entry file name. */
int ic_store_is_entry_name(const char *name);

/**
 * Encodes `entry` in the file format into a new buffer (*out, from malloc,
 * *out_size bytes). What ic_store_write puts in a file.
 */
ic_status ic_store_encode(const ic_store_entry *entry, const ic_store_write_options *options,
                          uint8_t **out, size_t *out_size, ic_error *err);

/**
 * Decodes an entry from `size` bytes, checking it holds (kind, key). Returns
 * IC_OK, IC_ERR_CORRUPT for anything malformed, IC_ERR_NOT_FOUND for another
 * key or kind or a newer format version, IC_ERR_LIMIT_EXCEEDED, or
 * IC_ERR_OUT_OF_MEMORY. `out` is filled only on IC_OK.
 */
ic_status ic_store_decode(const uint8_t *bytes, size_t size, ic_store_kind kind, const char *key,
                          size_t key_length, const ic_store_read_options *options,
                          ic_store_record *out, ic_error *err);

/**
 * Writes `entry` to `dir` (created, with its parents, if missing) through a
 * temporary file renamed into place. Fails with IC_ERR_NO_SPACE on ENOSPC or
 * EDQUOT, IC_ERR_IO otherwise; a failed write leaves no file behind.
 * `written` (may be NULL) receives the file name and size.
 */
ic_status ic_store_write(const char *dir, const ic_store_entry *entry,
                         const ic_store_write_options *options, ic_store_written *written,
                         ic_error *err);

/**
 * Reads the entry (kind, key) from `dir`. IC_ERR_NOT_FOUND when there is none
 * (or the file holds another key or a newer version); IC_ERR_CORRUPT when the
 * file is damaged (and then deleted unless options say otherwise).
 */
ic_status ic_store_read(const char *dir, ic_store_kind kind, const char *key, size_t key_length,
                        const ic_store_read_options *options, ic_store_record *out, ic_error *err);

/** Frees what a record owns (not the record itself). NULL is allowed. */
void ic_store_record_free(ic_store_record *record);

/** Deletes the entry file `name` from `dir`. IC_ERR_NOT_FOUND if it is not there. */
ic_status ic_store_remove(const char *dir, const char *name, ic_error *err);

/** Creates `dir` and its missing parents. */
ic_status ic_store_create_directory(const char *dir, ic_error *err);

/**
 * Lists the entry files of `dir` (an empty listing if it does not exist) and
 * deletes temporary files older than `temp_max_age_ms`. Other files are left alone.
 */
ic_status ic_store_scan(const char *dir, int64_t temp_max_age_ms, ic_store_listing *out,
                        ic_error *err);

/** Frees a listing's files. NULL is allowed. */
void ic_store_listing_free(ic_store_listing *listing);

/** Deletes every entry file of `dir`; *removed (may be NULL) counts them. */
ic_status ic_store_clear(const char *dir, size_t *removed, ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_STORE_H */
