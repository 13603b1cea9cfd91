/// A file format and its settings for ``ImageEncoder``.
public enum EncodeFormat: Sendable, Hashable {
    /// JPEG at `quality` (1…100), optionally progressive; transparent pixels are
    /// composited over `background`.
    case jpeg(quality: Int = 85, progressive: Bool = false, background: RGBColor = .white)
    /// PNG at zlib `compressionLevel` 0…9; keeps alpha (opaque images are written as RGB).
    case png(compressionLevel: Int = 6)
    /// Lossy WebP at `quality` 0…100; keeps alpha.
    case webp(quality: Int = 80)
    /// Lossless WebP; keeps alpha.
    case webpLossless
    /// AVIF (AV1 through libavif and libaom) at `quality` 0…100, which sets the AV1 quantizer
    /// to round((100 − quality) × 63 / 100) for colour and alpha; `speed` 0 (slowest,
    /// smallest) … 10 (fastest); YUV 4:2:0, or 4:4:4 with `yuv444`. Keeps alpha.
    case avif(quality: Int = 60, speed: Int = 6, yuv444: Bool = false)

    /// The format a file name's extension asks for (`jpg`, `jpeg`, `png`, `webp`, `avif`), with default settings.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg()
        case "png": self = .png()
        case "webp": self = .webp()
        case "avif": self = .avif()
        default: return nil
        }
    }
}

extension EncodeFormat {
    /// The container format the encoder writes.
    public var imageFormat: ImageFormat {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .webp, .webpLossless: .webp
        case .avif: .avif
        }
    }

    /// Every setting, for cache keys: variants encoded differently never share an entry.
    var cacheKey: String {
        switch self {
        case .jpeg(let quality, let progressive, let background):
            let bg = background == .white ? "" : "-bg\(background.red).\(background.green).\(background.blue)"
            return "jpeg-q\(quality)\(progressive ? "-progressive" : "")\(bg)"
        case .png(let level): return "png-z\(level)"
        case .webp(let quality): return "webp-q\(quality)"
        case .webpLossless: return "webp-lossless"
        case .avif(let quality, let speed, let yuv444): return "avif-q\(quality)-s\(speed)\(yuv444 ? "-444" : "")"
        }
    }
}
