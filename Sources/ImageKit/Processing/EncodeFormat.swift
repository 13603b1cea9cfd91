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

    /// The format a file name's extension asks for (`jpg`, `jpeg`, `png`, `webp`), with default settings.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg()
        case "png": self = .png()
        case "webp": self = .webp()
        default: return nil
        }
    }
}
