/*
 * codec_libs.c — libavif, libheif and libjxl, opened with dlopen on first use.
 *
 * Those three libraries and what they pull in (AV1 and HEVC encoders and decoders, libstdc++
 * users) cost a few megabytes of resident pages in every process that maps them, one that only
 * ever decodes JPEG included. The C core therefore does not link them: each is opened by the
 * first call that needs it, through its ic_*_load (pthread_once per library), which resolves
 * the functions the core calls (the X lists of ic_avif_lib.h, ic_heif_lib.h, ic_jxl_lib.h)
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
#include "ic_heif_lib.h"
#include "ic_jxl_lib.h"

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
} codec_lib;

static codec_lib avif_lib = {.soname = "libavif.so.15", .dev_name = "libavif.so", .once = PTHREAD_ONCE_INIT};
static codec_lib heif_lib = {.soname = "libheif.so.1", .dev_name = "libheif.so", .once = PTHREAD_ONCE_INIT};
static codec_lib jxl_lib = {.soname = "libjxl.so.0.7", .dev_name = "libjxl.so", .once = PTHREAD_ONCE_INIT};

ic_avif_functions ic_avif_fn;
ic_heif_functions ic_heif_fn;
ic_jxl_functions ic_jxl_fn;

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
 * function the library lacks (FIND chains the lookups with &&). */
static void load_avif(void) {
    void *handle = open_lib(&avif_lib);
    if (!handle) return;
#define FIND(name) &&(ic_avif_fn.name = (__typeof__(ic_avif_fn.name))find(&avif_lib, handle, #name))
    bool complete = true IC_AVIF_FUNCTIONS(FIND);
#undef FIND
    finish(&avif_lib, handle, complete, &ic_avif_fn, sizeof ic_avif_fn);
}

static void load_heif(void) {
    void *handle = open_lib(&heif_lib);
    if (!handle) return;
#define FIND(name) &&(ic_heif_fn.name = (__typeof__(ic_heif_fn.name))find(&heif_lib, handle, #name))
    bool complete = true IC_HEIF_FUNCTIONS(FIND);
#undef FIND
    finish(&heif_lib, handle, complete, &ic_heif_fn, sizeof ic_heif_fn);
}

static void load_jxl(void) {
    void *handle = open_lib(&jxl_lib);
    if (!handle) return;
#define FIND(name) &&(ic_jxl_fn.name = (__typeof__(ic_jxl_fn.name))find(&jxl_lib, handle, #name))
    bool complete = true IC_JXL_FUNCTIONS(FIND);
#undef FIND
    finish(&jxl_lib, handle, complete, &ic_jxl_fn, sizeof ic_jxl_fn);
}

/* The outcome of the library's one load, as a status and message for `format`. */
static ic_status outcome(const codec_lib *lib, const char *format, ic_error *err) {
    if (lib->loaded) return IC_OK;
    return ic_set_error(err, IC_ERR_UNSUPPORTED_FORMAT, "%s: %s", format, lib->why);
}

ic_status ic_avif_load(const char *format, ic_error *err) {
    pthread_once(&avif_lib.once, load_avif);
    return outcome(&avif_lib, format, err);
}

ic_status ic_heif_load(const char *format, ic_error *err) {
    pthread_once(&heif_lib.once, load_heif);
    return outcome(&heif_lib, format, err);
}

ic_status ic_jxl_load(const char *format, ic_error *err) {
    pthread_once(&jxl_lib.once, load_jxl);
    return outcome(&jxl_lib, format, err);
}
