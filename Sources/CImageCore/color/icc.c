/*
 * icc.c — Little CMS 2 behind ImageKit: one lcms context whose error handler
 * only counts (lcms never prints or aborts), the "describes sRGB" test, the
 * process-wide transform cache, and row conversion.
 *
 * lcms converts 8-bit RGB at about 70 Mpixel/s on the machines ImageKit was
 * measured on, which for a 12 MP photo costs more than decoding it. So a
 * matrix/shaper source (P3, Adobe RGB and most camera profiles) goes through
 * ImageKit's own path instead (matrix_shaper.c): per-channel curves, one 3x3
 * matrix into linear sRGB, sRGB's encoding. That path is built from the
 * profile's own curves and colorants and is checked against lcms's transform on a
 * 17^3 colour grid when the entry is made; it is used only if every channel agrees
 * within one level, otherwise lcms converts.
 *
 * lcms's own allocations are not counted against a decode's memory limit; its
 * context refuses any single allocation over LCMS_MAX_ALLOC (lcms's default bound
 * is 512 MiB), so a hostile table in a 4 MiB profile cannot claim more.
 *
 * An entry keeps a copy of its profile's bytes and a hit compares them: XXH64 is
 * not collision-resistant, and a crafted profile must not be able to take over
 * the transform of a popular one for other callers' images. Entries are bounded
 * in number (IC_COLOR_CACHE_CAPACITY) and in profile bytes (CACHE_MAX_BYTES).
 *
 * Transforms are built with cmsFLAGS_NOCACHE, which makes cmsDoTransform safe
 * to call on one transform from several threads at once (the one-pixel cache
 * is the only state a transform mutates). Cache entries are reference counted:
 * an entry evicted while a decode uses it is freed when that decode ends.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <lcms2.h>
#include <lcms2_plugin.h>

#include "../image/ic_image_internal.h"
#include "ic_color_internal.h"
#include "ic_color_testing.h"
#include "ic_hash.h"

/* What a profile does to pixels of one layout. */
typedef enum verdict {
    VERDICT_UNUSABLE = 0, /* lcms cannot read it, or it is not for these pixels */
    VERDICT_SRGB = 1,     /* describes sRGB: nothing to do */
    VERDICT_CONVERT = 2   /* transform holds the conversion */
} verdict;

/* Most profile bytes the cache keeps copies of. */
#define CACHE_MAX_BYTES ((size_t)16 << 20)

typedef struct ic__color_entry {
    uint64_t hash;
    size_t size;
    uint8_t *bytes; /* a copy of the profile, compared on every hit */
    ic_color_input input;
    verdict verdict;
    cmsHTRANSFORM transform; /* NULL when the fast path converts */
    bool use_fast;
    ic__matrix_shaper fast;
    uint8_t gray_lut[256][3]; /* IC_COLOR_INPUT_GRAY: sRGB of each grey level */
    uint64_t last_used;
    uint32_t refs;            /* decodes using it, plus one while cached */
} ic__color_entry;

static pthread_once_t context_once = PTHREAD_ONCE_INIT;
static cmsContext context;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static ic__color_entry *cache[IC_COLOR_CACHE_CAPACITY];
static size_t cache_bytes;
static uint64_t cache_clock;
static ic_color_cache_stats counters;
/* Counted outside the lock (atomics). */
static uint64_t lcms_errors, profiles_parsed, transforms_created, fast_paths;

static void on_lcms_error(cmsContext ctx, cmsUInt32Number code, const char *text) {
    (void)ctx;
    (void)code;
    (void)text;
    __atomic_add_fetch(&lcms_errors, 1, __ATOMIC_RELAXED);
}

/* The largest single allocation lcms may make: a 33^4-point CMYK table at 16 bits with
 * lcms's float copies fits many times over. */
#define LCMS_MAX_ALLOC ((cmsUInt32Number)64 << 20)

