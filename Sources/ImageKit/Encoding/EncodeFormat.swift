/// A file format and its settings for ``ImageEncoder``.
///
/// GIF and WebP keep animations: ``ImageEncoder`` writes every frame of a multi-frame image
/// with its delays and loop count; JPEG, PNG and AVIF write one frame.
///
/// No format here embeds a thumbnail. SDWebImage's `embedThumbnail` encode option exists for
/// ImageIO, which can put a small preview into a JPEG's EXIF block (and HEIF's thumbnail item);
/// ImageKit writes no EXIF at all (see ``ImageEncoder``), and a service sends the size a client
/// asked for instead of a preview inside a larger file, so there is no such option.
public enum EncodeFormat: Sendable, Hashable {
    /// JPEG at `quality` (1…100), optionally progressive; transparent pixels are
    /// composited over `background`.
    case jpeg(quality: Int = 85, progressive: Bool = false, background: RGBColor = .white)
    /// PNG at zlib `compressionLevel` 0…9; keeps alpha (opaque images are written as RGB).
    case png(compressionLevel: Int = 6)
    /// Lossy WebP at `quality` 0…100; keeps alpha. An animation keeps its loop count and each
    /// frame's delay in milliseconds, at most 16 777 215 ms (longer delays are written as that).
    case webp(quality: Int = 80)
    /// Lossless WebP; keeps alpha. Animations as for ``webp(quality:)``.
    case webpLossless
    /// AVIF (AV1 through libavif and libaom) at `quality` 0…100, which sets the AV1 quantizer
    /// to round((100 − quality) × 63 / 100) for colour and alpha; `speed` 0 (slowest,
    /// smallest) … 10 (fastest); YUV 4:2:0, or 4:4:4 with `yuv444`. Keeps alpha.
    case avif(quality: Int = 60, speed: Int = 6, yuv444: Bool = false)

    /// GIF89a, every frame with its own palette of at most 256 colours.
    ///
    /// A frame of at most 256 colours (transparency counting as one) keeps its exact colours;
    /// others are quantised by libimagequant aiming at `quality` (0…100, its highest palette
    /// quality) at `speed` (1, slowest and best, … 10, fastest) and mapped with `dithering`.
    /// GIF has no partial transparency: pixels with alpha below 128 are written transparent,
    /// the others opaque. Frame delays are written in centiseconds, rounded to the nearest
    /// (half up, at most 655.35 s); delays under 20 ms are written as they are, although
    /// browsers show frames of 0 or 10 ms for 100 ms. Animations of opaque frames store only
    /// the rectangle that changed since the previous frame. No ICC profile is embedded.
    ///
    /// Quantising is most of the cost: a 480×270 photo frame takes about 325 ms at speed 4
    /// (libimagequant's default, kept here) and 30–45 ms at speed 10 on a shared 2-core VM
    /// (`AnimatedEncodeBenchmarks.testGIF`); a service encoding animations on request wants a
    /// high speed.
    case gif(quality: Int = 100, speed: Int = 4, dithering: GIFDithering = .floydSteinberg)

    /// The format a file name's extension asks for (`jpg`, `jpeg`, `png`, `webp`, `avif`, `gif`),
    /// with default settings.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg()
        case "png": self = .png()
        case "webp": self = .webp()
        case "avif": self = .avif()
        case "gif": self = .gif()
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
        case .gif: .gif
        }
    }

    /// Whether the format writes every frame of an animation (GIF and WebP).
    public var keepsAnimation: Bool {
        switch self {
        case .gif, .webp, .webpLossless: true
        case .jpeg, .png, .avif: false
        }
    }

    /// The quality this lossy format is set to and the lowest it accepts, for the file-size
    /// search; `nil` for the lossless formats (PNG, lossless WebP, GIF).
    var qualityRange: ClosedRange<Int>? {
        switch self {
        case .jpeg(let quality, _, _): 1...max(1, quality)
        case .webp(let quality): 0...max(0, quality)
        case .avif(let quality, _, _): 0...max(0, quality)
        case .png, .webpLossless, .gif: nil
        }
    }

    /// The same format and settings at `quality` (lossy formats; the others are returned as they are).
    func atQuality(_ quality: Int) -> EncodeFormat {
        switch self {
        case .jpeg(_, let progressive, let background): .jpeg(quality: quality, progressive: progressive, background: background)
        case .webp: .webp(quality: quality)
        case .avif(_, let speed, let yuv444): .avif(quality: quality, speed: speed, yuv444: yuv444)
        case .png, .webpLossless, .gif: self
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
        case .gif(let quality, let speed, let dithering):
            return "gif-q\(quality)-s\(speed)\(dithering == .none ? "-nodither" : "")"
        }
    }
}
