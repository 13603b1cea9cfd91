/*
 * store.c — the disk tier's files and directories: entry names, atomic
 * writes (temporary file + rename), reads that delete what they find
 * corrupt, removal, scanning and clearing. The bytes inside a file are
 * store_encode.c's and store_decode.c's business.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/ic_common_internal.h"
#include "ic_hash.h"
#include "ic_store_internal.h"
#include "ic_store_testing.h"

#define ENTRY_SUFFIX ".ikc"
#define TEMP_PREFIX ".tmp-"

void ic_store_entry_name(ic_store_kind kind, const char *key, size_t key_length,
                         char name[IC_STORE_NAME_CAPACITY]) {
    static const char hex[] = "0123456789abcdef";
    uint8_t kind_byte = (uint8_t)kind;
    uint8_t digest[32];
    ic_sha256 sha;
    ic_sha256_init(&sha);
    ic_sha256_update(&sha, &kind_byte, 1);
    ic_sha256_update(&sha, key, key_length);
    ic_sha256_final(&sha, digest);
    for (int i = 0; i < 32; i++) {
        name[2 * i] = hex[digest[i] >> 4];
        name[2 * i + 1] = hex[digest[i] & 15];
    }
    memcpy(name + 64, ENTRY_SUFFIX, sizeof ENTRY_SUFFIX);
}

int ic_store_is_entry_name(const char *name) {
    if (!name || strlen(name) != 64 + strlen(ENTRY_SUFFIX)) return 0;
    for (int i = 0; i < 64; i++) {
        char c = name[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
    }
    return strcmp(name + 64, ENTRY_SUFFIX) == 0;
}

static int is_temp_name(const char *name) {
    return strncmp(name, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0;
}

static int64_t mtime_ms(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* out = dir + "/" + name; fails when it does not fit in PATH_MAX. */
static ic_status join(char out[PATH_MAX], const char *dir, const char *name, ic_error *err) {
    if (!dir || !*dir) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: empty directory path");
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    if (n < 0 || n >= PATH_MAX) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: path too long in %s", dir);
    }
    return IC_OK;
}

ic_status ic_store_create_directory(const char *dir, ic_error *err) {
    char path[PATH_MAX];
    if (!dir || !*dir) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: empty directory path");
    size_t len = strlen(dir);
    if (len >= sizeof path) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: path too long: %s", dir);
    memcpy(path, dir, len + 1);
    /* Create each missing ancestor, then the directory itself. */
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            path[i] = saved;
            return ic__sys_error(err, e, "store: cannot create directory %s", dir);
        }
        path[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0) return ic__sys_error(err, errno, "store: cannot create directory %s", dir);
    if (!S_ISDIR(st.st_mode)) return ic__set_error(err, IC_ERR_IO, "store: %s is not a directory", dir);
    return IC_OK;
}

/* Opens a new temporary file next to the entry, creating the directory if it vanished. */
static ic_status open_temp(const char *dir, const char *name, char path[PATH_MAX], int *fd, bool *created,
                           ic_error *err) {
    int n = snprintf(path, PATH_MAX, "%s/" TEMP_PREFIX "%.16s-XXXXXX", dir, name);
    if (n < 0 || n >= PATH_MAX) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: path too long in %s", dir);
    char template_copy[PATH_MAX];
    memcpy(template_copy, path, (size_t)n + 1);
    *fd = mkostemp(path, O_CLOEXEC);
    if (*fd < 0 && errno == ENOENT) {
        ic_status st = ic_store_create_directory(dir, err);
        if (st != IC_OK) return st;
        *created = true;
        memcpy(path, template_copy, (size_t)n + 1);
        *fd = mkostemp(path, O_CLOEXEC);
    }
    return *fd < 0 ? ic__sys_error(err, errno, "store: cannot create a file in %s", dir) : IC_OK;
}

