/*
 * codec_libs.c — libavif, libheif (and libde265 for it), libjxl and libimagequant, opened with
 * dlopen on first use.
 *
 * Those libraries and what they pull in (AV1 and HEVC encoders and decoders, libstdc++
 * users, the OpenMP runtime) cost a few megabytes of resident pages in every process that
 * maps them, one that only ever decodes JPEG included. The C core therefore does not link them: each is opened by the
 * first call that needs it, through its ic_*_load (pthread_once per library), which resolves
 * the functions the core calls (the X lists of ic_avif_lib.h, ic_heif_lib.h, ic_de265_lib.h,
 * ic_jxl_lib.h, ic_liq_lib.h)
 * into a table the format files call through. After that one write under pthread_once the
 * table is only read, from any thread; a library is never closed, so its functions stay valid
 * for the life of the process.
 *
 * Each library is looked up by its Debian 12 soname first, the ABI the core is written for,
 * then by its unversioned name, the link its -dev package installs next to the headers the
 * core was compiled with. When neither opens, or a function is missing, the load fails the
 * same way every time: the decode, probe or encode that asked fails with
 * IC_ERR_UNSUPPORTED_FORMAT and "AVIF: libavif.so.15 could not be loaded: <dlerror>" (the
 * dlerror of the soname, the more telling of the two); nothing else in the process is
 * affected, and sniffing never needs a library.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define IC_CODEC_LIBS_LOADER
#include "../common/ic_common_internal.h"
#include "ic_avif_lib.h"
#include "ic_de265_lib.h"
#include "ic_heif_lib.h"
#include "ic_jxl_lib.h"
#include "ic_heif_testing.h"
#include "ic_liq_lib.h"

/** One library's state: written once under `once`, read only afterwards. */
typedef struct codec_lib {
    /** The Debian 12 soname. */
    const char *soname;
    /** The unversioned name the -dev package links to the headers' version. */
    const char *dev_name;
    pthread_once_t once;
    /** The name that opened, for messages. */
    const char *opened;
    /** Whether the library opened and every function was found. */
    bool loaded;
    /** Why it is not loaded, for messages. */
    char why[200];
    /** Checks the library once its table is complete (NULL: none); false with `why` set. */
    bool (*check)(struct codec_lib *lib);
} codec_lib;

static bool heif_version_ok(codec_lib *lib);

static codec_lib avif_lib = {.soname = "libavif.so.15", .dev_name = "libavif.so", .once = PTHREAD_ONCE_INIT};
static codec_lib heif_lib = {.soname = "libheif.so.1", .dev_name = "libheif.so", .once = PTHREAD_ONCE_INIT,
                             .check = heif_version_ok};
static codec_lib de265_lib = {.soname = "libde265.so.0", .dev_name = "libde265.so", .once = PTHREAD_ONCE_INIT};
static codec_lib jxl_lib = {.soname = "libjxl.so.0.7", .dev_name = "libjxl.so", .once = PTHREAD_ONCE_INIT};
static codec_lib liq_lib = {.soname = "libimagequant.so.0", .dev_name = "libimagequant.so",
                            .once = PTHREAD_ONCE_INIT};

ic__avif_functions ic__avif_fn;
ic__heif_functions ic__heif_fn;
ic__de265_functions ic__de265_fn;
ic__jxl_functions ic__jxl_fn;
ic__liq_functions ic__liq_fn;

/* Opens the library by its soname, else its unversioned name; NULL with lib->why set. */
static void *open_lib(codec_lib *lib) {
    lib->opened = lib->soname;
    void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (handle) return handle;
    const char *why = dlerror();
    snprintf(lib->why, sizeof lib->why, "%s could not be loaded: %s", lib->soname, why ? why : "unknown error");
    lib->opened = lib->dev_name;
    return dlopen(lib->dev_name, RTLD_NOW | RTLD_LOCAL);
}

/* The address of `name` in `handle`; NULL with lib->why set when the library lacks it. */
static void *find(codec_lib *lib, void *handle, const char *name) {
    void *fn = dlsym(handle, name);
    if (!fn) snprintf(lib->why, sizeof lib->why, "%s has no function %s", lib->opened, name);
    return fn;
}

/* Marks the library loaded, or, when a function was missing, clears its table and closes it
 * (nothing of it was called). */
static void finish(codec_lib *lib, void *handle, bool complete, void *table, size_t table_size) {
    if (complete) {
        lib->loaded = true;
        lib->why[0] = '\0';
    } else {
        memset(table, 0, table_size);
        dlclose(handle);
    }
}

/* Each load opens its library and fills its table in list order, stopping at the first
 * function the library lacks (FIND chains the lookups with &&); ic__*_load runs it
 * once and reports its outcome. */
#define FIND(name) &&(table->name = (__typeof__(table->name))find(lib, handle, #name))
#define LOADER(prefix, LIST)                                                                    \
    static void load_##prefix(void) {                                                           \
        codec_lib *lib = &prefix##_lib;                                                         \
        __typeof__(ic__##prefix##_fn) *table = &ic__##prefix##_fn;                               \
        void *handle = open_lib(lib);                                                           \
        if (!handle) return;                                                                    \
        bool complete = true LIST(FIND);                                                        \
        if (complete && lib->check) complete = lib->check(lib);                                 \
        finish(lib, handle, complete, table, sizeof *table);                                    \
    }                                                                                           \
    ic_status ic__##prefix##_load(const char *format, ic_error *err) {                         \
        pthread_once(&prefix##_lib.once, load_##prefix);                                        \
        return outcome(&prefix##_lib, format, err);                                             \
    }

/* The outcome of the library's one load, as a status and message for `format`. */
static ic_status outcome(const codec_lib *lib, const char *format, ic_error *err) {
    if (lib->loaded) return IC_OK;
    return ic__set_error(err, IC_ERR_UNSUPPORTED_FORMAT, "%s: %s", format, lib->why);
}

LOADER(avif, IC_AVIF_FUNCTIONS)
LOADER(heif, IC_HEIF_FUNCTIONS)
LOADER(de265, IC_DE265_FUNCTIONS)
LOADER(jxl, IC_JXL_FUNCTIONS)
LOADER(liq, IC_LIQ_FUNCTIONS)

/* Writes why a libheif of `version_number` is not the mirrored release into why[0..size);
 * false when it is. */
static bool heif_version_mismatch(uint32_t version_number, char *why, size_t size) {
    uint32_t major = version_number >> 24, minor = version_number >> 16 & 0xFF;
    if ((major << 8 | minor) == IC_HEIF_MIRRORED_VERSION) return false;
    snprintf(why, size,
             "libheif %u.%u.%u is installed, but ImageKit's HEIF decoder is written for libheif %u.%u "
             "(Sources/CImageCore/decode/heif/README.md): install libheif %u.%u",
             major, minor, version_number >> 8 & 0xFF, IC_HEIF_MIRRORED_VERSION >> 8,
             IC_HEIF_MIRRORED_VERSION & 0xFF, IC_HEIF_MIRRORED_VERSION >> 8, IC_HEIF_MIRRORED_VERSION & 0xFF);
    return true;
}

static bool heif_version_ok(codec_lib *lib) {
    return !heif_version_mismatch(ic__heif_fn.heif_get_version_number(), lib->why, sizeof lib->why);
}

ic_status ic_heif_check_version(uint32_t version_number, ic_error *err) {
    char why[200];
    if (!heif_version_mismatch(version_number, why, sizeof why)) return IC_OK;
    return ic__set_error(err, IC_ERR_UNSUPPORTED_FORMAT, "HEIF: %s", why);
}
