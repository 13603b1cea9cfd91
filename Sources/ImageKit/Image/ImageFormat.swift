import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An image container format, recognised from the leading bytes of a file.
///
/// ImageKit never trusts a file extension or a `Content-Type`. Only ``jpeg``,
/// ``png``, ``gif``, ``webp`` and ``avif`` decode; the others are named so that errors
/// can say "unsupported format: TIFF".
public enum ImageFormat: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No known signature.
    case unknown = 0
    /// JPEG (JFIF/EXIF).
    case jpeg = 1
    /// PNG, including APNG's default image.
    case png = 2
    /// GIF 87a/89a.
    case gif = 3
    /// WebP (lossy, lossless, animated).
    case webp = 4
    /// Windows bitmap (not decoded).
    case bmp = 5
    /// TIFF (not decoded).
    case tiff = 6
    /// HEIC (not decoded).
    case heic = 7
    /// HEIF with another codec (not decoded).
    case heif = 8
    /// AVIF: stills, grids and image sequences (`avis`).
    case avif = 9
    /// JPEG XL (not decoded).
    case jxl = 10
    /// Windows icon (not decoded).
    case ico = 11
    /// SVG (not decoded).
    case svg = 12

    /// Detects the format of `bytes` from its signature.
    public init<Bytes: ContiguousBytes>(detecting bytes: Bytes) {
        self = bytes.withUnsafeBytes { raw in
            let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return ImageFormat(cValue: ic_sniff(base, raw.count))
        }
    }

    init(cValue: ic_format) {
        self = ImageFormat(rawValue: Int(cValue.rawValue)) ?? .unknown
    }

    /// Whether ImageKit can decode this format.
    public var isDecodable: Bool {
        ic_format_is_decodable(cValue) != 0
    }

    /// The conventional name, e.g. `"JPEG"` or `"WebP"`.
    public var description: String {
        String(cString: ic_format_name(cValue))
    }

    /// The C core's value for this format.
    var cValue: ic_format {
        ic_format(rawValue: UInt32(rawValue))
    }
}
