import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One load's options and context resolved against the manager's defaults: the cache keys,
/// the decode options, the tiers, the cache and downloader to use. A class: it is handed from
/// the synchronous prelude to the pipeline and its loads, and copying its twenty fields (the
/// context's closures among them) on every memory hit cost more than the lookup itself.
final class ImageLoadRequest: Sendable {
    let url: URL
    let options: ImageOptions
    let context: ImageContext
    /// The URL's key (or the cache key filter's): where the original bytes are stored.
    let baseKey: String
    /// ``baseKey`` plus the processing signature: where the decoded image is stored.
    let key: String
    /// The encoding asked for, for loads that want bytes out.
    let output: OutputFormat?
    /// ``key`` plus the encoding: where the encoded variant is stored (nil without ``output``).
    let variantKey: String?
    let decodeOptions: DecodeOptions
    let cache: ImageCache
    let downloader: Downloader
    /// Tiers to look in (`.none` with ``ImageOptions/fromLoaderOnly``).
    let query: ImageCacheType
    /// Tiers the decoded image goes to.
    let store: ImageCacheType
    /// Tiers the encoded variant goes to.
    let encodedStore: ImageCacheType
    /// Whether the original bytes go to the disk tier.
    let storesOriginalData: Bool
    let callbackQueue: DispatchQueue

    /// Options that change what a pipeline does; loads differing in them never share one.
    private static let pipelineOptions: ImageOptions = [.refreshCached, .fromCacheOnly, .fromLoaderOnly,
                                                        .handleCookies, .allowInvalidSSLCertificates]

    init(url: URL, urlString: String, output: OutputFormat?, options: ImageOptions, context: ImageContext,
         configuration: ImageManagerConfiguration, cache: ImageCache, downloader: Downloader) {
        self.url = url
        self.options = options
        self.context = context
        baseKey = context.cacheKeyFilter?(url) ?? urlString
        decodeOptions = Self.decodeOptions(options, context, configuration)
        (key, variantKey) = Self.keys(base: baseKey, decodeOptions, context.imageTransformer,
                                      transformsAnimations: options.contains(.transformAnimatedImage), output: output)
        self.output = output
        self.cache = context.cache ?? cache
        self.downloader = context.downloader ?? downloader
        query = options.contains(.fromLoaderOnly) ? .none : context.queryCacheType ?? .all
        let store = context.storeCacheType ?? (output == nil ? .all : .none)
        let encodedStore = output == nil ? .none : context.encodedStoreCacheType ?? .all
        if options.contains(.cacheMemoryOnly) {
            self.store = store.includesMemory ? .memory : .none
            self.encodedStore = encodedStore.includesMemory ? .memory : .none
            storesOriginalData = false
        } else {
            self.store = store
            self.encodedStore = encodedStore
            storesOriginalData = (context.originalStoreCacheType ?? .disk).includesDisk
        }
        callbackQueue = context.callbackQueue ?? configuration.callbackQueue
    }

    /// What the decoder is asked for: thumbnail, scale-down limit, frames.
    static func decodeOptions(_ options: ImageOptions, _ context: ImageContext,
                              _ configuration: ImageManagerConfiguration) -> DecodeOptions {
        let allFrames = options.contains(.preloadAllFrames) && !options.contains(.decodeFirstFrameOnly)
        let scaleDown = context.scaleDownLimitBytes
            ?? (options.contains(.scaleDownLargeImages) ? configuration.scaleDownLimitBytes : nil)
        return DecodeOptions(limits: configuration.decodeLimits, firstFrameOnly: !allFrames,
                             thumbnailPixelSize: context.thumbnailPixelSize,
                             preserveAspectRatio: context.preserveAspectRatio ?? true,
                             scaleDownLimitBytes: scaleDown)
    }

    /// `base`, followed by a signature of the processing when there is any, so that images
    /// decoded or transformed differently never share a cache entry; and with `output`, the
    /// variant's key: that key followed by the encoding.
    static func keys(base: String, _ decode: DecodeOptions, _ transformer: (any ImageTransformer)?,
                     transformsAnimations: Bool, output: OutputFormat?) -> (key: String, variantKey: String?) {
        var key = base
        if let size = decode.thumbnailPixelSize {
            key += "|thumbnail=\(size.width)x\(size.height)" + (decode.preserveAspectRatio ? "" : "-fill")
        }
        if let limit = decode.scaleDownLimitBytes { key += "|max-bytes=\(limit)" }
        if !decode.firstFrameOnly { key += "|all-frames" }
        if let transformer {
            key += "|transform=" + transformer.key + (transformsAnimations && !decode.firstFrameOnly ? "+animated" : "")
        }
        return (key, output.map { key + "|encode=" + $0.cacheKey })
    }

    var isRefresh: Bool { options.contains(.refreshCached) }

    var downloadPriority: DownloadPriority {
        options.contains(.highPriority) ? .high : options.contains(.lowPriority) ? .low : .normal
    }

    var workerPriority: WorkerPool.Priority {
        options.contains(.highPriority) ? .high : options.contains(.lowPriority) ? .low : .normal
    }

    /// The transformer to apply to `image`: animations only with ``ImageOptions/transformAnimatedImage``.
    func transformer(for image: Image) -> (any ImageTransformer)? {
        guard let t = context.imageTransformer else { return nil }
        return image.frameCount == 1 || options.contains(.transformAnimatedImage) ? t : nil
    }

    /// Whether other loads may share this one's pipeline: not when closures of its own
    /// change the download, its acceptance or what is stored.
    var isShareable: Bool {
        context.requestModifier == nil && context.responseValidator == nil && context.cacheSerializer == nil
    }

    /// The coalescing key; `exclusive` (non-zero) keeps the pipeline to this load alone.
    func pipelineKey(exclusive: UInt64) -> ImageLoadJob.Key {
        ImageLoadJob.Key(key: variantKey ?? key, cache: ObjectIdentifier(cache),
                         downloader: ObjectIdentifier(downloader),
                         options: options.intersection(Self.pipelineOptions).rawValue, query: query, store: store,
                         encodedStore: encodedStore, storesOriginalData: storesOriginalData, exclusive: exclusive)
    }
}
