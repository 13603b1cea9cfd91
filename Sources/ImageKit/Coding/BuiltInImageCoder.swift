#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ImageKit's own coder: JPEG, PNG, GIF, WebP, AVIF, HEIC/HEIF and JPEG XL decoding and JPEG, PNG, WebP and AVIF encoding
/// through the C core (``ImageDecoder`` and ``ImageEncoder`` as an ``ImageCoding``).
///
/// It decodes the caller's bytes in place, without copying them, into buffers drawn from its
/// ``bufferPool``, and hands the C decoders the ``DecodeCancellation`` to poll.
public final class BuiltInImageCoder: ImageCoding {
    /// Where large output buffers come from and return to; nil allocates fresh memory every time.
    public let bufferPool: BufferPool?

    /// A coder drawing large buffers from `bufferPool`.
    public init(bufferPool: BufferPool? = .shared) {
        self.bufferPool = bufferPool
    }

    /// Whether `data` starts with the signature of JPEG, PNG, GIF, WebP, AVIF, HEIC/HEIF or JPEG XL.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(detecting: data).isDecodable
    }

    /// Decodes `data` with ``ImageDecoder``, stopping early once `cancellation` is cancelled.
    ///
    /// - Throws: ``ImageKitError``, as ``ImageDecoder`` does (for bytes of no format it decodes,
    ///   ``ImageKitError/unknownFormat(_:)`` or ``ImageKitError/unsupportedFormat(_:_:)``).
    public func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws -> Image {
        var statistics = DecodeStatistics()
        return try decode(data, options: options, cancellation: cancellation, statistics: &statistics)
    }

    /// Decodes `data` as ``decode(_:options:cancellation:)`` does and reports what the decode
    /// cost in `statistics`.
    ///
    /// - Throws: as ``decode(_:options:cancellation:)``.
    public func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation,
                       statistics: inout DecodeStatistics) throws -> Image {
        let decoder = ImageDecoder(options: options, bufferPool: bufferPool)
        return try data.withUnsafeBytes { buffer in
            try decoder.decode(buffer, statistics: &statistics, cancelFlag: cancellation.pointer,
                               helperYieldFlag: cancellation.helperYield?.pointer)
        }
    }

    /// An ``IncrementalImageDecoder`` drawing large buffers from ``bufferPool``.
    ///
    /// - Throws: ``ImageKitError`` when the decode cannot start.
    public func makeIncrementalDecoder(for prefix: Data, options: DecodeOptions,
                                       cancellation: DecodeCancellation) throws -> any IncrementalImageDecoding {
        try IncrementalImageDecoder(options: options, cancellation: cancellation, bufferPool: bufferPool)
    }

    /// Whether `format` is JPEG, PNG, WebP, AVIF or GIF.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .jpeg || format == .png || format == .webp || format == .avif || format == .gif
    }

    /// Encodes `image` with ``ImageEncoder``: every frame of an animation for GIF and WebP,
    /// the first for JPEG and PNG.
    ///
    /// - Throws: ``ImageKitError``, as ``ImageEncoder/encode(_:as:frame:iccProfile:maxPixelSize:maxFileSize:)`` does.
    public func encode(_ image: Image, as format: EncodeFormat) throws -> EncodedImage {
        try ImageEncoder.encodedImageNow(image, as: format)
    }
}
