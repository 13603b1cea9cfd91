/*
 * make_profiles.c — writes the ICC profiles of the colour-management fixtures
 * with Little CMS 2 (built and run by make_color_fixtures.py):
 *
 *   display-p3.icc   Display P3: DCI-P3 primaries, D65, sRGB tone curve (matrix/shaper)
 *   adobe-rgb.icc    Adobe RGB (1998)-like: its primaries, D65, gamma 563/256
 *   gray-18.icc      grey, D65, gamma 1.8
 *   srgb-lcms.icc    lcms's built-in sRGB (cmsCreate_sRGBProfile), saved as v2
 *   cmyk-naive.icc   a synthetic CMYK output profile: an A2B0 table (5 points a side)
 *                    of R = (1-C)(1-K), G = (1-M)(1-K), B = (1-Y)(1-K) in sRGB, as Lab.
 *                    Not a press profile: only something lcms and libvips both read.
 *
 * usage: make_profiles OUTDIR
 */
#include <stdio.h>
#include <string.h>

#include <lcms2.h>

static int save(cmsHPROFILE p, const char *dir, const char *name, const char *desc) {
    cmsMLU *mlu = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(mlu, "en", "US", desc);
    cmsWriteTag(p, cmsSigProfileDescriptionTag, mlu);
    cmsMLU *cprt = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(cprt, "en", "US", "No copyright, use freely (ImageKit test fixture)");
    cmsWriteTag(p, cmsSigCopyrightTag, cprt);
    cmsMLUfree(mlu);
    cmsMLUfree(cprt);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int ok = cmsSaveProfileToFile(p, path);
    cmsCloseProfile(p);
    if (!ok) fprintf(stderr, "cannot write %s\n", path);
    return ok ? 0 : 1;
}

static cmsHPROFILE rgb(double rx, double ry, double gx, double gy, double bx, double by,
                       cmsToneCurve *curve) {
    cmsCIExyY white;
    cmsWhitePointFromTemp(&white, 6504);
    cmsCIExyYTRIPLE primaries = {{rx, ry, 1}, {gx, gy, 1}, {bx, by, 1}};
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE p = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsSetProfileVersion(p, 2.1);
    return p;
}

static cmsHTRANSFORM srgb_to_lab;

static int sample_cmyk(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    (void)cargo;
    double c = in[0] / 65535.0, m = in[1] / 65535.0, y = in[2] / 65535.0, k = in[3] / 65535.0;
    cmsUInt16Number rgb[3] = {(cmsUInt16Number)((1 - c) * (1 - k) * 65535 + 0.5),
                              (cmsUInt16Number)((1 - m) * (1 - k) * 65535 + 0.5),
                              (cmsUInt16Number)((1 - y) * (1 - k) * 65535 + 0.5)};
    cmsDoTransform(srgb_to_lab, rgb, out, 1);
    return 1;
}

static cmsHPROFILE cmyk(void) {
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsHPROFILE lab = cmsCreateLab4Profile(NULL);
    srgb_to_lab = cmsCreateTransform(srgb, TYPE_RGB_16, lab, TYPE_Lab_16, INTENT_RELATIVE_COLORIMETRIC, 0);
    cmsCloseProfile(srgb);
    cmsCloseProfile(lab);

    cmsHPROFILE p = cmsCreateProfilePlaceholder(NULL);
    cmsSetProfileVersion(p, 2.1);
    cmsSetDeviceClass(p, cmsSigOutputClass);
    cmsSetColorSpace(p, cmsSigCmykData);
    cmsSetPCS(p, cmsSigLabData);
    cmsPipeline *lut = cmsPipelineAlloc(NULL, 4, 3);
    cmsStage *clut = cmsStageAllocCLut16bit(NULL, 5, 4, 3, NULL);
    cmsStageSampleCLut16bit(clut, sample_cmyk, NULL, 0);
    cmsPipelineInsertStage(lut, cmsAT_END, clut);
    cmsWriteTag(p, cmsSigAToB0Tag, lut);
    cmsPipelineFree(lut);
    cmsWriteTag(p, cmsSigMediaWhitePointTag, cmsD50_XYZ());
    cmsDeleteTransform(srgb_to_lab);
    return p;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_profiles OUTDIR\n");
        return 2;
    }
    const char *dir = argv[1];
    int failed = 0;
    cmsFloat64Number srgb_params[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
    cmsToneCurve *srgb_curve = cmsBuildParametricToneCurve(NULL, 4, srgb_params);
    failed |= save(rgb(0.680, 0.320, 0.265, 0.690, 0.150, 0.060, srgb_curve), dir,
                   "display-p3.icc", "Display P3 (ImageKit fixture)");
    cmsToneCurve *adobe_curve = cmsBuildGamma(NULL, 563.0 / 256.0);
    failed |= save(rgb(0.640, 0.330, 0.210, 0.710, 0.150, 0.060, adobe_curve), dir,
                   "adobe-rgb.icc", "Adobe RGB (1998)-like (ImageKit fixture)");
    cmsToneCurve *g18 = cmsBuildGamma(NULL, 1.8);
    cmsCIExyY white;
    cmsWhitePointFromTemp(&white, 6504);
    cmsHPROFILE gray = cmsCreateGrayProfile(&white, g18);
    cmsSetProfileVersion(gray, 2.1);
    failed |= save(gray, dir, "gray-18.icc", "Grey gamma 1.8 (ImageKit fixture)");
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsSetProfileVersion(srgb, 2.1);
    failed |= save(srgb, dir, "srgb-lcms.icc", "sRGB built by lcms (ImageKit fixture)");
    failed |= save(cmyk(), dir, "cmyk-naive.icc", "Naive CMYK (ImageKit fixture)");
    cmsFreeToneCurve(srgb_curve);
    cmsFreeToneCurve(adobe_curve);
    cmsFreeToneCurve(g18);
    return failed;
}
