#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An encoded image loaded by ``ImageManager/encodedImage(for:as:options:context:progress:)`` and where
/// it came from.
public struct EncodedImageResult: Sendable {
    /// The bytes, their format and size, and an entity tag.
    public var encoded: EncodedImage
    /// The decoded image, when this load decoded (or found) one on the way; nil when the
    /// variant was found already encoded.
    public var image: Image?
    /// Where the work was found: ``ImageSource/memory`` or ``ImageSource/disk`` when the
    /// variant, the bitmap it was encoded from, or (disk) the original bytes it was decoded from
    /// were cached; ``ImageSource/loader`` when the image was loaded (downloaded) now.
    public var source: ImageSource
    /// The URL that was asked for.
    public var url: URL
    /// Where the time went (``ImageLoadMetrics/encode`` is the encoding's share).
    public var metrics: ImageLoadMetrics

    /// A result with every part given.
    public init(encoded: EncodedImage, image: Image? = nil, source: ImageSource, url: URL,
                metrics: ImageLoadMetrics = ImageLoadMetrics()) {
        self.encoded = encoded
        self.image = image
        self.source = source
        self.url = url
        self.metrics = metrics
    }

    /// The encoded part of `result`; an internal error when a pipeline failed to produce it.
    static func from(_ result: LoadResult) -> Result<EncodedImageResult, ImageKitError> {
        guard let encoded = result.encoded else {
            return .failure(.internal("the load of \(MessageURL.describe(result.url)) produced no encoded image"))
        }
        return .success(EncodedImageResult(encoded: encoded, image: result.image, source: result.source,
                                           url: result.url, metrics: result.metrics))
    }
}
