/*
 * heif_hevc.c — ImageKit's HEVC decoder for libheif: libde265, driven as libheif's own
 * plugin drives it, but with every picture cleared before libde265 writes it, and refusing a
 * picture libde265 says it could not decode whole.
 *
 * libde265 allocates a picture without clearing it and writes only the blocks its slices
 * cover. A damaged HEVC stream leaves blocks unwritten (a slice skipped or cut short), and
 * libheif's own plugin hands such a picture on as it is: the image then shows whatever
 * the heap held there before — in a service, pixels of images decoded for other requests.
 * fuzz_heif found a 72x72 file whose bottom rows changed from one decode to the next (in
 * heif-convert too, under MALLOC_PERTURB_). Two defences:
 *
 * - Every picture libde265 allocates comes zeroed, so a block it never wrote is Y = Cb = Cr = 0
 *   (green once converted), the same in every decode. libde265 1.0.11 allocates a picture through
 *   one of two pairs of functions: the decoder's (set with de265_set_image_allocation_functions)
 *   for a picture without SAO, the in-loop filter, and its defaults for every other picture:
 *   one with SAO (most pictures; SAO then filters it in place), a copy, a missing reference.
 *   The defaults are one struct in libde265's writable data, whose address
 *   de265_get_default_image_allocation_functions returns; each picture copies the struct when
 *   it is allocated and frees through that copy. Before its first decoder, ImageKit points both
 *   pairs at its own zeroing functions, once per process (a libde265 whose struct is not in a
 *   writable segment is refused with a clear error instead). That is why a slice whose data
 *   ends early with no warning, or a stream that lacks a slice, gives the same pixels in every
 *   decode.
 * - libde265 reports most damage as warnings (a slice header it cannot use, a CTB address
 *   outside the picture, a premature end of a slice segment, ...): any warning other than
 *   those about threads or an unreadable SEI message fails the decode, with libde265's text.
 *
 * Registered once per process with heif_register_decoder_plugin, at a priority above libheif's
 * own (100), so it decodes HEVC for every libheif context in the process. Otherwise it decodes
 * as libheif's plugin does: NAL units behind 4-byte lengths, every picture decoded and the
 * last kept, the VUI's colour description given as the picture's nclx profile. It starts no
 * libde265 worker thread: the decode runs on the calling thread (libheif's plugin starts one
 * and waits for it), as the rest of a decode does.
 */
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/ic_bytes.h"
#include "../../codecs/ic_de265_lib.h"
#include "../../codecs/ic_heif_lib.h"
#include "../../common/ic_common_internal.h"
#include "ic_heif_internal.h"

/* libheif takes the plugin that answers the highest; its own libde265 plugin answers 100. */
#define PRIORITY 200
/* Bytes allocated past each plane: libde265's SIMD code reads a few bytes past a row. */
#define PADDING 64
/* Each plane starts on this boundary. */
#define PLANE_ALIGN 64

typedef struct hevc_decoder {
    de265_decoder_context *ctx;
} hevc_decoder;

static const char ok_text[] = "Success";

static struct heif_error result(enum heif_error_code code, enum heif_suberror_code sub, const char *text) {
    return (struct heif_error){code, sub, text};
}

/* ---- Zeroed picture buffers. ---- */

/* One zeroed block for all of a picture's planes, laid out as libde265's own allocator lays
 * them (rows of the spec's width, rounded up to its alignment, in whole bytes a sample); the
 * block is plane 0's user data, for release_planes. 0 when the picture cannot be had. */
