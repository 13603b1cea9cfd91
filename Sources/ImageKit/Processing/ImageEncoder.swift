import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes decoded images to JPEG, PNG or WebP.
///
/// Premultiplied pixels are un-premultiplied exactly before encoding (pixels
/// with alpha 0 become transparent black), so decoding a PNG or lossless WebP
/// gives back the same premultiplied pixels. JPEG has no alpha: pixels are
/// composited over ``EncodeFormat/jpeg(quality:progressive:background:)``'s
/// background colour.
public enum ImageEncoder {
    /// Encodes frame `frame` of `image` (the first by default).
    public static func encode(_ image: Image, as format: EncodeFormat, frame: Int = 0) throws -> Data {
        guard frame >= 0, frame < image.frameCount else {
            throw ImageKitError.invalidArgument("encode: frame \(frame) of \(image.frameCount)")
        }
        var options = ic_encode_options()
        switch format {
        case .jpeg(let quality, let progressive, let background):
            ic_encode_options_init(&options, IC_FORMAT_JPEG)
            options.quality = Int32(clamping: quality)
            options.progressive = progressive ? 1 : 0
            options.background = (background.red, background.green, background.blue)
        case .png(let compressionLevel):
            ic_encode_options_init(&options, IC_FORMAT_PNG)
            options.compression_level = Int32(clamping: compressionLevel)
        case .webp(let quality):
            ic_encode_options_init(&options, IC_FORMAT_WEBP)
            options.quality = Int32(clamping: quality)
        case .webpLossless:
            ic_encode_options_init(&options, IC_FORMAT_WEBP)
            options.lossless = 1
        }
        options.frame = UInt32(frame)
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var err = ic_error()
        let st = ic_encode(image.raw, &options, &out, &size, &err)
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        return Data(bytesNoCopy: out, count: size, deallocator: .custom { p, _ in
            ic_encode_free(p.assumingMemoryBound(to: UInt8.self))
        })
    }
}
