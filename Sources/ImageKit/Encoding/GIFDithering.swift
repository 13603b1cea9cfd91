/// How a GIF frame with more than 256 colours is mapped onto its palette.
public enum GIFDithering: Sendable, Hashable {
    /// Every pixel takes its nearest palette colour: flat areas stay flat, gradients band.
    case none
    /// Floyd–Steinberg error diffusion (libimagequant's, at full strength): smoother
    /// gradients, larger files.
    case floydSteinberg

    /// libimagequant's dithering level.
    var level: Float {
        switch self {
        case .none: 0
        case .floydSteinberg: 1
        }
    }
}
