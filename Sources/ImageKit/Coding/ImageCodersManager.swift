#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Several coders asked in turn (SDWebImage's `SDImageCodersManager`): the first that can
/// decode the bytes decodes them, the first that can encode the format encodes. It is itself an
/// ``ImageCoding``, and what an ``ImageManager`` holds by default (with ``BuiltInImageCoder``
/// alone).
///
/// A coder added later is asked first, so a coder of your own for a format can take it over
/// from the built-in one. Coders can be added and removed while loads run: each decode or
/// encode asks the list as it was when it started.
///
/// When no coder claims the bytes, the built-in coder (when the list holds one, or a coders
/// manager in the list does) decodes them anyway, so the error is the one ``ImageDecoder``
/// gives (``ImageKitError/unknownFormat(_:)``, or ``ImageKitError/unsupportedFormat(_:_:)``
/// naming the format); without it the decode fails with ``ImageKitError/unknownFormat(_:)``.
///
/// ```swift
/// let coders = ImageCodersManager()      // the built-in coder
/// coders.add(ToyCoder())                 // asked first from now on
/// ```
public final class ImageCodersManager: ImageCoding {
    private let list: Locked<[any ImageCoding]>

    /// A manager asking `coders` in this order: the first is asked first.
    public init(coders: [any ImageCoding] = [BuiltInImageCoder()]) {
        list = Locked(coders)
    }

    /// The coders in the order they are asked: the latest added first.
    public var coders: [any ImageCoding] {
        list.withLock { $0 }
    }

    /// Adds `coder` in front of the others: it is asked first.
    public func add(_ coder: any ImageCoding) {
        list.withLock { $0.insert(coder, at: 0) }
    }

    /// Removes `coder` (compared by identity) if it is in the list.
    public func remove(_ coder: any ImageCoding) {
        list.withLock { $0.removeAll { $0 === coder } }
    }

    /// Whether any coder decodes `data`.
    public func canDecode(_ data: Data) -> Bool {
        coders.contains { $0.canDecode(data) }
    }

    /// Decodes `data` with the first coder that can.
    ///
    /// - Throws: that coder's error; with no such coder, the built-in coder's error for the
    ///   bytes, or ``ImageKitError/unknownFormat(_:)`` when the list holds no built-in coder.
    public func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws -> Image {
        let coders = self.coders
        if let coder = coders.first(where: { $0.canDecode(data) })
            ?? coders.first(where: { $0 is BuiltInImageCoder || $0 is ImageCodersManager }) {
            return try coder.decode(data, options: options, cancellation: cancellation)
        }
        throw ImageKitError.unknownFormat("no coder decodes these \(data.count) bytes"
            + " (\(ImageCodersManager.signature(data)))")
    }

    /// The incremental decoder of the coder ``decode(_:options:cancellation:)`` would choose for
    /// bytes starting with `prefix`.
    ///
    /// - Throws: that coder's error, or ``ImageKitError/unknownFormat(_:)`` when no coder claims
    ///   the bytes and the list holds no built-in coder.
    public func makeIncrementalDecoder(for prefix: Data, options: DecodeOptions,
                                       cancellation: DecodeCancellation) throws -> any IncrementalImageDecoding {
        let coders = self.coders
        if let coder = coders.first(where: { $0.canDecode(prefix) })
            ?? coders.first(where: { $0 is BuiltInImageCoder || $0 is ImageCodersManager }) {
            return try coder.makeIncrementalDecoder(for: prefix, options: options, cancellation: cancellation)
        }
        throw ImageKitError.unknownFormat("no coder decodes bytes \(ImageCodersManager.signature(prefix))")
    }

    /// Whether any coder encodes `format`.
    public func canEncode(_ format: ImageFormat) -> Bool {
        coders.contains { $0.canEncode(format) }
    }

    /// Encodes `image` with the first coder that encodes the format.
    ///
    /// - Throws: that coder's error, or ``ImageKitError/unsupportedFormat(_:_:)`` when no coder
    ///   encodes the format.
    public func encode(_ image: Image, as format: EncodeFormat) throws -> EncodedImage {
        let target = format.imageFormat
        guard let coder = coders.first(where: { $0.canEncode(target) }) else {
            throw ImageKitError.unsupportedFormat(target, "no coder encodes \(target)")
        }
        return try coder.encode(image, as: format)
    }

    /// The first bytes of `data` in hex, for an error message.
    private static func signature(_ data: Data) -> String {
        guard !data.isEmpty else { return "empty" }
        let hex = data.prefix(8).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "starting " + hex.joined(separator: " ")
    }
}
