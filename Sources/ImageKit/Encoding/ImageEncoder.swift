import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes decoded images to JPEG, PNG, WebP, AVIF or GIF.
///
/// Premultiplied pixels are un-premultiplied exactly before encoding (pixels
/// with alpha 0 become transparent black), so decoding a PNG or lossless WebP
/// gives back the same premultiplied pixels. JPEG has no alpha: pixels are
/// composited over ``EncodeFormat/jpeg(quality:progressive:background:)``'s
/// background colour. GIF keeps one level of transparency (see
/// ``EncodeFormat/gif(quality:speed:dithering:)``).
///
/// Animations: GIF and WebP write every frame of a multi-frame image, with its frame delays
/// and loop count, unless one `frame` is asked for; JPEG and PNG write the first frame (or
/// `frame`). A still image gives a still GIF or WebP. libwebp merges a WebP frame equal to the
/// one before it into that frame (their delays add up), so an animation of equal frames becomes a
/// still WebP; GIF keeps every frame.
///
/// Nothing but the pixels is written by default: no colour profile (readers take the pixels
/// as sRGB), no EXIF, no text. Pass `iccProfile` to embed a profile (for instance the one the
/// source image carried, when its pixels were kept in that colour space).
///
/// Size limits, as SDWebImage's encode options: `maxPixelSize` scales the image down to fit
/// inside a box first (keeping its aspect ratio, never enlarging it), and `maxFileSize` makes
/// the file at most that many bytes. For a lossy format (JPEG, lossy WebP, AVIF) the format's
/// quality is tried first; if the file is larger, a bisection over the lower qualities finds the
/// highest that fits (at most 7 more encodes, so at most 8 a size; AVIF's qualities map onto 64
/// AV1 quantizers, whose sizes are nearly but not strictly ordered, so there it finds a quality
/// that fits, near the highest). When even the lowest quality (JPEG 1, WebP 0, AVIF 0) does not fit — and for the lossless formats (PNG, lossless WebP, GIF), whose one
/// encode does not fit — the dimensions are halved and the search repeated, at most 3 times
/// (down to 1/8 a side); past that the encode fails with ``ImageKitError/limitExceeded(_:)``
/// naming the budget and the smallest file reached. The result is never over the budget. How
/// close it comes: on the built-in 960×720 photo, with budgets from 10 % to 90 % of the q85 file
/// (`AnimatedEncodeBenchmarks.testMaxFileSizeSearch`), the files filled 95 % of the budget on
/// average for JPEG and WebP, 85 % at worst (file size grows in steps of one quality point);
/// the search at half the q85 size ran 7 encodes, 6 to 13 times one encode's time (three runs on
/// a shared 2-core VM).
public enum ImageEncoder {
    /// The threads ``encodedImage(_:as:frame:iccProfile:maxPixelSize:maxFileSize:)`` encodes on (one
    /// per online CPU, started on first use), so an `async` caller never encodes on the Swift
    /// cooperative pool.
    private static let workers = WorkerPool(name: "imagekit-encode", maxThreads: ProcessorCount.online)