static void *lcms_malloc(cmsContext ctx, cmsUInt32Number size) {
    (void)ctx;
    return size == 0 || size > LCMS_MAX_ALLOC ? NULL : malloc(size);
}

static void lcms_free(cmsContext ctx, void *p) {
    (void)ctx;
    free(p);
}

static void *lcms_realloc(cmsContext ctx, void *p, cmsUInt32Number size) {
    (void)ctx;
    return size == 0 || size > LCMS_MAX_ALLOC ? NULL : realloc(p, size);
}

static cmsPluginMemHandler memory_plugin = {
    {cmsPluginMagicNumber, 2000, cmsPluginMemHandlerSig, NULL}, lcms_malloc, lcms_free, lcms_realloc,
    NULL, NULL, NULL};

static void create_context(void) {
    context = cmsCreateContext(&memory_plugin, NULL);
    cmsSetLogErrorHandlerTHR(context, on_lcms_error);
    ic__ms_init();
}

/* ---- Does a profile describe sRGB? ---- */

/* sRGB IEC 61966-2.1's colorants adapted to D50, as ICC v2/v4 profiles store them. */
static const double srgb_colorants[3][3] = {
    {0.4361, 0.2225, 0.0139}, {0.3851, 0.7169, 0.0971}, {0.1431, 0.0606, 0.7141}};
#define COLORANT_TOLERANCE 0.0025
/* Largest tone-curve difference from sRGB's, in 8-bit levels. */
#define CURVE_TOLERANCE_LEVELS 0.5

static double srgb_eotf(double v) {
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static bool near_xyz(const cmsCIEXYZ *xyz, double x, double y, double z, double tol) {
    return xyz && fabs(xyz->X - x) <= tol && fabs(xyz->Y - y) <= tol && fabs(xyz->Z - z) <= tol;
}

static bool describes_srgb(cmsHPROFILE p) {
    if (cmsGetColorSpace(p) != cmsSigRgbData || !cmsIsMatrixShaper(p)) return false;
    /* A LUT-based profile is used through its tables, whatever its matrix says. */
    if (cmsIsTag(p, cmsSigAToB0Tag) || cmsIsTag(p, cmsSigAToB1Tag) ||
        cmsIsTag(p, cmsSigAToB2Tag) || cmsIsTag(p, cmsSigDToB0Tag)) {
        return false;
    }
    static const cmsTagSignature colorant_tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag,
                                                     cmsSigBlueColorantTag};
    static const cmsTagSignature curve_tags[3] = {cmsSigRedTRCTag, cmsSigGreenTRCTag,
                                                  cmsSigBlueTRCTag};
    for (int i = 0; i < 3; i++) {
        const cmsCIEXYZ *xyz = cmsReadTag(p, colorant_tags[i]);
        if (!near_xyz(xyz, srgb_colorants[i][0], srgb_colorants[i][1], srgb_colorants[i][2],
                      COLORANT_TOLERANCE)) {
            return false;
        }
    }
    /* White point: D50 (v4, most v2) or D65 (older v2 profiles such as HP's). */
    const cmsCIEXYZ *white = cmsReadTag(p, cmsSigMediaWhitePointTag);
    if (white && !near_xyz(white, 0.9642, 1.0, 0.8249, 0.003) &&
        !near_xyz(white, 0.9505, 1.0, 1.0890, 0.003)) {
        return false;
    }
    for (int i = 0; i < 3; i++) {
        const cmsToneCurve *curve = cmsReadTag(p, curve_tags[i]);
        if (!curve) return false;
        for (int v = 0; v <= 255; v++) {
            double x = v / 255.0;
            double diff = fabs(cmsEvalToneCurveFloat(curve, (cmsFloat32Number)x) - srgb_eotf(x));
            if (diff * 255.0 > CURVE_TOLERANCE_LEVELS) return false;
        }
    }
    return true;
}

/* ---- The fast matrix/shaper path. ---- */

