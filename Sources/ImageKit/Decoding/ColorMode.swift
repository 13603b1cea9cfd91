import CImageCore

/// What decoding does with an image's embedded ICC colour profile.
///
/// With ``sRGB`` (the default) an image tagged with a profile (JPEG APP2, PNG iCCP, WebP ICCP)
/// is converted to sRGB with Little CMS 2, perceptual intent with black-point compensation as
/// libvips does; untagged images and images whose profile describes sRGB are left as they
/// are, bit for bit. PNG gAMA and cHRM chunks are not applied, and a CMYK JPEG without a
/// profile keeps ImageKit's plain CMYK-to-RGB formula. A profile that cannot be used
/// (unreadable, of another colour space than the pixels, over 4 MiB, broken JPEG segments)
/// is ignored: the image decodes as untagged, and ``Image/isICCProfileIgnored`` says so.
public enum ColorMode: Sendable, Hashable {
    /// Convert images with an embedded profile to sRGB (the default).
    case sRGB
    /// Keep the source's pixel values; the profile is only reported (``Image/iccProfile``).
    case raw

    var cValue: ic_color_mode {
        switch self {
        case .sRGB: IC_COLOR_SRGB
        case .raw: IC_COLOR_RAW
        }
    }
}
