/*
 * icc.c — reading back an embedded ICC profile with each codec library's own
 * reader, independently of ImageKit's encoder: libjpeg's jpeg_read_icc_profile,
 * libpng's png_get_iCCP and libwebpmux's WebPMuxGetChunk.
 */
#include "CAnchors.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>
#include <webp/mux.h>

/* A malloc'd copy of `size` bytes at `p`; -1 if out of memory. */
static int copy_out(const uint8_t *p, size_t size, uint8_t **out, size_t *out_size) {
    *out = malloc(size ? size : 1);
    if (!*out) return -1;
    memcpy(*out, p, size);
    *out_size = size;
    return 0;
}

struct icc_jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
};

static void icc_jerr_exit(j_common_ptr cinfo) { longjmp(((struct icc_jerr *)cinfo->err)->jump, 1); }

int anchors_jpeg_icc_profile(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size) {
    struct jpeg_decompress_struct cinfo;
    struct icc_jerr err;
    JOCTET *icc = NULL;
    unsigned int icc_size = 0;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = icc_jerr_exit;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_save_markers(&cinfo, JPEG_APP0 + 2, 0xFFFF);
    jpeg_read_header(&cinfo, TRUE);
    int rc = 1;
    if (jpeg_read_icc_profile(&cinfo, &icc, &icc_size)) {
        rc = copy_out(icc, icc_size, out, out_size);
        free(icc);
    }
    jpeg_destroy_decompress(&cinfo);
    return rc;
}

typedef struct icc_png_src {
    const uint8_t *p;
    size_t left;
} icc_png_src;

static void icc_png_read(png_structp png, png_bytep dst, size_t n) {
    icc_png_src *src = png_get_io_ptr(png);
    if (n > src->left) png_error(png, "truncated");
    memcpy(dst, src->p, n);
    src->p += n;
    src->left -= n;
}

int anchors_png_icc_profile(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    icc_png_src src = {data, size};
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    png_set_read_fn(png, &src, icc_png_read);
    png_read_info(png, info);
    png_charp name;
    int compression;
    png_bytep icc;
    png_uint_32 icc_size;
    int rc = 1;
    if (png_get_iCCP(png, info, &name, &compression, &icc, &icc_size) == PNG_INFO_iCCP) {
        rc = copy_out(icc, icc_size, out, out_size);
    }
    png_destroy_read_struct(&png, &info, NULL);
    return rc;
}

int anchors_webp_icc_profile(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size) {
    WebPData file = {data, size};
    WebPMux *mux = WebPMuxCreate(&file, 0);
    if (!mux) return -1;
    uint32_t flags = 0;
    WebPData icc;
    int rc = -1;
    if (WebPMuxGetFeatures(mux, &flags) == WEBP_MUX_OK) {
        WebPMuxError e = WebPMuxGetChunk(mux, "ICCP", &icc);
        if (e == WEBP_MUX_OK && (flags & ICCP_FLAG)) {
            rc = copy_out(icc.bytes, icc.size, out, out_size);
        } else if (e == WEBP_MUX_NOT_FOUND && !(flags & ICCP_FLAG)) {
            rc = 1;
        }
    }
    WebPMuxDelete(mux);
    return rc;
}