/* Columns of the matrix from a matrix/shaper profile's colorants (linear RGB to XYZ D50). */
static bool colorant_matrix(cmsHPROFILE p, double m[3][3]) {
    static const cmsTagSignature tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag,
                                            cmsSigBlueColorantTag};
    for (int i = 0; i < 3; i++) {
        const cmsCIEXYZ *xyz = cmsReadTag(p, tags[i]);
        if (!xyz) return false;
        m[0][i] = xyz->X;
        m[1][i] = xyz->Y;
        m[2][i] = xyz->Z;
    }
    return true;
}

static bool invert3(double m[3][3], double inv[3][3]) {
    double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                 m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                 m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if (fabs(det) < 1e-9) return false;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
            inv[r][c] = (m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1]) / det;
        }
    }
    return true;
}

/* Builds e->fast for a matrix/shaper RGB source and checks it against lcms's transform `t`. */
static bool build_fast(ic__color_entry *e, cmsHPROFILE src, cmsHPROFILE dst, cmsHTRANSFORM t) {
    if (!cmsIsMatrixShaper(src) || cmsIsTag(src, cmsSigAToB0Tag) || cmsIsTag(src, cmsSigAToB1Tag) ||
        cmsIsTag(src, cmsSigAToB2Tag) || cmsIsTag(src, cmsSigDToB0Tag)) {
        return false;
    }
    double to_xyz[3][3], srgb_to_xyz[3][3], from_xyz[3][3];
    if (!colorant_matrix(src, to_xyz) || !colorant_matrix(dst, srgb_to_xyz) ||
        !invert3(srgb_to_xyz, from_xyz)) {
        return false;
    }
    double matrix[3][3], linear[3][256];
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            matrix[r][c] = 0;
            for (int k = 0; k < 3; k++) matrix[r][c] += from_xyz[r][k] * to_xyz[k][c];
        }
    }
    static const cmsTagSignature curves[3] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag};
    for (int c = 0; c < 3; c++) {
        const cmsToneCurve *curve = cmsReadTag(src, curves[c]);
        if (!curve) return false;
        for (int v = 0; v < 256; v++) {
            linear[c][v] = cmsEvalToneCurveFloat(curve, (cmsFloat32Number)(v / 255.0));
        }
    }
    if (!ic__ms_build(&e->fast, linear, matrix)) return false;
    /* Agreement with lcms on a 17^3 grid (every 16th level, and 255). */
    enum { N = 17 * 17 * 17 };
    static const int steps = 17;
    uint8_t *mine = malloc((size_t)N * 4 * 2);
    if (!mine) return false;
    uint8_t *theirs = mine + (size_t)N * 4;
    size_t i = 0;
    for (int r = 0; r < steps; r++) {
        for (int g = 0; g < steps; g++) {
            for (int b = 0; b < steps; b++, i += 4) {
                mine[i] = (uint8_t)(r == 16 ? 255 : r * 16);
                mine[i + 1] = (uint8_t)(g == 16 ? 255 : g * 16);
                mine[i + 2] = (uint8_t)(b == 16 ? 255 : b * 16);
                mine[i + 3] = 255;
            }
        }
    }
    memcpy(theirs, mine, (size_t)N * 4);
    ic__ms_convert(&e->fast, mine, N);
    cmsDoTransform(t, theirs, theirs, N);
    bool agree = true;
    for (i = 0; i < (size_t)N * 4 && agree; i++) agree = abs((int)mine[i] - (int)theirs[i]) <= 1;
    free(mine);
    return agree;
}

/* ---- Building an entry (outside the lock). ---- */

static cmsUInt32Number lcms_format(ic_color_input input) {
    switch (input) {
    case IC_COLOR_INPUT_RGBA: return TYPE_RGBA_8;
    case IC_COLOR_INPUT_GRAY: return TYPE_GRAY_8;
    case IC_COLOR_INPUT_CMYK: return TYPE_CMYK_8;
    case IC_COLOR_INPUT_CMYK_INVERTED: return TYPE_CMYK_8_REV;
    }
    return 0;
}

