/* anchors.c — bare codec-library calls (benchmark anchors and test references). */
#include "CAnchors.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>
#include <jpeglib.h>
#include <lcms2.h>
#include <libimagequant.h>
#include <png.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

void anchors_free(void *p) { free(p); }

int anchors_encode_jpeg(const uint8_t *rgba, int width, int height, int quality, int progressive,
                        int subsampling, uint8_t **out, size_t *out_size) {
    tjhandle tj = tjInitCompress();
    if (!tj) return -1;
    int samp = subsampling == 444 ? TJSAMP_444 : subsampling == 422 ? TJSAMP_422 : TJSAMP_420;
    unsigned char *buf = NULL;
    unsigned long size = 0;
    int flags = progressive ? TJFLAG_PROGRESSIVE : 0;
    int rc = tjCompress2(tj, rgba, width, width * 4, height, TJPF_RGBA, &buf, &size, samp, quality,
                         flags);
    tjDestroy(tj);
    if (rc != 0) {
        tjFree(buf);
        return -1;
    }
    *out = malloc(size);
    if (!*out) {
        tjFree(buf);
        return -1;
    }
    memcpy(*out, buf, size);
    *out_size = size;
    tjFree(buf);
    return 0;
}

int anchors_encode_png(const uint8_t *rgba, int width, int height, int alpha, uint8_t **out,
                       size_t *out_size) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
    const uint8_t *src = rgba;
    uint8_t *rgb = NULL;
    if (!alpha) {
        rgb = malloc((size_t)width * height * 3);
        if (!rgb) return -1;
        for (size_t i = 0; i < (size_t)width * height; i++) memcpy(rgb + 3 * i, rgba + 4 * i, 3);
        src = rgb;
    }
    png_alloc_size_t size = 0;
    if (!png_image_write_to_memory(&image, NULL, &size, 0, src, 0, NULL)) {
        free(rgb);
        return -1;
    }
    *out = malloc(size);
    if (!*out || !png_image_write_to_memory(&image, *out, &size, 0, src, 0, NULL)) {
        free(*out);
        free(rgb);
        return -1;
    }
    *out_size = size;
    free(rgb);
    return 0;
}

int anchors_encode_webp(const uint8_t *rgba, int width, int height, float quality, uint8_t **out,
                        size_t *out_size) {
    uint8_t *buf = NULL;
    size_t size = quality < 0 ? WebPEncodeLosslessRGBA(rgba, width, height, width * 4, &buf)
                              : WebPEncodeRGBA(rgba, width, height, width * 4, quality, &buf);
    if (size == 0) return -1;
    *out = malloc(size);
    if (!*out) {
        WebPFree(buf);
        return -1;
    }
    memcpy(*out, buf, size);
    *out_size = size;
    WebPFree(buf);
    return 0;
}

int anchors_encode_jpeg_libjpeg(const uint8_t *pixels, int width, int height,
                                const anchors_jpeg_settings *st, uint8_t **out,
                                size_t *out_size) {
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&cinfo);
    unsigned char *buf = NULL;
    unsigned long size = 0;
    jpeg_mem_dest(&cinfo, &buf, &size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = st->components;
    cinfo.in_color_space = st->components == 1 ? JCS_GRAYSCALE
                         : st->components == 4 ? JCS_CMYK
                                               : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    if (st->components == 4) jpeg_set_colorspace(&cinfo, st->ycck ? JCS_YCCK : JCS_CMYK);
    jpeg_set_quality(&cinfo, st->quality, TRUE);
    if (st->components >= 3 && st->h_samp > 0) {
        cinfo.comp_info[0].h_samp_factor = st->h_samp;
        cinfo.comp_info[0].v_samp_factor = st->v_samp;
    }
    cinfo.arith_code = st->arithmetic ? TRUE : FALSE;
    cinfo.restart_in_rows = st->restart_rows;
    if (st->progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    size_t stride = (size_t)width * st->components;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + stride * cinfo.next_scanline);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = malloc(size);
    if (!*out) {
        free(buf);
        return -1;
    }
    memcpy(*out, buf, size);
    *out_size = size;
    free(buf);
    return 0;
}

