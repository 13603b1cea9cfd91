/*
 * jpeg_scans.c — progressive JPEGs with a scan script of one's own, through the libjpeg
 * API: encoded from pixels (any sampling factors, restart interval), or transcoded
 * losslessly from another JPEG's coefficients. For the tests of ImageKit's DC-only
 * decoder, which must agree with libjpeg on every progression.
 */
#include "CAnchors.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

typedef struct anchors_jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} anchors_jerr;

static void on_error(j_common_ptr cinfo) { longjmp(((anchors_jerr *)cinfo->err)->jump, 1); }
static void on_message(j_common_ptr cinfo) { (void)cinfo; }

/* Parses jpegtran's -scans syntax ("0,1,2: 0-0, 0, 1; 0: 1-63, 0, 0;"). */
static int parse_scans(const char *text, jpeg_scan_info *scans, int capacity) {
    int n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\n' || *p == '\t') p++;
        if (!*p) break;
        if (n == capacity) return -1;
        jpeg_scan_info *s = &scans[n];
        memset(s, 0, sizeof *s);
        for (;;) {
            char *end;
            long c = strtol(p, &end, 10);
            if (end == p || s->comps_in_scan == MAX_COMPS_IN_SCAN) return -1;
            s->component_index[s->comps_in_scan++] = (int)c;
            p = end;
            while (*p == ' ') p++;
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p != ':') return -1;
            p++;
            break;
        }
        int Ss, Se, Ah, Al, used = 0;
        if (sscanf(p, " %d - %d , %d , %d %n", &Ss, &Se, &Ah, &Al, &used) != 4) return -1;
        s->Ss = Ss;
        s->Se = Se;
        s->Ah = Ah;
        s->Al = Al;
        p += used;
        if (*p == ';') p++;
        n++;
    }
    return n;
}

static int finish(unsigned char *buf, unsigned long size, uint8_t **out, size_t *out_size) {
    *out = malloc(size ? size : 1);
    if (!*out) {
        free(buf);
        return -1;
    }
    memcpy(*out, buf, size);
    *out_size = size;
    free(buf);
    return 0;
}

/* The scan script (or libjpeg's own progression) and restart interval. */
static int progression(j_compress_ptr cinfo, const char *scans, jpeg_scan_info *storage, int capacity,
                       int restart_interval) {
    if (scans) {
        int n = parse_scans(scans, storage, capacity);
        if (n <= 0) return -1;
        cinfo->scan_info = storage;
        cinfo->num_scans = n;
    } else {
        jpeg_simple_progression(cinfo);
    }
    cinfo->restart_interval = (unsigned int)restart_interval;
    return 0;
}

int anchors_encode_jpeg_scans(const uint8_t *pixels, int width, int height,
                              const anchors_jpeg_script *st, uint8_t **out, size_t *out_size) {
    struct jpeg_compress_struct cinfo;
    anchors_jerr jerr;
    cinfo.err = jpeg_std_error(&jerr.pub);
    jerr.pub.error_exit = on_error;
    jerr.pub.output_message = on_message;
    unsigned char *buf = NULL;
    unsigned long size = 0;
    jpeg_scan_info scans[64];
    if (setjmp(jerr.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buf);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buf, &size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = st->components;
    cinfo.in_color_space = st->components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, st->quality, TRUE);
    for (int c = 0; c < st->components && c < 3; c++) {
        cinfo.comp_info[c].h_samp_factor = st->h_samp[c] ? st->h_samp[c] : 1;
        cinfo.comp_info[c].v_samp_factor = st->v_samp[c] ? st->v_samp[c] : 1;
    }
    if (progression(&cinfo, st->scans, scans, 64, st->restart_interval) != 0) {
        jpeg_destroy_compress(&cinfo);
        return -1;
    }
    jpeg_start_compress(&cinfo, TRUE);
    size_t stride = (size_t)width * st->components;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + stride * cinfo.next_scanline);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return finish(buf, size, out, out_size);
}

int anchors_jpeg_transcode(const uint8_t *data, size_t size, const char *scans, int restart_interval,
                           uint8_t **out, size_t *out_size) {
    struct jpeg_decompress_struct src;
    struct jpeg_compress_struct dst;
    anchors_jerr jerr_src, jerr_dst;
    src.err = jpeg_std_error(&jerr_src.pub);
    jerr_src.pub.error_exit = on_error;
    jerr_src.pub.output_message = on_message;
    dst.err = jpeg_std_error(&jerr_dst.pub);
    jerr_dst.pub.error_exit = on_error;
    jerr_dst.pub.output_message = on_message;
    unsigned char *buf = NULL;
    unsigned long out_len = 0;
    jpeg_scan_info info[64];
    jpeg_create_decompress(&src);
    jpeg_create_compress(&dst);
    if (setjmp(jerr_src.jump) || setjmp(jerr_dst.jump)) {
        jpeg_destroy_compress(&dst);
        jpeg_destroy_decompress(&src);
        free(buf);
        return -1;
    }
    jpeg_mem_src(&src, data, (unsigned long)size);
    jpeg_read_header(&src, TRUE);
    jvirt_barray_ptr *coefficients = jpeg_read_coefficients(&src);
    jpeg_mem_dest(&dst, &buf, &out_len);
    jpeg_copy_critical_parameters(&src, &dst);
    dst.arith_code = FALSE;
    if (progression(&dst, scans, info, 64, restart_interval) != 0) {
        jpeg_destroy_compress(&dst);
        jpeg_destroy_decompress(&src);
        return -1;
    }
    jpeg_write_coefficients(&dst, coefficients);
    jpeg_finish_compress(&dst);
    jpeg_finish_decompress(&src);
    jpeg_destroy_compress(&dst);
    jpeg_destroy_decompress(&src);
    return finish(buf, out_len, out, out_size);
}