static cmsColorSpaceSignature lcms_space(ic_color_input input) {
    switch (input) {
    case IC_COLOR_INPUT_RGBA: return cmsSigRgbData;
    case IC_COLOR_INPUT_GRAY: return cmsSigGrayData;
    default: return cmsSigCmykData;
    }
}

/* lcms's transform from `src` to `dst` (sRGB) for pixels of `input`, as every decode builds it:
 * perceptual intent (else the profile's own), black-point compensation, alpha copied, no
 * one-pixel cache (so threads may share it). NULL when lcms cannot build it. */
static cmsHTRANSFORM make_transform(cmsHPROFILE src, cmsHPROFILE dst, ic_color_input input) {
    cmsUInt32Number intent = INTENT_PERCEPTUAL;
    if (!cmsIsIntentSupported(src, intent, LCMS_USED_AS_INPUT)) intent = cmsGetHeaderRenderingIntent(src);
    cmsUInt32Number flags = cmsFLAGS_BLACKPOINTCOMPENSATION | cmsFLAGS_NOCACHE;
    cmsUInt32Number out_format = input == IC_COLOR_INPUT_GRAY ? TYPE_RGB_8 : TYPE_RGBA_8;
    if (input == IC_COLOR_INPUT_RGBA) flags |= cmsFLAGS_COPY_ALPHA;
    cmsHTRANSFORM t = cmsCreateTransformTHR(context, src, lcms_format(input), dst, out_format, intent, flags);
    if (t) __atomic_add_fetch(&transforms_created, 1, __ATOMIC_RELAXED);
    return t;
}

/* Fills e->verdict (and its transform) for profile bytes. */
static void build(ic__color_entry *e, const uint8_t *icc, size_t size) {
    e->verdict = VERDICT_UNUSABLE;
    cmsHPROFILE src = cmsOpenProfileFromMemTHR(context, icc, (cmsUInt32Number)size);
    __atomic_add_fetch(&profiles_parsed, 1, __ATOMIC_RELAXED);
    if (!src) return;
    if (cmsGetColorSpace(src) != lcms_space(e->input) ||
        (cmsGetPCS(src) != cmsSigXYZData && cmsGetPCS(src) != cmsSigLabData)) {
        cmsCloseProfile(src);
        return;
    }
    if (e->input == IC_COLOR_INPUT_RGBA && describes_srgb(src)) {
        e->verdict = VERDICT_SRGB;
        cmsCloseProfile(src);
        return;
    }
    cmsHPROFILE dst = cmsCreate_sRGBProfileTHR(context);
    if (!dst) {
        cmsCloseProfile(src);
        return;
    }
    cmsHTRANSFORM t = make_transform(src, dst, e->input);
    if (t && e->input == IC_COLOR_INPUT_RGBA && build_fast(e, src, dst, t)) {
        cmsDeleteTransform(t);
        t = NULL;
        e->use_fast = true;
        __atomic_add_fetch(&fast_paths, 1, __ATOMIC_RELAXED);
    }
    cmsCloseProfile(src);
    cmsCloseProfile(dst);
    if (e->use_fast) {
        e->verdict = VERDICT_CONVERT;
        return;
    }
    if (!t) return;
    if (e->input == IC_COLOR_INPUT_GRAY) {
        /* Grey has 256 inputs: a table replaces the transform. */
        uint8_t levels[256];
        for (int v = 0; v < 256; v++) levels[v] = (uint8_t)v;
        cmsDoTransform(t, levels, e->gray_lut, 256);
        cmsDeleteTransform(t);
    } else {
        e->transform = t;
    }
    e->verdict = VERDICT_CONVERT;
}

static void entry_free(ic__color_entry *e) {
    if (e->transform) cmsDeleteTransform(e->transform);
    free(e->bytes);
    free(e);
}