/* ic_store_write, with a write fault injected into the sink when fault_errno is not 0. */
static ic_status write_entry(const char *dir, const ic_store_entry *entry, const ic_store_write_options *options,
                             int fault_errno, uint64_t fault_after_bytes, ic_store_written *written,
                             ic_error *err) {
    if (!entry || !entry->key) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL entry");
    ic_store_write_options defaults;
    if (!options) {
        ic_store_write_options_init(&defaults);
        options = &defaults;
    }
    char name[IC_STORE_NAME_CAPACITY], final_path[PATH_MAX], temp_path[PATH_MAX];
    ic_store_entry_name(entry->kind, entry->key, entry->key_length, name);
    ic_status st = join(final_path, dir, name, err);
    if (st != IC_OK) return st;
    int fd = -1;
    bool created = false;
    if ((st = open_temp(dir, name, temp_path, &fd, &created, err)) != IC_OK) return st;

    ic__sink sink = {.fd = fd, .fault_errno = fault_errno, .fault_after_bytes = fault_after_bytes};
    st = ic__store_encode_to(entry, options, &sink, err);
    if (st == IC_OK && options->sync != IC_STORE_SYNC_NONE && fdatasync(fd) != 0) {
        st = ic__sys_error(err, errno, "store: cannot sync %s", temp_path);
    }
    if (close(fd) != 0 && errno != EINTR && st == IC_OK) {
        st = ic__sys_error(err, errno, "store: cannot close %s", temp_path);
    }
    if (st == IC_OK && rename(temp_path, final_path) != 0) {
        st = ic__sys_error(err, errno, "store: cannot rename into %s", final_path);
    }
    if (st != IC_OK) {
        unlink(temp_path);
        return st;
    }
    if (options->sync == IC_STORE_SYNC_FULL) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) != 0) st = ic__sys_error(err, errno, "store: cannot sync directory %s", dir);
        if (dfd >= 0) close(dfd);
    }
    if (written) {
        memcpy(written->name, name, sizeof name);
        written->size = sink.written;
        written->directory_created = created ? 1 : 0;
    }
    return st;
}

ic_status ic_store_write(const char *dir, const ic_store_entry *entry, const ic_store_write_options *options,
                         ic_store_written *written, ic_error *err) {
    return write_entry(dir, entry, options, 0, 0, written, err);
}

ic_status ic_store_write_with_fault(const char *dir, const ic_store_entry *entry,
                                    const ic_store_write_options *options, int fault_errno,
                                    uint64_t fault_after_bytes, ic_store_written *written, ic_error *err) {
    return write_entry(dir, entry, options, fault_errno, fault_after_bytes, written, err);
}

/* Deletes `path` if it is still the file `seen` (another writer may have replaced it). */
static void remove_if_same(const char *path, const struct stat *seen) {
    struct stat now;
    if (stat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev) unlink(path);
}

ic_status ic_store_read(const char *dir, ic_store_kind kind, const char *key, size_t key_length,
                        const ic_store_read_options *options, ic_store_record *out, ic_error *err) {
    if (!key || !out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL argument");
    ic_store_read_options defaults;
    if (!options) {
        ic_store_read_options_init(&defaults);
        options = &defaults;
    }
    char name[IC_STORE_NAME_CAPACITY], path[PATH_MAX];
    ic_store_entry_name(kind, key, key_length, name);
    ic_status st = join(path, dir, name, err);
    if (st != IC_OK) return st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return ic__set_error(err, IC_ERR_NOT_FOUND, "store: no entry");
        return ic__sys_error(err, errno, "store: cannot open %s", path);
    }
    struct stat info;
    if (fstat(fd, &info) != 0) {
        st = ic__sys_error(err, errno, "store: cannot stat %s", path);
    } else if (!S_ISREG(info.st_mode)) {
        st = ic__set_error(err, IC_ERR_NOT_FOUND, "store: %s is not a regular file", path);
    } else {
        ic__source source = {.fd = fd, .size = (uint64_t)info.st_size, .pool = options->pool};
        st = ic__store_decode_from(&source, kind, key, key_length, options, out, err);
        ic__source_release(&source);
    }
    if (st == IC_OK) {
        out->accessed_ms = mtime_ms(&info);
        if (options->touch_after_ms >= 0 && ic__realtime_ms() - out->accessed_ms > options->touch_after_ms) {
            /* The modification time is the last access the age and size limits go by. */
            (void)futimens(fd, NULL);
        }
    } else if (st == IC_ERR_CORRUPT && options->remove_corrupt) {
        remove_if_same(path, &info);
    }
    close(fd);
    return st;
}

