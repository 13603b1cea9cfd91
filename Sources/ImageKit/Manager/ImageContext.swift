import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Per-load values that are not flags (SDWebImage's `SDWebImageContext`, typed).
///
/// Every field has its default written out: the optional fields are "none of this" when nil
/// (no thumbnail, no transformer, the manager's cache, …); the cache tiers are non-optional
/// ``ImageCacheType`` sets, where `[]` stores nothing and there is no `.none` to mistake for
/// "the default".
public struct ImageContext: Sendable {
    /// Turns a URL into the cache key the image is stored under (by default the URL's string).
    public typealias CacheKeyFilter = @Sendable (URL) -> String
    /// Chooses the bytes kept in the original-data store: given the decoded image, the bytes
    /// as downloaded and the URL, returns what to store, or nil to store nothing.
    public typealias CacheSerializer = @Sendable (Image, Data, URL) -> Data?
    /// Receives the image decoded so far during a ``ImageOptions/progressiveLoad`` load.
    public typealias PartialImageHandler = @Sendable (Image) -> Void

    /// Shrink on load to this box (a side of 0 is unconstrained). Part of the cache key.
    public var thumbnailPixelSize: PixelSize?
    /// With a thumbnail size, how the picture is brought to the box: ``ImageResizer/Mode/fit``
    /// (the default), ``ImageResizer/Mode/fill`` (cover the box, cropping the centre) or
    /// ``ImageResizer/Mode/stretch``. Part of the cache key.
    public var thumbnailMode: ImageResizer.Mode
    /// With ``ImageResizer/Mode/fill``: which part of the picture the thumbnail keeps (default
    /// ``Gravity/center``; see ``DecodeOptions/thumbnailGravity``). Part of the cache key when
    /// not the centre.
    public var thumbnailGravity: Gravity = .center
    /// Scale any decoded frame down until it fits in this many bytes (even without
    /// ``ImageOptions/scaleDownLargeImages``). Part of the cache key.
    public var scaleDownLimitBytes: Int?
    /// What decoding does with an embedded ICC profile (default ``ColorMode/sRGB``: convert to
    /// sRGB). Part of the cache key when not the default.
    public var colorMode: ColorMode
    /// Applied after decoding, before storing; its ``ImageTransformer/key`` is part of the cache key.
    public var imageTransformer: (any ImageTransformer)?
    /// Computes the cache key from the URL.
    public var cacheKeyFilter: CacheKeyFilter?
    /// Chooses what goes to the original-data store.
    public var cacheSerializer: CacheSerializer?
    /// Rewrites the download request of this load, or returns nil to cancel the load (applied
    /// by ``Downloader``; a loader of your own may apply it or not).
    public var requestModifier: DownloaderConfiguration.RequestModifier?
    /// Checks the response of this load's download before decoding; throwing fails the load.
    public var responseValidator: DownloaderConfiguration.ResponseValidator?
    /// Where the load is queued among the others waiting to download, decode and encode
    /// (default ``ImagePriority/normal``).
    public var priority: ImagePriority
    /// Tiers to look in before loading (default `.all`: memory, then disk; `[]` looks nowhere,
    /// as ``ImageOptions/fromLoaderOnly`` does).
    public var queryCacheType: ImageCacheType
    /// Tiers the decoded (and transformed) image of ``ImageManager/image(for:options:context:progress:)``
    /// is stored in (default `.all`).
    public var storeCacheType: ImageCacheType
    /// Tiers the decoded image behind ``ImageManager/encodedImage(for:as:options:context:progress:)`` is
    /// stored in (default `[]`: a service sending bytes keeps the bytes, not bitmaps it would
    /// never read; set it to keep both, e.g. to encode other formats of the same thumbnail
    /// without decoding again).
    public var imageStoreCacheTypeForEncodedLoads: ImageCacheType
    /// Tiers an encoded variant is stored in (default `.all`): the memory tier by its byte
    /// count, the disk tier as a checksummed data entry. Only loads asking for encoded bytes
    /// make variants.
    public var encodedStoreCacheType: ImageCacheType
    /// Where the original encoded bytes are kept: `.disk` (the default) or `.all` keep them in
    /// the disk tier's original-data store, so a later load at another size need not download
    /// again; `[]` keeps nothing. The memory tier holds decoded images and variants only, so
    /// `.memory` keeps nothing either.
    public var originalStoreCacheType: ImageCacheType
    /// The cache for this load instead of the manager's: any ``ImageCaching`` cache.
    public var cache: (any ImageCaching)?
    /// The loader for this load instead of the manager's: any ``ImageLoading`` loader.
    public var loader: (any ImageLoading)?
    /// The coder this load decodes and encodes with instead of the manager's
    /// (SDWebImage's `SDWebImageContextImageCoder`); any ``ImageCoding``, an
    /// ``ImageCodersManager`` among them.
    ///
    /// Loads with different coders never share a decode, but the coder is not part of the
    /// cache key (as in SDWebImage): what it decodes or encodes is stored under the key the
    /// built-in coder's result would have, and a later load with another coder may be served
    /// from it. Give a coder that changes the pixels a ``cacheKeyFilter`` of its own, or a
    /// ``queryCacheType`` and ``storeCacheType`` of `[]`.
    public var coder: (any ImageCoding)?
    /// When this load must be done by: once it passes, the load fails with
    /// ``ImageKitError/deadlineExceeded(_:)`` and its download and decode are stopped (unless
    /// other loads share them).
    public var deadline: ContinuousClock.Instant?
    /// The queue completion and progress handlers run on (by default the manager's callback queue).
    public var callbackQueue: DispatchQueue?
    /// With ``ImageOptions/progressiveLoad``: called on the callback queue with each partial
    /// image (the image as far as the streamed bytes decode, at the load's output size), never
    /// after the load ended. Partial images come only from formats and decoders that give
    /// them; a load joining another in flight gets those made after it joined.
    public var partialImageHandler: PartialImageHandler?
    /// With ``ImageOptions/progressiveLoad``: the shortest time between two partial images
    /// (default 100 ms). Each partial image is a copy of the bitmap so far.
    public var progressiveInterval: Duration = .milliseconds(100)

    /// A context with the given fields, each defaulting as its documentation says.
    public init(thumbnailPixelSize: PixelSize? = nil, thumbnailMode: ImageResizer.Mode = .fit,
                scaleDownLimitBytes: Int? = nil, colorMode: ColorMode = .sRGB,
                imageTransformer: (any ImageTransformer)? = nil,
                cacheKeyFilter: CacheKeyFilter? = nil, cacheSerializer: CacheSerializer? = nil,
                requestModifier: DownloaderConfiguration.RequestModifier? = nil,
                responseValidator: DownloaderConfiguration.ResponseValidator? = nil,
                priority: ImagePriority = .normal,
                queryCacheType: ImageCacheType = .all, storeCacheType: ImageCacheType = .all,
                imageStoreCacheTypeForEncodedLoads: ImageCacheType = [],
                encodedStoreCacheType: ImageCacheType = .all,
                originalStoreCacheType: ImageCacheType = .disk, cache: (any ImageCaching)? = nil,
                loader: (any ImageLoading)? = nil, coder: (any ImageCoding)? = nil,
                deadline: ContinuousClock.Instant? = nil,
                callbackQueue: DispatchQueue? = nil) {
        self.thumbnailPixelSize = thumbnailPixelSize
        self.thumbnailMode = thumbnailMode
        self.scaleDownLimitBytes = scaleDownLimitBytes
        self.colorMode = colorMode
        self.imageTransformer = imageTransformer
        self.cacheKeyFilter = cacheKeyFilter
        self.cacheSerializer = cacheSerializer
        self.requestModifier = requestModifier
        self.responseValidator = responseValidator
        self.priority = priority
        self.queryCacheType = queryCacheType
        self.storeCacheType = storeCacheType
        self.imageStoreCacheTypeForEncodedLoads = imageStoreCacheTypeForEncodedLoads
        self.encodedStoreCacheType = encodedStoreCacheType
        self.originalStoreCacheType = originalStoreCacheType
        self.cache = cache
        self.loader = loader
        self.coder = coder
        self.deadline = deadline
        self.callbackQueue = callbackQueue
    }
}
