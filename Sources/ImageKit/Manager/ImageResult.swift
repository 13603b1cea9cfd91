#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A loaded image and where it came from.
public struct ImageResult: Sendable {
    /// The decoded (and transformed) image.
    public var image: Image
    /// The tier it was found in: `.memory`, `.disk`, or `.none` when it was downloaded.
    public var cacheType: ImageCacheType
    /// The URL that was asked for.
    public var url: URL
    /// The original encoded bytes: when downloaded, when decoded from the disk tier's
    /// original-data store, or on a memory hit with ``ImageOptions/queryMemoryData``; else nil.
    public var originalData: Data?
    /// Where the time went.
    public var metrics: ImageLoadMetrics

    /// A result with every part given.
    public init(image: Image, cacheType: ImageCacheType, url: URL, originalData: Data? = nil,
                metrics: ImageLoadMetrics = ImageLoadMetrics()) {
        self.image = image
        self.cacheType = cacheType
        self.url = url
        self.originalData = originalData
        self.metrics = metrics
    }
}
