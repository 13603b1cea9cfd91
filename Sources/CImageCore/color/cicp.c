/*
 * cicp.c — colour described by CICP code points (ITU-T H.273: colour primaries,
 * transfer characteristics) instead of an embedded profile, as the nclx colour box
 * of AVIF and HEIF does; both decoders hand their code points here. Only Display P3
 * is converted, through a profile ImageKit builds: P3 primaries (SMPTE EG 432-1,
 * code point 12) with the D65 white point and the sRGB transfer (code point 13),
 * made once with lcms and kept for the process. sRGB/BT.709 and unspecified need
 * nothing; every other pair (BT.2020, PQ, HLG: HDR is out of scope) is left as it
 * is, its values read as sRGB.
 */
#include <pthread.h>
#include <stdlib.h>

#include <lcms2.h>

#include "ic_color_internal.h"

/* H.273 code points. */
#define CICP_PRIMARIES_P3 12
#define CICP_TRANSFER_SRGB 13

static pthread_once_t p3_once = PTHREAD_ONCE_INIT;
static uint8_t *p3_bytes;
static size_t p3_size;

static void build_p3(void) {
    cmsContext ctx = cmsCreateContext(NULL, NULL);
    if (!ctx) return;
    cmsCIExyY white = {0.3127, 0.3290, 1.0};
    cmsCIExyYTRIPLE primaries = {{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
    /* IEC 61966-2.1: Y = ((X + 0.055) / 1.055)^2.4 above 0.04045, X / 12.92 below. */
    cmsFloat64Number srgb[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
    cmsToneCurve *curve = cmsBuildParametricToneCurve(ctx, 4, srgb);
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE p = curve ? cmsCreateRGBProfileTHR(ctx, &white, &primaries, curves) : NULL;
    cmsUInt32Number size = 0;
    if (p && cmsSaveProfileToMem(p, NULL, &size) && size > 0) {
        uint8_t *bytes = malloc(size);
        if (bytes && cmsSaveProfileToMem(p, bytes, &size)) {
            p3_bytes = bytes;
            p3_size = size;
        } else {
            free(bytes);
        }
    }
    if (p) cmsCloseProfile(p);
    if (curve) cmsFreeToneCurve(curve);
    cmsDeleteContext(ctx);
}

void ic__color_state_take_cicp(ic__color_state *c, ic__budget *budget, uint16_t primaries,
                              uint16_t transfer) {
    /* A profile the file carries wins, even one that is ignored. */
    if (c->icc || c->ignored) return;
    if (primaries != CICP_PRIMARIES_P3 || transfer != CICP_TRANSFER_SRGB) return;
    pthread_once(&p3_once, build_p3);
    if (p3_bytes) ic__color_state_take_profile(c, budget, p3_bytes, p3_size);
}