int anchors_encode_webp_animation(const uint8_t *const *frames_rgba, int frames, int width,
                                  int height, int duration_ms, uint8_t **out, size_t *out_size) {
    WebPAnimEncoderOptions opts;
    if (!WebPAnimEncoderOptionsInit(&opts)) return -1;
    opts.anim_params.loop_count = 0;
    WebPAnimEncoder *enc = WebPAnimEncoderNew(width, height, &opts);
    if (!enc) return -1;
    WebPConfig config;
    WebPConfigInit(&config);
    config.lossless = 1;
    int ok = 1, timestamp = 0;
    for (int f = 0; ok && f < frames; f++) {
        WebPPicture pic;
        WebPPictureInit(&pic);
        pic.use_argb = 1;
        pic.width = width;
        pic.height = height;
        ok = WebPPictureImportRGBA(&pic, frames_rgba[f], width * 4) &&
             WebPAnimEncoderAdd(enc, &pic, timestamp, &config);
        WebPPictureFree(&pic);
        timestamp += duration_ms;
    }
    WebPData data;
    WebPDataInit(&data);
    ok = ok && WebPAnimEncoderAdd(enc, NULL, timestamp, NULL) && WebPAnimEncoderAssemble(enc, &data);
    WebPAnimEncoderDelete(enc);
    if (!ok) {
        WebPDataClear(&data);
        return -1;
    }
    *out = malloc(data.size);
    if (!*out) {
        WebPDataClear(&data);
        return -1;
    }
    memcpy(*out, data.bytes, data.size);
    *out_size = data.size;
    WebPDataClear(&data);
    return 0;
}

int anchors_write_png_gradient(const char *path, int width, int height) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    uint8_t *volatile row = malloc((size_t)width * 3);
    if (!png || !info || !row || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_compression_level(png, 1);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            uint8_t *p = row + 3 * (size_t)x;
            p[0] = (uint8_t)((x * 255) / width);
            p[1] = (uint8_t)((y * 255) / height);
            p[2] = (uint8_t)(((x / 64 + y / 64) & 1) ? 200 : 60);
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- GIF writing into memory. ---- */

typedef struct mem_sink {
    uint8_t *data;
    size_t size, cap;
} mem_sink;

static int write_mem(GifFileType *gif, const GifByteType *buf, int len) {
    mem_sink *s = gif->UserData;
    if (s->size + (size_t)len > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 65536;
        while (cap < s->size + (size_t)len) cap *= 2;
        uint8_t *p = realloc(s->data, cap);
        if (!p) return 0;
        s->data = p;
        s->cap = cap;
    }
    memcpy(s->data + s->size, buf, (size_t)len);
    s->size += (size_t)len;
    return len;
}

int anchors_encode_gif(const uint8_t *const *frames_rgba, int frames, int width, int height,
                       int delay_cs, uint8_t **out, size_t *out_size) {
    int err = 0;
    mem_sink sink = {0};
    GifFileType *gif = EGifOpen(&sink, write_mem, &err);
    if (!gif) return -1;
    GifColorType colors[256];
    memset(colors, 0, sizeof colors);
    for (int r = 0; r < 6; r++)
        for (int g = 0; g < 7; g++)
            for (int b = 0; b < 6; b++) {
                GifColorType *c = &colors[r * 42 + g * 6 + b];
                c->Red = (GifByteType)(r * 51);
                c->Green = (GifByteType)(g * 42);
                c->Blue = (GifByteType)(b * 51);
            }
    ColorMapObject *map = GifMakeMapObject(256, colors);
    EGifSetGifVersion(gif, true);
    int ok = map && EGifPutScreenDesc(gif, width, height, 8, 0, map) == GIF_OK;
    unsigned char loop[3] = {1, 0, 0};
    ok = ok && EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
         EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_OK &&
         EGifPutExtensionBlock(gif, 3, loop) == GIF_OK && EGifPutExtensionTrailer(gif) == GIF_OK;
    GifPixelType *line = malloc((size_t)width);
    ok = ok && line;
    for (int f = 0; ok && f < frames; f++) {
        GraphicsControlBlock gcb = {DISPOSE_DO_NOT, false, delay_cs, NO_TRANSPARENT_COLOR};
        GifByteType ext[4];
        EGifGCBToExtension(&gcb, ext);
        ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) == GIF_OK &&
             EGifPutImageDesc(gif, 0, 0, width, height, false, NULL) == GIF_OK;
        for (int y = 0; ok && y < height; y++) {
            const uint8_t *row = frames_rgba[f] + (size_t)y * width * 4;
            for (int x = 0; x < width; x++) {
                int r = (row[4 * x] * 5 + 127) / 255, g = (row[4 * x + 1] * 6 + 127) / 255,
                    b = (row[4 * x + 2] * 5 + 127) / 255;
                line[x] = (GifPixelType)(r * 42 + g * 6 + b);
            }
            ok = EGifPutLine(gif, line, width) == GIF_OK;
        }
    }
    free(line);
    GifFreeMapObject(map);
    if (EGifCloseFile(gif, &err) != GIF_OK) ok = 0;
    if (!ok) {
        free(sink.data);
        return -1;
    }
    *out = sink.data;
    *out_size = sink.size;
    return 0;
}