/* The cached entry for these bytes and layout (under the lock), or NULL. */
static ic__color_entry *find_locked(uint64_t hash, const uint8_t *icc, size_t size, ic_color_input input) {
    for (uint32_t i = 0; i < IC_COLOR_CACHE_CAPACITY; i++) {
        ic__color_entry *e = cache[i];
        if (e && e->hash == hash && e->size == size && e->input == input &&
            memcmp(e->bytes, icc, size) == 0) {
            return e;
        }
    }
    return NULL;
}

/* Removes the least recently used entry (under the lock); returns it if it must be freed. */
static ic__color_entry *evict_locked(void) {
    int32_t oldest = -1;
    for (uint32_t i = 0; i < IC_COLOR_CACHE_CAPACITY; i++) {
        if (cache[i] && (oldest < 0 || cache[i]->last_used < cache[oldest]->last_used)) oldest = (int32_t)i;
    }
    if (oldest < 0) return NULL;
    ic__color_entry *e = cache[oldest];
    cache[oldest] = NULL;
    cache_bytes -= e->size;
    return --e->refs == 0 ? e : NULL;
}

/* Drops one reference (under the lock); returns the entry if it must be freed. */
static ic__color_entry *unref_locked(ic__color_entry *e) {
    return --e->refs == 0 ? e : NULL;
}

/* ---- The cache. ---- */

/* Finds or builds the entry for a profile and layout; returns it with a reference, or NULL
 * when out of memory. */
static ic__color_entry *acquire(const uint8_t *icc, size_t size, ic_color_input input) {
    pthread_once(&context_once, create_context);
    uint64_t hash = ic_xxh64(icc, size, (uint64_t)input);
    pthread_mutex_lock(&cache_lock);
    counters.lookups++;
    ic__color_entry *hit = find_locked(hash, icc, size, input);
    if (hit) {
        counters.hits++;
        hit->refs++;
        hit->last_used = ++cache_clock;
        pthread_mutex_unlock(&cache_lock);
        return hit;
    }
    pthread_mutex_unlock(&cache_lock);

    ic__color_entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->bytes = malloc(size);
    if (!e->bytes) {
        free(e);
        return NULL;
    }
    memcpy(e->bytes, icc, size);
    e->hash = hash;
    e->size = size;
    e->input = input;
    build(e, icc, size);

    ic__color_entry *dead[IC_COLOR_CACHE_CAPACITY];
    uint32_t n_dead = 0;
    pthread_mutex_lock(&cache_lock);
    /* Another decode may have built the same entry meanwhile: use the cached one. */
    ic__color_entry *same = find_locked(hash, icc, size, input);
    if (same) {
        same->refs++;
        same->last_used = ++cache_clock;
        pthread_mutex_unlock(&cache_lock);
        entry_free(e);
        return same;
    }
    uint32_t slot = IC_COLOR_CACHE_CAPACITY;
    for (;;) {
        for (uint32_t i = 0; i < IC_COLOR_CACHE_CAPACITY && slot == IC_COLOR_CACHE_CAPACITY; i++) {
            if (!cache[i]) slot = i;
        }
        if (slot < IC_COLOR_CACHE_CAPACITY && cache_bytes + size <= CACHE_MAX_BYTES) break;
        ic__color_entry *gone = evict_locked();
        if (gone) dead[n_dead++] = gone;
    }
    e->refs = 2; /* the cache's and the caller's */
    e->last_used = ++cache_clock;
    cache[slot] = e;
    cache_bytes += size;
    pthread_mutex_unlock(&cache_lock);
    for (uint32_t i = 0; i < n_dead; i++) entry_free(dead[i]);
    return e;
}

static void release(ic__color_entry *e) {
    pthread_mutex_lock(&cache_lock);
    ic__color_entry *dead = unref_locked(e);
    pthread_mutex_unlock(&cache_lock);
    if (dead) entry_free(dead);
}

