import CImageCore

/// The colour space an embedded ICC profile declares.
public enum ICCColorSpace: String, Sendable, Hashable {
    /// An RGB profile.
    case rgb = "RGB"
    /// A grey profile.
    case gray = "GRAY"
    /// A CMYK profile.
    case cmyk = "CMYK"
    /// Any other space (Lab, YCbCr, n-colour, …); never applied.
    case other

    /// The space for a C `ic_color_space` value; nil for `IC_COLOR_SPACE_NONE`.
    init?(cValue: UInt32) {
        switch ic_color_space(rawValue: cValue) {
        case IC_COLOR_SPACE_RGB: self = .rgb
        case IC_COLOR_SPACE_GRAY: self = .gray
        case IC_COLOR_SPACE_CMYK: self = .cmyk
        case IC_COLOR_SPACE_NONE: return nil
        default: self = .other
        }
    }
}
