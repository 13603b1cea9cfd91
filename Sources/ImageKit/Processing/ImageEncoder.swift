import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes decoded images to JPEG, PNG, WebP or AVIF.
///
/// Premultiplied pixels are un-premultiplied exactly before encoding (pixels
/// with alpha 0 become transparent black), so decoding a PNG or lossless WebP
/// gives back the same premultiplied pixels. JPEG has no alpha: pixels are
/// composited over ``EncodeFormat/jpeg(quality:progressive:background:)``'s
/// background colour.
///
/// Nothing but the pixels is written by default: no colour profile (readers take the pixels
/// as sRGB), no EXIF, no text. Pass `iccProfile` to embed a profile (for instance the one the
/// source image carried, when its pixels were kept in that colour space).
public enum ImageEncoder {
    /// The threads ``encodedImage(_:as:frame:iccProfile:)`` encodes on (one per online CPU, started on
    /// first use), so an `async` caller never encodes on the Swift cooperative pool.
    private static let workers = WorkerPool(name: "imagekit-encode", maxThreads: ProcessorCount.online)

    /// Encodes frame `frame` of `image` on ImageKit's own encoding threads, never on the Swift
    /// cooperative pool (where a 20 ms encode would stall every request handler of a service).
    ///
    /// ``ImageManager`` loads asking for encoded bytes encode on the manager's worker threads
    /// instead; this entry point is for images a caller already has.
    ///
    /// - Parameters:
    ///   - image: The image to encode.
    ///   - format: The format and its settings.
    ///   - frame: The frame to encode (the first by default).
    ///   - iccProfile: An ICC profile to embed, as in ``encode(_:as:frame:iccProfile:)``;
    ///     `nil` (the default) embeds nothing.
    /// - Throws: ``ImageKitError`` (``ImageKitError/cancelled`` when the task was cancelled
    ///   before the encode started).
    public static func encodedImage(_ image: Image, as format: EncodeFormat, frame: Int = 0,
                                    iccProfile: Data? = nil) async throws(ImageKitError) -> EncodedImage {
        do {
            return try await workers.run {
                try encodedImageNow(image, as: format, frame: frame, iccProfile: iccProfile)
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// ``encode(_:as:frame:iccProfile:)`` on the calling thread, described as an ``EncodedImage``.
    static func encodedImageNow(_ image: Image, as format: EncodeFormat, frame: Int = 0,
                                iccProfile: Data? = nil) throws(ImageKitError) -> EncodedImage {
        let data = try encode(image, as: format, frame: frame, iccProfile: iccProfile)
        return EncodedImage(data: data, format: format.imageFormat,
                            pixelSize: PixelSize(width: image.width, height: image.height))
    }

    /// Encodes frame `frame` of `image` (the first by default).
    ///
    /// - Parameters:
    ///   - image: The image to encode.
    ///   - format: The format and its settings.
    ///   - frame: The frame to encode (the first by default).
    ///   - iccProfile: An ICC profile to embed: these bytes are written as they are
    ///     (JPEG: APP2 `ICC_PROFILE` markers, PNG: `iCCP`, WebP: `ICCP`, AVIF: `colr`), the pixels are not
    ///     converted. `nil` (the default) embeds nothing, and readers take the pixels as sRGB.
    ///     A profile shorter than 132 bytes, whose header's size field is not its length, or
    ///     without the `acsp` signature is refused with ``ImageKitError/invalidArgument(_:)``, as
    ///     is one larger than JPEG's 255 APP2 markers hold (16,707,345 bytes) and one libpng
    ///     refuses for a PNG (e.g. a profile that is not for RGB pixels).
    public static func encode(_ image: Image, as format: EncodeFormat, frame: Int = 0,
                              iccProfile: Data? = nil) throws(ImageKitError) -> Data {
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
        case .avif(let quality, let speed, let yuv444):
            ic_encode_options_init(&options, IC_FORMAT_AVIF)
            options.quality = Int32(clamping: quality)
            options.speed = Int32(clamping: speed)
            options.yuv444 = yuv444 ? 1 : 0
        }
        options.frame = UInt32(frame)
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var err = ic_error()
        let st: ic_status
        if let iccProfile {
            // A copy that lives through the call; never a NULL pointer, so an empty profile is
            // refused as too short rather than read as "no profile".
            st = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, iccProfile.count)) { copy in
                _ = copy.initialize(from: iccProfile)
                options.icc_profile = UnsafePointer(copy.baseAddress)
                options.icc_profile_size = iccProfile.count
                return ic_encode(image.raw, &options, &out, &size, &err)
            }
        } else {
            st = ic_encode(image.raw, &options, &out, &size, &err)
        }
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        return Data(bytesNoCopy: out, count: size, deallocator: .custom { p, _ in
            ic_encode_free(p.assumingMemoryBound(to: UInt8.self))
        })
    }
}
