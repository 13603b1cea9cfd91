#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The incremental decoder of a coder that has none of its own: it gathers the pieces and
/// decodes them with the coder's ``ImageCoding/decode(_:options:cancellation:)`` at
/// ``finish()``. It gives no partial images.
public final class GatheringImageDecoder: IncrementalImageDecoding {
    private let coder: any ImageCoding
    private let options: DecodeOptions
    private let cancellation: DecodeCancellation
    private let gathered = Locked(Data())

    /// A decoder gathering the body for `coder`, which decodes it with `options` and
    /// `cancellation` at the end.
    public init(coder: any ImageCoding, options: DecodeOptions, cancellation: DecodeCancellation) {
        self.coder = coder
        self.options = options
        self.cancellation = cancellation
    }

    /// Appends `data` to the body.
    ///
    /// - Throws: ``ImageKitError/cancelled`` once the decode is cancelled.
    public func feed(_ data: Data) throws {
        if cancellation.isCancelled { throw ImageKitError.cancelled }
        gathered.withLock { $0.append(data) }
    }

    /// Always nil: nothing is decoded before the end.
    public func partialImage() throws -> Image? { nil }

    /// The bytes gathered so far.
    public var bufferedBytes: Int { gathered.withLock { $0.count } }

    /// Decodes the gathered body with the coder.
    ///
    /// - Throws: the coder's error.
    public func finish() throws -> Image {
        let data = gathered.withLock { body -> Data in
            defer { body = Data() }
            return body
        }
        return try coder.decode(data, options: options, cancellation: cancellation)
    }
}