int anchors_encode_gif_quantized(const uint8_t *const *frames_rgba, int frames, int width, int height,
                                 int delay_cs, int quality, int speed, float dither, uint8_t **out,
                                 size_t *out_size) {
    int err = 0;
    mem_sink sink = {0};
    GifFileType *gif = EGifOpen(&sink, write_mem, &err);
    if (!gif) return -1;
    EGifSetGifVersion(gif, true);
    int ok = EGifPutScreenDesc(gif, width, height, 8, 0, NULL) == GIF_OK;
    unsigned char loop[3] = {1, 0, 0};
    ok = ok && EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
         EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_OK &&
         EGifPutExtensionBlock(gif, 3, loop) == GIF_OK && EGifPutExtensionTrailer(gif) == GIF_OK;
    liq_attr *attr = liq_attr_create();
    uint8_t *indices = malloc((size_t)width * height);
    ok = ok && attr && indices && liq_set_quality(attr, 0, quality) == LIQ_OK &&
         liq_set_speed(attr, speed) == LIQ_OK;
    for (int f = 0; ok && f < frames; f++) {
        liq_image *image = liq_image_create_rgba(attr, frames_rgba[f], width, height, 0);
        liq_result *result = NULL;
        ok = image && liq_image_quantize(image, attr, &result) == LIQ_OK &&
             liq_set_dithering_level(result, dither) == LIQ_OK &&
             liq_write_remapped_image(result, image, indices, (size_t)width * height) == LIQ_OK;
        ColorMapObject *map = NULL;
        if (ok) {
            const liq_palette *pal = liq_get_palette(result);
            GifColorType colors[256];
            memset(colors, 0, sizeof colors);
            for (unsigned i = 0; i < pal->count; i++) {
                colors[i].Red = pal->entries[i].r;
                colors[i].Green = pal->entries[i].g;
                colors[i].Blue = pal->entries[i].b;
            }
            int size = 2;
            while (size < (int)pal->count) size *= 2;
            map = GifMakeMapObject(size, colors);
            ok = map != NULL;
        }
        GraphicsControlBlock gcb = {DISPOSE_DO_NOT, false, delay_cs, NO_TRANSPARENT_COLOR};
        GifByteType ext[4];
        EGifGCBToExtension(&gcb, ext);
        ok = ok && EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) == GIF_OK &&
             EGifPutImageDesc(gif, 0, 0, width, height, false, map) == GIF_OK &&
             EGifPutLine(gif, indices, width * height) == GIF_OK;
        GifFreeMapObject(map);
        if (result) liq_result_destroy(result);
        if (image) liq_image_destroy(image);
    }
    free(indices);
    if (attr) liq_attr_destroy(attr);
    if (EGifCloseFile(gif, &err) != GIF_OK) ok = 0;
    if (!ok) {
        free(sink.data);
        return -1;
    }
    *out = sink.data;
    *out_size = sink.size;
    return 0;
}

