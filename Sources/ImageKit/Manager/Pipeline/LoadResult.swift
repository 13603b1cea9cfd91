#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a pipeline hands its loads, whatever they asked for: the decoded image, its encoded
/// variant, or both. The call styles turn it into an ``ImageResult`` or ``EncodedImageResult``.
struct LoadResult: Sendable {
    /// The decoded (and transformed) image; nil for a variant found already encoded.
    var image: Image?
    /// The encoded variant, for loads that asked for one.
    var encoded: EncodedImage?
    var source: ImageSource
    var url: URL
    var originalData: Data?
    var metrics: ImageLoadMetrics
}

extension ImageResult {
    /// The image part of `result`; an internal error when a pipeline failed to produce it.
    static func from(_ result: LoadResult) -> Result<ImageResult, ImageKitError> {
        guard let image = result.image else {
            return .failure(.internal("the load of \(MessageURL.describe(result.url)) produced no image"))
        }
        return .success(ImageResult(image: image, source: result.source, url: result.url,
                                    originalData: result.originalData, metrics: result.metrics))
    }
}
