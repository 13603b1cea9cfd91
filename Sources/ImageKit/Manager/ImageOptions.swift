/// Flags that change how one ``ImageManager`` load behaves (SDWebImage's `SDWebImageOptions`,
/// without the flags that only make sense for UIKit views).
///
/// Values that are not flags (thumbnail size, transformer, cache tiers, priority, …) live in
/// ``ImageContext``. (Bits 1 and 2, once the low and high priority flags, are unused: the
/// priority is ``ImageContext/priority``.)
public struct ImageOptions: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt32

    /// Options from their bits.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Load a URL even though it is on the failed-URL blocklist.
    public static let retryFailed = ImageOptions(rawValue: 1 << 0)
    /// Complete at once with a cached image, then revalidate it with the server
    /// (If-None-Match / If-Modified-Since from the stored validators): on 304 nothing more
    /// happens; on 200 the cache is updated and the completion is called a second time
    /// with the new image.
    public static let refreshCached = ImageOptions(rawValue: 1 << 3)
    /// Never download: a cache miss fails with ``ImageKitError/notInCache(_:)``.
    public static let fromCacheOnly = ImageOptions(rawValue: 1 << 4)
    /// Skip the cache query and always download (the result is still stored).
    public static let fromLoaderOnly = ImageOptions(rawValue: 1 << 5)
    /// Store the result in the memory tier only (neither the bitmap nor the original bytes go to disk).
    public static let cacheMemoryOnly = ImageOptions(rawValue: 1 << 6)
    /// Scale down images whose decoded frame would exceed
    /// ``ImageManagerConfiguration/scaleDownLimitBytes`` (unless the context sets its own limit).
    public static let scaleDownLargeImages = ImageOptions(rawValue: 1 << 7)
    /// Decode only the first frame of an animation, even with ``preloadAllFrames``.
    public static let decodeFirstFrameOnly = ImageOptions(rawValue: 1 << 8)
    /// Decode every frame of an animation up front (by default only the first frame is decoded,
    /// as ``DecodeOptions`` does).
    public static let preloadAllFrames = ImageOptions(rawValue: 1 << 9)
    /// Complete only after the result has been written to the disk tier (by default the
    /// completion comes first and the write follows).
    public static let waitStoreCache = ImageOptions(rawValue: 1 << 10)
    /// Send and store cookies in the downloader's cookie jar for this load.
    public static let handleCookies = ImageOptions(rawValue: 1 << 11)
    /// Do not verify the server's TLS certificate for this load. Only for hosts trusted by other means.
    public static let allowInvalidSSLCertificates = ImageOptions(rawValue: 1 << 12)
    /// Apply the context's transformer to animations too (by default animations are left untransformed).
    public static let transformAnimatedImage = ImageOptions(rawValue: 1 << 13)
    /// On a memory hit, also read the original bytes from the disk tier into ``ImageResult/originalData``.
    public static let queryMemoryData = ImageOptions(rawValue: 1 << 14)
    /// Hand the image decoded so far to the context's ``ImageContext/partialImageHandler`` (and
    /// as ``ImageLoadEvent/partial(_:)`` to ``ImageManager/images(for:options:context:)``) while
    /// the download streams, at most every ``ImageContext/progressiveInterval`` (SDWebImage's
    /// `progressiveLoad`). Partial images never enter a cache; the final image does, as usual.
    /// Without it a streamed download is still decoded as it arrives, silently.
    public static let progressiveLoad = ImageOptions(rawValue: 1 << 15)
}
