#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoder and encoder the ``ImageManager`` turns bytes into images and images into bytes
/// through (SDWebImage's `SDImageCoder`).
///
/// ``BuiltInImageCoder`` (JPEG, PNG, GIF, WebP, AVIF, HEIC/HEIF and JPEG XL through the C core) is the built-in one;
/// ``ImageCodersManager`` asks several coders in turn, and is what a manager holds by default.
/// A coder of your own decodes a format ImageKit does not know, or encodes a format its own
/// way: build the ``Image`` with ``Image/init(width:height:frames:delaysMilliseconds:loopCount:premultiplied:sourceFormat:limits:)``,
/// keep within the options' ``DecodeOptions/limits`` and poll the cancellation.
///
/// The manager calls a coder on its worker threads, several at a time: a coder must be safe
/// to call concurrently. Errors a coder throws fail the load: an ``ImageKitError`` as it is,
/// any other error as ``ImageKitError/internal(_:)`` with the error's description.
///
/// ```swift
/// final class ToyCoder: ImageCoding { … }
/// let coders = ImageCodersManager()
/// coders.add(ToyCoder())  // asked before the built-in coder
/// let manager = ImageManager(cache: try ImageCache(), downloader: try Downloader(), coders: coders)
/// ```
public protocol ImageCoding: AnyObject, Sendable {
    /// Whether this coder decodes `data`: a cheap look at the first bytes (a signature), not a
    /// decode.
    func canDecode(_ data: Data) -> Bool

    /// Decodes `data` into premultiplied RGBA8 pixels, following `options` as far as the
    /// format allows (thumbnail box, scale-down limit, first frame or all, orientation) and
    /// refusing inputs past ``DecodeOptions/limits`` before allocating for them.
    ///
    /// - Parameters:
    ///   - data: The encoded bytes, which this coder said it decodes.
    ///   - options: What the load asks for.
    ///   - cancellation: Set when nobody waits for the result any more: poll it and throw
    ///     ``ImageKitError/cancelled`` once it is.
    /// - Throws: ``ImageKitError`` (``ImageKitError/corrupt(_:)``, ``ImageKitError/limitExceeded(_:)``,
    ///   ``ImageKitError/cancelled``, …) or an error of the coder's own.
    func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws -> Image

    /// A decoder that takes the bytes piece by piece as a download streams them, for bytes
    /// starting with `prefix` (which this coder said it decodes, or no coder claimed). The
    /// default gathers the pieces and calls ``decode(_:options:cancellation:)`` at the end
    /// (``GatheringImageDecoder``); a coder that can decode as the bytes arrive returns its
    /// own.
    ///
    /// - Parameters:
    ///   - prefix: The first bytes of the body (the decoder is fed them first).
    ///   - options: What the load asks for.
    ///   - cancellation: Set when nobody waits for the result any more.
    /// - Throws: ``ImageKitError`` when the decoder cannot start.
    func makeIncrementalDecoder(for prefix: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws
        -> any IncrementalImageDecoding

    /// Whether this coder encodes images in `format`.
    func canEncode(_ format: ImageFormat) -> Bool

    /// Encodes `image` in `format` (whose ``EncodeFormat/imageFormat`` this coder said it
    /// encodes), described as an ``EncodedImage``: ImageKit's own coder writes every frame of an
    /// animation for GIF and WebP, the first frame for JPEG and PNG.
    ///
    /// - Throws: ``ImageKitError`` (``ImageKitError/encodeFailed(_:)``, …) or an error of the
    ///   coder's own.
    func encode(_ image: Image, as format: EncodeFormat) throws -> EncodedImage
}

extension ImageCoding {
    /// A ``GatheringImageDecoder``: the pieces are gathered and decoded whole at the end.
    public func makeIncrementalDecoder(for prefix: Data, options: DecodeOptions,
                                       cancellation: DecodeCancellation) throws -> any IncrementalImageDecoding {
        GatheringImageDecoder(coder: self, options: options, cancellation: cancellation)
    }

    /// Decodes `data` with `options`, with no way to cancel the decode.
    ///
    /// - Throws: as ``decode(_:options:cancellation:)``.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        try decode(data, options: options, cancellation: DecodeCancellation())
    }
}
