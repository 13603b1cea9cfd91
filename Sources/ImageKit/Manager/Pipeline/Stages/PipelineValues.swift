#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a pipeline has for its loads so far, and where each part came from.
struct Found: Sendable {
    var image: Image?
    /// Where ``image`` was found (`[]`: decoded by this pipeline).
    var imageTier: ImageCacheType = []
    var encoded: EncodedImage?
    /// Where ``encoded`` was found (`[]`: encoded by this pipeline).
    var encodedTier: ImageCacheType = []
    var metadata: DiskCacheMetadata?
    /// The bytes the image was decoded from, when this pipeline decoded it.
    var originalData: Data?
    /// Whether ``originalData`` was downloaded now (and so goes to the original-data store).
    var downloaded = false
    var decode: Duration?
    var transform: Duration?

    /// What the load reports: where the first part found came from.
    var source: ImageSource {
        let tier = encoded != nil && !encodedTier.isEmpty ? encodedTier : imageTier
        return tier.isEmpty ? .loader : ImageSource(tier: tier)
    }
}

/// What the loader brought, and the decode that took the body as it streamed in, if one did.
struct Fetched: Sendable {
    var data: Data
    var status: DownloadResult.Status
    var response: DownloadResponse?
    var metrics: DownloadMetrics?
    var streaming: StreamingDecode?
}

/// A decoded and transformed image with the time each step took.
struct Processed: Sendable {
    var image: Image
    var decode: Duration
    var transform: Duration?
}
