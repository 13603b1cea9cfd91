import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An encoded image ready to send: the bytes, what they are, and a validator for HTTP caching.
///
/// Handing one around never copies the bytes: `data` shares the buffer the encoder wrote (or the
/// disk tier read) with every cache entry and result that holds it.
public struct EncodedImage: Sendable, Hashable {
    /// The file's bytes.
    public let data: Data
    /// The container format (`.jpeg`, `.png`, `.webp` or `.gif` for ImageKit's encoders).
    public let format: ImageFormat
    /// The image's size in pixels.
    public let pixelSize: PixelSize
    /// A strong HTTP entity tag for these bytes (quoted, from a 64-bit hash of them).
    public let entityTag: String

    /// Describes `data`, whose format and size the caller knows.
    public init(data: Data, format: ImageFormat, pixelSize: PixelSize) {
        self.data = data
        self.format = format
        self.pixelSize = pixelSize
        let hash = data.withUnsafeBytes { ic_xxh64($0.baseAddress, $0.count, 0) }
        let hex = String(hash, radix: 16)
        entityTag = "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// Describes `data` from its own header (format and size).
    ///
    /// - Throws: ``ImageKitError`` when the bytes are not an image ImageKit can read the header of.
    public init(data: Data) throws(ImageKitError) {
        let info = try ImageDecoder.info(data)
        self.init(data: data, format: info.format, pixelSize: PixelSize(width: info.width, height: info.height))
    }

    /// The MIME type for a `Content-Type` header (`application/octet-stream` for a format
    /// without one).
    public var contentType: String {
        switch format {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .bmp: "image/bmp"
        case .tiff: "image/tiff"
        case .heic: "image/heic"
        case .heif: "image/heif"
        case .avif: "image/avif"
        case .jxl: "image/jxl"
        case .ico: "image/x-icon"
        case .svg: "image/svg+xml"
        case .unknown: "application/octet-stream"
        }
    }

    /// The bytes a memory tier charges for it.
    var cost: Int { data.count }
}