/* ---- Bare decodes. ---- */

int anchors_decode_jpeg_turbo(const uint8_t *data, size_t size, int denominator, uint8_t **out,
                              int *width, int *height) {
    tjhandle tj = tjInitDecompress();
    if (!tj) return -1;
    int w, h, samp, cs;
    if (tjDecompressHeader3(tj, data, (unsigned long)size, &w, &h, &samp, &cs) != 0) {
        tjDestroy(tj);
        return -1;
    }
    int sw = (w + denominator - 1) / denominator, sh = (h + denominator - 1) / denominator;
    uint8_t *buf = malloc((size_t)sw * sh * 4);
    if (!buf || tjDecompress2(tj, data, (unsigned long)size, buf, sw, sw * 4, sh, TJPF_RGBA, 0) != 0) {
        free(buf);
        tjDestroy(tj);
        return -1;
    }
    tjDestroy(tj);
    *out = buf;
    *width = sw;
    *height = sh;
    return 0;
}

struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
};

static void jerr_exit(j_common_ptr cinfo) { longjmp(((struct jerr *)cinfo->err)->jump, 1); }

static int decode_libjpeg(const uint8_t *data, size_t size, int denominator, J_COLOR_SPACE space,
                          uint8_t **out, int *width, int *height) {
    struct jpeg_decompress_struct cinfo;
    struct jerr err;
    uint8_t *volatile buf = NULL;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = jerr_exit;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(buf);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned)denominator;
    cinfo.out_color_space = space;
    jpeg_start_decompress(&cinfo);
    size_t stride = (size_t)cinfo.output_width * 4;
    buf = malloc(stride * cinfo.output_height);
    if (!buf) longjmp(err.jump, 1);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = buf + stride * cinfo.output_scanline;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    *out = buf;
    return 0;
}

int anchors_decode_png(const uint8_t *data, size_t size, uint8_t **out, int *width, int *height) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, size)) return -1;
    image.format = PNG_FORMAT_RGBA;
    uint8_t *buf = malloc(PNG_IMAGE_SIZE(image));
    if (!buf || !png_image_finish_read(&image, NULL, buf, 0, NULL)) {
        free(buf);
        png_image_free(&image);
        return -1;
    }
    *out = buf;
    *width = (int)image.width;
    *height = (int)image.height;
    return 0;
}

int anchors_decode_webp(const uint8_t *data, size_t size, uint8_t **out, int *width, int *height) {
    if (!WebPGetInfo(data, size, width, height)) return -1;
    size_t stride = (size_t)*width * 4, bytes = stride * (size_t)*height;
    uint8_t *buf = malloc(bytes);
    if (!buf || !WebPDecodeRGBAInto(data, size, buf, bytes, (int)stride)) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

typedef struct mem_source {
    const uint8_t *data;
    size_t size, pos;
} mem_source;

static int read_mem(GifFileType *gif, GifByteType *buf, int len) {
    mem_source *s = gif->UserData;
    size_t n = (size_t)len < s->size - s->pos ? (size_t)len : s->size - s->pos;
    memcpy(buf, s->data + s->pos, n);
    s->pos += n;
    return (int)n;
}

int anchors_decode_gif(const uint8_t *data, size_t size) {
    mem_source src = {data, size, 0};
    int err = 0;
    GifFileType *gif = DGifOpen(&src, read_mem, &err);
    if (!gif) return -1;
    int rc = DGifSlurp(gif) == GIF_OK ? gif->ImageCount : -1;
    DGifCloseFile(gif, &err);
    return rc;
}

int anchors_decode_jpeg_libjpeg(const uint8_t *data, size_t size, int denominator, uint8_t **out,
                                int *width, int *height) {
    return decode_libjpeg(data, size, denominator, JCS_EXT_RGBA, out, width, height);
}

int anchors_decode_jpeg_cmyk(const uint8_t *data, size_t size, uint8_t **out, int *width,
                             int *height) {
    return decode_libjpeg(data, size, 1, JCS_CMYK, out, width, height);
}

/* One TurboJPEG handle a thread, as a long-running user would keep. */
static _Thread_local tjhandle tls_tj;

int anchors_tj_decompress_into(const uint8_t *data, size_t size, int denominator, uint8_t *dst,
                               size_t capacity) {
    if (!tls_tj) tls_tj = tjInitDecompress();
    int w, h, samp, cs;
    if (tjDecompressHeader3(tls_tj, data, (unsigned long)size, &w, &h, &samp, &cs) != 0) return -1;
    int sw = (w + denominator - 1) / denominator, sh = (h + denominator - 1) / denominator;
    if ((size_t)sw * sh * 4 > capacity) return -1;
    return tjDecompress2(tls_tj, data, (unsigned long)size, dst, sw, sw * 4, sh, TJPF_RGBA, 0);
}

int anchors_png_decode_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, size)) return -1;
    image.format = PNG_FORMAT_RGBA;
    if (PNG_IMAGE_SIZE(image) > capacity) {
        png_image_free(&image);
        return -1;
    }
    return png_image_finish_read(&image, NULL, dst, 0, NULL) ? 0 : -1;
}