void ic_color_cache_get_stats(ic_color_cache_stats *stats) {
    pthread_mutex_lock(&cache_lock);
    *stats = counters;
    stats->profiles_parsed = __atomic_load_n(&profiles_parsed, __ATOMIC_RELAXED);
    stats->transforms_created = __atomic_load_n(&transforms_created, __ATOMIC_RELAXED);
    stats->lcms_errors = __atomic_load_n(&lcms_errors, __ATOMIC_RELAXED);
    stats->fast_paths = __atomic_load_n(&fast_paths, __ATOMIC_RELAXED);
    stats->entries = 0;
    for (uint32_t i = 0; i < IC_COLOR_CACHE_CAPACITY; i++) stats->entries += cache[i] != NULL;
    stats->capacity = IC_COLOR_CACHE_CAPACITY;
    pthread_mutex_unlock(&cache_lock);
}

void ic_color_cache_clear(void) {
    ic__color_entry *dead[IC_COLOR_CACHE_CAPACITY];
    uint32_t n = 0;
    pthread_mutex_lock(&cache_lock);
    for (uint32_t i = 0; i < IC_COLOR_CACHE_CAPACITY; i++) {
        if (!cache[i]) continue;
        ic__color_entry *e = unref_locked(cache[i]);
        if (e) dead[n++] = e;
        cache[i] = NULL;
    }
    cache_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
    for (uint32_t i = 0; i < n; i++) entry_free(dead[i]);
}

/* ---- A decode's use of the cache. ---- */

void ic__color_state_prepare(ic__color_state *c, ic_color_mode mode, ic_color_input input) {
    c->input = input;
    if (!c->icc || mode == IC_COLOR_RAW) return;
    ic__color_entry *e = acquire(c->icc, c->icc_size, input);
    if (!e) return; /* out of memory: decode untagged rather than fail */
    if (e->verdict == VERDICT_CONVERT) {
        c->entry = e;
        return;
    }
    if (e->verdict == VERDICT_UNUSABLE) c->ignored = true;
    release(e);
}

bool ic__color_sink_converts(const ic__color_state *c) {
    return c->entry && (c->input == IC_COLOR_INPUT_RGBA || c->input == IC_COLOR_INPUT_GRAY);
}

bool ic__color_converts_cmyk(const ic__color_state *c) {
    return c->entry &&
           (c->input == IC_COLOR_INPUT_CMYK || c->input == IC_COLOR_INPUT_CMYK_INVERTED);
}

void ic__color_convert_row(const ic__color_state *c, uint8_t *row, uint32_t width) {
    const ic__color_entry *e = c->entry;
    if (c->input == IC_COLOR_INPUT_GRAY) {
        for (uint32_t x = 0; x < width; x++, row += 4) {
            const uint8_t *rgb = e->gray_lut[row[0]];
            row[0] = rgb[0];
            row[1] = rgb[1];
            row[2] = rgb[2];
        }
        return;
    }
    if (e->use_fast) {
        ic__ms_convert(&e->fast, row, width);
    } else {
        cmsDoTransform(e->transform, row, row, width);
    }
}

void ic__color_convert_cmyk_row(const ic__color_state *c, uint8_t *row, uint32_t width) {
    cmsDoTransform(c->entry->transform, row, row, width);
    for (uint32_t x = 0; x < width; x++) row[x * 4 + 3] = 255;
}

void ic__color_state_finish(ic__color_state *c, ic__budget *budget, ic_image *image) {
    image->icc_space = (uint8_t)c->space;
    image->icc_ignored = c->ignored;
    image->color_converted = c->entry != NULL;
    if (c->icc) {
        image->icc_profile = c->icc;
        image->icc_profile_size = c->icc_size;
        ic__budget_refund(budget, c->icc_size); /* the image owns it now */
        c->icc = NULL;
        c->icc_size = 0;
    }
    if (c->entry) release(c->entry);
    c->entry = NULL;
}