static int zeroed_planes(de265_decoder_context *ctx, struct de265_image_spec *spec, struct de265_image *img,
                         void *userdata) {
    (void)ctx;
    (void)userdata;
    enum de265_chroma chroma = de265_get_chroma_format(img);
    int planes = chroma == de265_chroma_mono ? 1 : 3;
    size_t align = spec->alignment > 0 ? (size_t)spec->alignment : 16;
    if (spec->width <= 0 || spec->height <= 0) return 0;
    size_t offset[3], stride[3], total = 0;
    for (int c = 0; c < planes; c++) {
        int bits = de265_get_bits_per_pixel(img, c);
        if (bits < 8 || bits > 16) return 0;
        size_t sub_w = c > 0 && chroma != de265_chroma_444 ? 2 : 1;
        size_t sub_h = c > 0 && chroma == de265_chroma_420 ? 2 : 1;
        size_t width = (size_t)spec->width / sub_w, height = (size_t)spec->height / sub_h;
        /* In bytes, as de265_set_image_plane takes it (libde265 keeps it in samples). */
        stride[c] = (width + align - 1) / align * align * (((size_t)bits + 7) / 8);
        size_t bytes = stride[c] * height;
        offset[c] = total;
        total += (bytes + PADDING + PLANE_ALIGN - 1) / PLANE_ALIGN * PLANE_ALIGN;
    }
    void *block = NULL;
    if (posix_memalign(&block, PLANE_ALIGN, total) != 0) return 0;
    memset(block, 0, total);
    for (int c = 0; c < planes; c++) {
        de265_set_image_plane(img, c, (uint8_t *)block + offset[c], (int)stride[c], c == 0 ? block : NULL);
    }
    return 1;
}

static void release_planes(de265_decoder_context *ctx, struct de265_image *img, void *userdata) {
    (void)ctx;
    (void)userdata;
    free(de265_get_image_plane_user_data(img, 0));
}

static const struct de265_image_allocation zeroed_allocation = {zeroed_planes, release_planes};

/* ---- libde265's default allocation functions, pointed at ours. ---- */

/* Whether `[at, at + size)` lies in a writable segment of a loaded object, outside the part
 * the dynamic linker makes read-only after relocation (PT_GNU_RELRO). */
typedef struct writable_query {
    uintptr_t at, size;
    bool writable;
} writable_query;

static bool contains(uintptr_t start, uintptr_t length, uintptr_t at, uintptr_t size) {
    return at >= start && length >= size && at - start <= length - size;
}

static bool overlaps(uintptr_t start, uintptr_t length, uintptr_t at, uintptr_t size) {
    return at < start + length && start < at + size;
}

static int check_object(struct dl_phdr_info *info, size_t info_size, void *raw) {
    (void)info_size;
    writable_query *q = raw;
    bool writable = false, relro = false;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && contains(start, ph->p_memsz, q->at, q->size)) {
            writable = true;
        }
        if (ph->p_type == PT_GNU_RELRO && overlaps(start, ph->p_memsz, q->at, q->size)) relro = true;
    }
    if (!writable) return 0;
    q->writable = !relro;
    return 1;
}

/* Points libde265's default allocation functions at zeroed_allocation; false when they are not
 * in writable memory. Once, under register_plugin's once, before ImageKit's first decoder. A
 * picture allocated earlier keeps its copy of the old pair. The one reader that could see the
 * two pointers half-written is a decoder of libheif's own plugin allocating a picture on
 * another thread at that instant: only before this registration does libheif choose that
 * plugin, and ImageKit decodes no HEVC through it. */
static bool zero_default_pictures(void) {
    struct de265_image_allocation *defaults =
        (struct de265_image_allocation *)de265_get_default_image_allocation_functions();
    writable_query q = {(uintptr_t)defaults, sizeof *defaults, false};
    dl_iterate_phdr(check_object, &q);
    if (!q.writable) return false;
    *defaults = zeroed_allocation;
    return true;
}

/* ---- The plugin. ---- */

static const char *plugin_name(void) { return "ImageKit: libde265 with zeroed pictures"; }

static void plugin_init(void) { de265_init(); }

static void plugin_deinit(void) { de265_free(); }

static int supports(enum heif_compression_format format) { return format == heif_compression_HEVC ? PRIORITY : 0; }

static struct heif_error new_decoder(void **out) {
    hevc_decoder *dec = calloc(1, sizeof *dec);
    if (!dec) return result(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "no memory for a decoder");
    dec->ctx = de265_new_decoder();
    if (!dec->ctx) {
        free(dec);
        return result(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "libde265 made no decoder");
    }
    de265_set_image_allocation_functions(dec->ctx, (struct de265_image_allocation *)&zeroed_allocation, NULL);
    *out = dec;
    return result(heif_error_Ok, heif_suberror_Unspecified, ok_text);
}