int anchors_webp_decode_into(const uint8_t *data, size_t size, uint8_t *dst, size_t capacity) {
    int w, h;
    if (!WebPGetInfo(data, size, &w, &h)) return -1;
    return WebPDecodeRGBAInto(data, size, dst, capacity, w * 4) ? 0 : -1;
}

/* ---- Little CMS 2. ---- */

void *anchors_lcms_rgba_to_srgb(const uint8_t *icc, size_t size) {
    cmsHPROFILE src = cmsOpenProfileFromMem(icc, (cmsUInt32Number)size);
    if (!src) return NULL;
    cmsHPROFILE dst = cmsCreate_sRGBProfile();
    cmsHTRANSFORM t = cmsCreateTransform(src, TYPE_RGBA_8, dst, TYPE_RGBA_8, INTENT_PERCEPTUAL,
                                         cmsFLAGS_BLACKPOINTCOMPENSATION | cmsFLAGS_COPY_ALPHA);
    cmsCloseProfile(src);
    cmsCloseProfile(dst);
    return t;
}

void anchors_lcms_apply(void *transform, uint8_t *rgba, size_t pixels) {
    cmsDoTransform(transform, rgba, rgba, (cmsUInt32Number)pixels);
}

void anchors_lcms_free(void *transform) {
    if (transform) cmsDeleteTransform(transform);
}

int anchors_make_rgb_profile(const double xy[6], const double gamma[3], uint8_t **out, size_t *out_size) {
    cmsCIExyY white;
    cmsWhitePointFromTemp(&white, 6504);
    cmsCIExyYTRIPLE primaries = {{xy[0], xy[1], 1}, {xy[2], xy[3], 1}, {xy[4], xy[5], 1}};
    cmsToneCurve *curves[3] = {cmsBuildGamma(NULL, gamma[0]), cmsBuildGamma(NULL, gamma[1]),
                               cmsBuildGamma(NULL, gamma[2])};
    cmsHPROFILE p = curves[0] && curves[1] && curves[2] ? cmsCreateRGBProfile(&white, &primaries, curves) : NULL;
    for (int i = 0; i < 3; i++) {
        if (curves[i]) cmsFreeToneCurve(curves[i]);
    }
    if (!p) return -1;
    cmsUInt32Number size = 0;
    int rc = -1;
    if (cmsSaveProfileToMem(p, NULL, &size) && size > 0 && (*out = malloc(size)) != NULL) {
        if (cmsSaveProfileToMem(p, *out, &size)) {
            *out_size = size;
            rc = 0;
        } else {
            free(*out);
            *out = NULL;
        }
    }
    cmsCloseProfile(p);
    return rc;
}