    /// Encodes `image` on ImageKit's own encoding threads, never on the Swift cooperative pool
    /// (where a 20 ms encode would stall every request handler of a service).
    ///
    /// ``ImageManager`` loads asking for encoded bytes encode on the manager's worker threads
    /// instead; this entry point is for images a caller already has.
    ///
    /// - Parameters:
    ///   - image: The image to encode.
    ///   - format: The format and its settings.
    ///   - frame: One frame to encode; `nil` (the default): every frame for GIF and WebP, the
    ///     first for JPEG and PNG.
    ///   - iccProfile: An ICC profile to embed, as in
    ///     ``encode(_:as:frame:iccProfile:maxPixelSize:maxFileSize:)``; `nil` (the default)
    ///     embeds nothing.
    ///   - maxPixelSize: A box to scale the image down into first (a side of 0: unconstrained);
    ///     `nil` (the default): the image's own size.
    ///   - maxFileSize: The largest file in bytes, as in
    ///     ``encode(_:as:frame:iccProfile:maxPixelSize:maxFileSize:)``; `nil` (the default): no limit.
    /// - Throws: ``ImageKitError`` (``ImageKitError/cancelled`` when the task was cancelled
    ///   before the encode started).
    public static func encodedImage(_ image: Image, as format: EncodeFormat, frame: Int? = nil,
                                    iccProfile: Data? = nil, maxPixelSize: PixelSize? = nil,
                                    maxFileSize: Int? = nil) async throws(ImageKitError) -> EncodedImage {
        do {
            return try await workers.run {
                try encodedImageNow(image, as: format, frame: frame, iccProfile: iccProfile,
                                    maxPixelSize: maxPixelSize, maxFileSize: maxFileSize)
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// ``encode(_:as:frame:iccProfile:maxPixelSize:maxFileSize:)`` on the calling thread,
    /// described as an ``EncodedImage``.
    static func encodedImageNow(_ image: Image, as format: EncodeFormat, frame: Int? = nil,
                                iccProfile: Data? = nil, maxPixelSize: PixelSize? = nil,
                                maxFileSize: Int? = nil) throws(ImageKitError) -> EncodedImage {
        let result = try sizedEncode(image, as: format, frame: frame, iccProfile: iccProfile,
                                     maxPixelSize: maxPixelSize, maxFileSize: maxFileSize)
        return EncodedImage(data: result.data, format: format.imageFormat, pixelSize: result.pixelSize)
    }

    /// Encodes `image`: every frame of an animation for GIF and WebP, one frame otherwise.
    ///
    /// - Parameters:
    ///   - image: The image to encode.
    ///   - format: The format and its settings.
    ///   - frame: One frame to encode; `nil` (the default): every frame for GIF and WebP (a
    ///     still image gives a still file), the first for JPEG and PNG.
    ///   - iccProfile: An ICC profile to embed: these bytes are written as they are
    ///     (JPEG: APP2 `ICC_PROFILE` markers, PNG: `iCCP`, WebP: `ICCP`, AVIF: `colr`), the pixels are not
    ///     converted. `nil` (the default) embeds nothing, and readers take the pixels as sRGB.
    ///     A profile shorter than 132 bytes, whose header's size field is not its length, or
    ///     without the `acsp` signature is refused with ``ImageKitError/invalidArgument(_:)``, as
    ///     is one larger than JPEG's 255 APP2 markers hold (16,707,345 bytes), one libpng
    ///     refuses for a PNG (e.g. a profile that is not for RGB pixels) and any for GIF.
    ///   - maxPixelSize: A box to scale the image down into before encoding, keeping its aspect
    ///     ratio and never enlarging it (a side of 0: unconstrained); `nil` (the default): the
    ///     image's own size.
    ///   - maxFileSize: The largest file in bytes (see ``ImageEncoder`` for the search and its
    ///     bounds); `nil` (the default): no limit.
    /// - Throws: ``ImageKitError``: ``ImageKitError/limitExceeded(_:)`` when no file fits
    ///   `maxFileSize`, ``ImageKitError/invalidArgument(_:)`` for a bad option or frame,
    ///   ``ImageKitError/encodeFailed(_:)`` when the encoder fails.
    public static func encode(_ image: Image, as format: EncodeFormat, frame: Int? = nil,
                              iccProfile: Data? = nil, maxPixelSize: PixelSize? = nil,
                              maxFileSize: Int? = nil) throws(ImageKitError) -> Data {
        try sizedEncode(image, as: format, frame: frame, iccProfile: iccProfile, maxPixelSize: maxPixelSize,
                        maxFileSize: maxFileSize).data
    }

    /// ``encode(_:as:frame:iccProfile:maxPixelSize:maxFileSize:)`` with what the size limits chose.
    static func sizedEncode(_ image: Image, as format: EncodeFormat, frame: Int? = nil, iccProfile: Data? = nil,
                            maxPixelSize: PixelSize? = nil,
                            maxFileSize: Int? = nil) throws(ImageKitError) -> FileSizeSearch.Outcome {
        if let frame, frame < 0 || frame >= image.frameCount {
            throw ImageKitError.invalidArgument("encode: frame \(frame) of \(image.frameCount)")
        }
        if let maxFileSize, maxFileSize <= 0 {
            throw ImageKitError.invalidArgument("encode: maxFileSize \(maxFileSize) is not a positive byte count")
        }
        var source = image
        if let box = maxPixelSize {
            guard box.width >= 0, box.height >= 0, box.width > 0 || box.height > 0 else {
                throw ImageKitError.invalidArgument("encode: maxPixelSize \(box) is empty")
            }
            if (box.width > 0 && image.width > box.width) || (box.height > 0 && image.height > box.height) {
                do {
                    source = try ImageResizer(size: box, mode: .fit, allowUpscale: false).resize(image)
                } catch {
                    throw ImageKitError(wrapping: error)
                }
            }
        }
        let step: (Image, EncodeFormat) throws(ImageKitError) -> Data = { image, format throws(ImageKitError) in
            try encodeOnce(image, as: format, frame: frame, iccProfile: iccProfile)
        }
        guard let maxFileSize else {
            return FileSizeSearch.Outcome(data: try step(source, format),
                                          pixelSize: PixelSize(width: source.width, height: source.height),
                                          quality: format.qualityRange?.upperBound, halvings: 0, encodes: 1)
        }
        return try FileSizeSearch(format: format, budget: maxFileSize, encode: step).run(source)
    }

    /// One encode of `image` in `format`, no size limit.
    private static func encodeOnce(_ image: Image, as format: EncodeFormat, frame: Int?,
                                   iccProfile: Data?) throws(ImageKitError) -> Data {
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
        case .gif(let quality, let speed, let dithering):
            ic_encode_options_init(&options, IC_FORMAT_GIF)
            options.quality = Int32(clamping: quality)
            options.speed = Int32(clamping: speed)
            options.dither_level = dithering.level
        }
        options.frame = UInt32(frame ?? 0)
        options.all_frames = frame == nil && format.keepsAnimation ? 1 : 0
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