static void free_decoder(void *raw) {
    hevc_decoder *dec = raw;
    de265_free_decoder(dec->ctx);
    free(dec);
}

/* NAL units, each behind a 4-byte big-endian length (what libheif hands a decoder). */
static struct heif_error push_data(void *raw, const void *data, size_t size) {
    hevc_decoder *dec = raw;
    const uint8_t *p = data;
    size_t at = 0;
    while (at < size) {
        if (size - at < 4) return result(heif_error_Decoder_plugin_error, heif_suberror_End_of_data, "cut NAL length");
        size_t n = ic__be32(p + at);
        at += 4;
        if (n > size - at || n > INT32_MAX) {
            return result(heif_error_Decoder_plugin_error, heif_suberror_End_of_data, "NAL unit past the data");
        }
        if (de265_push_NAL(dec->ctx, p + at, (int)n, 0, NULL) != DE265_OK) {
            return result(heif_error_Memory_allocation_error, heif_suberror_Unspecified, "libde265 took no NAL unit");
        }
        at += n;
    }
    return result(heif_error_Ok, heif_suberror_Unspecified, ok_text);
}

/* The picture's planes copied into a new libheif image, with the VUI's colour description. */
static struct heif_error to_heif_image(const struct de265_image *pic, struct heif_image **out) {
    static const enum heif_chroma chromas[4] = {heif_chroma_monochrome, heif_chroma_420, heif_chroma_422,
                                                heif_chroma_444};
    static const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    enum de265_chroma chroma = de265_get_chroma_format(pic);
    if ((unsigned)chroma > de265_chroma_444) {
        return result(heif_error_Decoder_plugin_error, heif_suberror_Unsupported_color_conversion, "unknown chroma");
    }
    bool mono = chroma == de265_chroma_mono;
    int bits = de265_get_bits_per_pixel(pic, 0);
    struct heif_error e = heif_image_create(de265_get_image_width(pic, 0), de265_get_image_height(pic, 0),
                                            mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                            chromas[chroma], out);
    if (e.code != heif_error_Ok) return e;
    for (int c = 0; c < (mono ? 1 : 3); c++) {
        int w = de265_get_image_width(pic, c), h = de265_get_image_height(pic, c), stride = 0;
        const uint8_t *src = de265_get_image_plane(pic, c, &stride);
        if (de265_get_bits_per_pixel(pic, c) != bits) {
            e = result(heif_error_Unsupported_feature, heif_suberror_Unsupported_color_conversion,
                     "planes of different bit depths");
        } else if (w <= 0 || h <= 0 || !src) {
            e = result(heif_error_Decoder_plugin_error, heif_suberror_Invalid_image_size, "an empty plane");
        } else {
            e = heif_image_add_plane(*out, channels[c], w, h, bits);
        }
        if (e.code != heif_error_Ok) {
            heif_image_release(*out);
            *out = NULL;
            return e;
        }
        int dst_stride = 0;
        uint8_t *dst = heif_image_get_plane(*out, channels[c], &dst_stride);
        size_t row = (size_t)w * (((size_t)bits + 7) / 8);
        for (int y = 0; y < h; y++) memcpy(dst + (size_t)y * dst_stride, src + (size_t)y * stride, row);
    }
    struct heif_color_profile_nclx *nclx = heif_nclx_color_profile_alloc();
    if (nclx) {
        /* A code point the setter refuses stays unspecified (libheif's plugin only warns). */
        heif_nclx_color_profile_set_color_primaries(nclx, (uint16_t)de265_get_image_colour_primaries(pic));
        heif_nclx_color_profile_set_transfer_characteristics(nclx,
                                                             (uint16_t)de265_get_image_transfer_characteristics(pic));
        heif_nclx_color_profile_set_matrix_coefficients(nclx, (uint16_t)de265_get_image_matrix_coefficients(pic));
        nclx->full_range_flag = (uint8_t)(de265_get_image_full_range_flag(pic) != 0);
        heif_image_set_nclx_color_profile(*out, nclx);
        heif_nclx_color_profile_free(nclx);
    }
    return result(heif_error_Ok, heif_suberror_Unspecified, ok_text);
}

