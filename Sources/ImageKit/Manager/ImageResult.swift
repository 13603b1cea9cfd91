#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A loaded image and where it came from.
public struct ImageResult: Sendable {
    /// The decoded (and transformed) image.
    public var image: Image
    /// Where it came from: the memory or disk tier, or the loader (downloaded now).
    public var source: ImageSource
    /// The URL that was asked for.
    public var url: URL
    /// The original encoded bytes: when downloaded, when decoded from the disk tier's
    /// original-data store, or on a memory hit with ``ImageOptions/queryMemoryData``; else nil.
    public var originalData: Data?
    /// Where the time went.
    public var metrics: ImageLoadMetrics

    /// A result with every part given.
    public init(image: Image, source: ImageSource, url: URL, originalData: Data? = nil,
                metrics: ImageLoadMetrics = ImageLoadMetrics()) {
        self.image = image
        self.source = source
        self.url = url
        self.originalData = originalData
        self.metrics = metrics
    }
}
