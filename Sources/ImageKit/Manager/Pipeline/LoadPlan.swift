import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The plan of one load: its options and context resolved against the manager's defaults —
/// the cache keys, the decode options, the tiers, the cache, loader and coder to use. Internal;
/// what a loader sees of it is an ``ImageLoaderRequest``. A class: it is handed from
/// the synchronous prelude to the pipeline and its loads, and copying its twenty fields (the
/// context's closures among them) on every memory hit cost more than the lookup itself.
final class LoadPlan: Sendable {
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
    let cache: any ImageCaching
    let loader: any ImageLoading
    /// Decodes and encodes: the context's coder, else the manager's.
    let coder: any ImageCoding
    /// Tiers to look in (`[]` with ``ImageOptions/fromLoaderOnly``).
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

    init(url: URL, keys: ImageLoadKeys, output: OutputFormat?, options: ImageOptions, context: ImageContext,
         configuration: ImageManagerConfiguration, cache: any ImageCaching, loader: any ImageLoading,
         coder: any ImageCoding) {
        self.url = url
        self.options = options
        self.context = context
        baseKey = keys.baseKey
        decodeOptions = keys.decodeOptions
        key = keys.key
        variantKey = keys.variantKey
        self.output = output
        self.cache = context.cache ?? cache
        self.loader = context.loader ?? loader
        self.coder = context.coder ?? coder
        query = Self.query(options, context)
        let store = output == nil ? context.storeCacheType : context.imageStoreCacheTypeForEncodedLoads
        let encodedStore: ImageCacheType = output == nil ? [] : context.encodedStoreCacheType
        if options.contains(.cacheMemoryOnly) {
            self.store = store.intersection(.memory)
            self.encodedStore = encodedStore.intersection(.memory)
            storesOriginalData = false
        } else {
            self.store = store
            self.encodedStore = encodedStore
            storesOriginalData = context.originalStoreCacheType.includesDisk
        }
        callbackQueue = context.callbackQueue ?? configuration.callbackQueue
    }

    /// The tiers a load looks in: none with ``ImageOptions/fromLoaderOnly``, else the context's.
    static func query(_ options: ImageOptions, _ context: ImageContext) -> ImageCacheType {
        options.contains(.fromLoaderOnly) ? [] : context.queryCacheType
    }

    var isRefresh: Bool { options.contains(.refreshCached) }

    /// The load's priority, for its download, its turn and its worker-thread jobs.
    var priority: ImagePriority { context.priority }

    /// The transformer to apply to `image`: animations only with ``ImageOptions/transformAnimatedImage``.
    func transformer(for image: Image) -> (any ImageTransformer)? {
        guard let t = context.imageTransformer else { return nil }
        return image.frameCount == 1 || options.contains(.transformAnimatedImage) ? t : nil
    }

    /// What the loader is asked: the URL, `validators` (of a cached copy being revalidated),
    /// the priority, the TLS and cookie flags and the context's request modifier.
    func loaderRequest(validators: DownloadRequest.Validators?) -> ImageLoaderRequest {
        ImageLoaderRequest(url: url, validators: validators, priority: priority,
                           verifiesPeer: !options.contains(.allowInvalidSSLCertificates),
                           usesCookies: options.contains(.handleCookies), requestModifier: context.requestModifier)
    }

    /// Whether other loads may share this one's pipeline: not when closures of its own
    /// change the download, its acceptance or what is stored.
    var isShareable: Bool {
        context.requestModifier == nil && context.responseValidator == nil && context.cacheSerializer == nil
    }

    /// The coalescing key; `exclusive` (non-zero) keeps the pipeline to this load alone.
    func pipelineKey(exclusive: UInt64) -> ImageLoadJob.Key {
        ImageLoadJob.Key(key: variantKey ?? key, cache: ObjectIdentifier(cache),
                         loader: ObjectIdentifier(loader), coder: ObjectIdentifier(coder),
                         options: options.intersection(Self.pipelineOptions).rawValue, query: query, store: store,
                         encodedStore: encodedStore, storesOriginalData: storesOriginalData, exclusive: exclusive)
    }
}