/* The first warning libde265 gave that says the stream is damaged, or DE265_OK. Its pictures
 * then have blocks it never wrote (a slice it skipped or cut short), zeroed but not the
 * image's. Warnings about threads, or about an SEI message it cannot read, are not damage. */
static de265_error first_damage(de265_decoder_context *ctx) {
    de265_error first = DE265_OK;
    for (de265_error w; (w = de265_get_warning(ctx)) != DE265_OK;) {
        bool harmless = w == DE265_WARNING_NO_WPP_CANNOT_USE_MULTITHREADING ||
                        w == DE265_WARNING_NUMBER_OF_THREADS_LIMITED_TO_MAXIMUM ||
                        w == DE265_WARNING_SPS_MISSING_CANNOT_DECODE_SEI;
        if (!harmless && first == DE265_OK) first = w;
    }
    return first;
}

/* Decodes what was pushed; the last picture libde265 puts out is the image. */
static struct heif_error decode_image(void *raw, struct heif_image **out) {
    hevc_decoder *dec = raw;
    *out = NULL;
    de265_flush_data(dec->ctx);
    int more;
    do {
        more = 0;
        if (de265_decode(dec->ctx, &more) != DE265_OK) break;
        const struct de265_image *pic = de265_get_next_picture(dec->ctx);
        if (pic) {
            if (*out) heif_image_release(*out);
            *out = NULL;
            struct heif_error e = to_heif_image(pic, out);
            de265_release_next_picture(dec->ctx);
            if (e.code != heif_error_Ok) return e;
        }
    } while (more);
    de265_error damage = first_damage(dec->ctx);
    if (damage != DE265_OK) {
        if (*out) heif_image_release(*out);
        *out = NULL;
        return result(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, de265_get_error_text(damage));
    }
    if (!*out) return result(heif_error_Decoder_plugin_error, heif_suberror_Unspecified, "libde265 put out no picture");
    return result(heif_error_Ok, heif_suberror_Unspecified, ok_text);
}

/* ImageKit never asks libheif for strict decoding: a damaged stream decodes as far as libde265
 * gets, as with libheif's own plugin. */
static void set_strict(void *raw, int flag) {
    (void)raw;
    (void)flag;
}

static const struct heif_decoder_plugin plugin = {
    .plugin_api_version = 3,
    .get_plugin_name = plugin_name,
    .init_plugin = plugin_init,
    .deinit_plugin = plugin_deinit,
    .does_support_format = supports,
    .new_decoder = new_decoder,
    .free_decoder = free_decoder,
    .push_data = push_data,
    .decode_image = decode_image,
    .set_strict_decoding = set_strict,
    .id_name = "imagekit-libde265",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool defaults_zeroed;
static struct heif_error registration;

static void register_plugin(void) {
    defaults_zeroed = zero_default_pictures();
    if (defaults_zeroed) registration = heif_register_decoder_plugin(&plugin);
}

ic_status ic__heif_hevc_load(const char *format, ic_error *err) {
    ic_status st = ic__de265_load(format, err);
    if (st != IC_OK) return st;
    pthread_once(&once, register_plugin);
    if (!defaults_zeroed) {
        return ic__set_error(err, IC_ERR_UNSUPPORTED_FORMAT,
                            "%s: this libde265 keeps its picture allocation functions read-only, so ImageKit "
                            "cannot clear the pictures it decodes",
                            format);
    }
    if (registration.code != heif_error_Ok) {
        return ic__set_error(err, IC_ERR_UNSUPPORTED_FORMAT, "%s: libheif took no HEVC decoder of ImageKit's: %s",
                            format, registration.message ? registration.message : "no reason given");
    }
    return IC_OK;
}