void ic__color_state_free(ic__color_state *c, ic__budget *budget) {
    ic__budget_free(budget, c->icc, c->icc_size);
    c->icc = NULL;
    c->icc_size = 0;
    if (c->entry) release(c->entry);
    c->entry = NULL;
}

/* ---- The test hook (ic_color_testing.h). ---- */

/* Pixels handed to one kernel call (its width is 32-bit). */
#define TEST_CHUNK ((size_t)1 << 20)

/* `count` pixels through a new lcms transform for the profile, as a decode without the fast
 * path would convert them. */
static ic_status convert_lcms(const uint8_t *icc, size_t size, uint8_t *rgba, size_t count, ic_error *err) {
    cmsHPROFILE src = cmsOpenProfileFromMemTHR(context, icc, (cmsUInt32Number)size);
    cmsHPROFILE dst = src ? cmsCreate_sRGBProfileTHR(context) : NULL;
    cmsHTRANSFORM t = dst ? make_transform(src, dst, IC_COLOR_INPUT_RGBA) : NULL;
    if (src) cmsCloseProfile(src);
    if (dst) cmsCloseProfile(dst);
    if (!t) return ic__set_error(err, IC_ERR_INTERNAL, "colour: lcms built no transform for a profile it read before");
    for (size_t done = 0; done < count; done += TEST_CHUNK) {
        size_t n = count - done < TEST_CHUNK ? count - done : TEST_CHUNK;
        cmsDoTransform(t, rgba + 4 * done, rgba + 4 * done, (cmsUInt32Number)n);
    }
    cmsDeleteTransform(t);
    return IC_OK;
}

static const char *kernel_name(ic_color_kernel kernel) {
    switch (kernel) {
    case IC_COLOR_KERNEL_LCMS: return "lcms";
    case IC_COLOR_KERNEL_PORTABLE: return "portable";
    case IC_COLOR_KERNEL_AVX2: return "AVX2";
    case IC_COLOR_KERNEL_AVX512: return "AVX-512";
    case IC_COLOR_KERNEL_AVX512_PLANAR: return "planar AVX-512";
    }
    return "unknown";
}

ic_status ic_color_convert_with(const uint8_t *icc, size_t size, ic_color_kernel kernel,
                                uint8_t *rgba, size_t count, ic_error *err) {
    if (!icc || size == 0 || size > IC_ICC_MAX_BYTES || (!rgba && count > 0)) {
        return ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "colour: a profile of 1 byte to 4 MiB and pixels are needed");
    }
    ic__color_entry *e = acquire(icc, size, IC_COLOR_INPUT_RGBA);
    if (!e) return ic__set_error(err, IC_ERR_OUT_OF_MEMORY, "colour: out of memory for the profile's cache entry");
    ic_status st = IC_OK;
    if (e->verdict != VERDICT_CONVERT) {
        st = ic__set_error(err, IC_ERR_INVALID_ARGUMENT, "colour: a decode converts nothing with this profile (%s)",
                          e->verdict == VERDICT_SRGB ? "it describes sRGB" : "lcms cannot use it for RGB pixels");
    } else if (kernel == IC_COLOR_KERNEL_LCMS) {
        st = convert_lcms(icc, size, rgba, count, err);
    } else if (!e->use_fast) {
        st = ic__set_error(err, IC_ERR_UNSUPPORTED_FEATURE,
                          "colour: lcms converts this profile (no matrix/shaper path for it)");
    } else {
        for (size_t done = 0; done < count && st == IC_OK; done += TEST_CHUNK) {
            size_t n = count - done < TEST_CHUNK ? count - done : TEST_CHUNK;
            if (!ic__ms_convert_kernel(&e->fast, (int)kernel, rgba + 4 * done, (uint32_t)n)) {
                st = ic__set_error(err, IC_ERR_UNSUPPORTED_FEATURE, "colour: no %s kernel on this CPU or in this build",
                                  kernel_name(kernel));
            }
        }
    }
    release(e);
    return st;
}