ic_status ic_store_remove(const char *dir, const char *name, ic_error *err) {
    if (!ic_store_is_entry_name(name)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: not an entry name: %s", name ? name : "(null)");
    }
    char path[PATH_MAX];
    ic_status st = join(path, dir, name, err);
    if (st != IC_OK) return st;
    if (unlink(path) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return ic__set_error(err, IC_ERR_NOT_FOUND, "store: no entry %s", name);
        return ic__sys_error(err, errno, "store: cannot remove %s", path);
    }
    return IC_OK;
}

/* Calls `visit` for each directory entry name; a missing directory has none. */
typedef ic_status (*visit_fn)(int dirfd, const char *name, void *ctx, ic_error *err);

static ic_status each_name(const char *dir, visit_fn visit, void *ctx, ic_error *err) {
    if (!dir || !*dir) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: empty directory path");
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return IC_OK;
        return ic__sys_error(err, errno, "store: cannot open directory %s", dir);
    }
    ic_status st = IC_OK;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno != 0) st = ic__sys_error(err, errno, "store: cannot list %s", dir);
            break;
        }
        if ((st = visit(dirfd(d), de->d_name, ctx, err)) != IC_OK) break;
    }
    closedir(d);
    return st;
}

typedef struct scan_state {
    ic_store_listing *listing;
    size_t capacity;
    int64_t now_ms;
    int64_t temp_max_age_ms;
} scan_state;

static ic_status scan_one(int dfd, const char *name, void *ctx, ic_error *err) {
    scan_state *s = ctx;
    bool entry = ic_store_is_entry_name(name);
    if (!entry && !is_temp_name(name)) return IC_OK;
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return IC_OK;
    if (!entry) {
        /* A temporary file a crashed writer left behind (a live writer's is younger). */
        if (s->now_ms - mtime_ms(&st) > s->temp_max_age_ms) (void)unlinkat(dfd, name, 0);
        return IC_OK;
    }
    ic_store_listing *l = s->listing;
    if (l->count == s->capacity) {
        size_t cap = s->capacity ? s->capacity * 2 : 256;
        ic_store_file *grown = cap > SIZE_MAX / sizeof *grown ? NULL : realloc(l->files, cap * sizeof *grown);
        if (!grown) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "store: cannot list %zu entries", cap);
        l->files = grown;
        s->capacity = cap;
    }
    ic_store_file *f = &l->files[l->count++];
    memcpy(f->name, name, strlen(name) + 1);
    f->size = (uint64_t)st.st_size;
    f->modified_ms = mtime_ms(&st);
    return IC_OK;
}

ic_status ic_store_scan(const char *dir, int64_t temp_max_age_ms, ic_store_listing *out, ic_error *err) {
    if (!out) return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "store: NULL listing");
    out->files = NULL;
    out->count = 0;
    scan_state s = {.listing = out, .now_ms = ic__realtime_ms(), .temp_max_age_ms = temp_max_age_ms};
    ic_status st = each_name(dir, scan_one, &s, err);
    if (st != IC_OK) ic_store_listing_free(out);
    return st;
}

void ic_store_listing_free(ic_store_listing *listing) {
    if (!listing) return;
    free(listing->files);
    listing->files = NULL;
    listing->count = 0;
}

static ic_status clear_one(int dfd, const char *name, void *ctx, ic_error *err) {
    (void)err;
    if (ic_store_is_entry_name(name) && unlinkat(dfd, name, 0) == 0) ++*(size_t *)ctx;
    return IC_OK;
}

ic_status ic_store_clear(const char *dir, size_t *removed, ic_error *err) {
    size_t count = 0;
    ic_status st = each_name(dir, clear_one, &count, err);
    if (removed) *removed = count;
    return st;
}
