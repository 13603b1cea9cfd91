/// An image cache the ``ImageManager`` loads through (SDWebImage's `SDImageCache` protocol):
/// decoded images, encoded variants and original bytes by key, in a memory tier, a disk
/// tier, or both.
///
/// ``ImageCache`` (memory in front of disk) is the built-in one; ``ImageCachesManager`` chains
/// several caches (local tiers in front of a shared one), and ``ByteTierImageCache`` makes a
/// cache of any ``ByteCacheTier`` (a store of bytes by key, such as a remote one). A cache of
/// your own implements the five requirements without defaults; a memory tier answering without
/// suspending also implements ``memoryValue(forKey:kind:)``, which keeps a memory hit free of
/// suspension.
///
/// The manager treats a failing query as a miss and a failing store as a failed write
/// (reported to its observers): a cache never fails a load.
///
/// ```swift
/// final class MyCache: ImageCaching { … }
/// let manager = ImageManager(cache: ImageCachesManager(caches: [try ImageCache(), MyCache()]),
///                            downloader: try Downloader())
/// ```
public protocol ImageCaching: AnyObject, Sendable {
    /// The entry of `kind` stored under `key` in the first of `tiers` holding a live one
    /// (memory before disk), or nil. An expired entry is a miss. Only reads: a hit is not
    /// copied to other tiers (the manager stores what it found in the tiers a load asks for).
    ///
    /// - Throws: the cache's failure; the manager counts it as a miss.
    func entry(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async throws
        -> ImageCacheHit?

    /// Stores `value` under `key` in `tiers`, with `metadata` (validators, expiry, caller
    /// data). A tier that does not keep entries of `value`'s kind ignores it.
    func store(_ value: ImageCacheValue, forKey key: String, to tiers: ImageCacheType,
               metadata: DiskCacheMetadata) async throws

    /// Removes every entry stored under `key`, whatever its kind, from `tiers`.
    func remove(forKey key: String, from tiers: ImageCacheType) async throws

    /// Whether any of `tiers` holds an entry of `kind` under `key` (possibly without reading it).
    func contains(_ key: String, kind: ImageCacheEntryKind, in tiers: ImageCacheType) async -> Bool

    /// Removes every entry from `tiers`.
    func clear(_ tiers: ImageCacheType) async throws

    /// Whether ``memoryValue(forKey:kind:)`` answers for this cache's whole memory tier (true
    /// also for a cache without a memory tier). When true, the manager looks in memory only
    /// through it and leaves ``ImageCacheType/memory`` out of its ``entry(forKey:kind:from:)``
    /// queries; when false (the default), its queries include the memory tier.
    var answersMemoryQueriesSynchronously: Bool { get }

    /// The value of `kind` stored under `key` in the memory tier, without suspending; nil when
    /// there is none or the cache cannot answer synchronously (the default). The manager asks
    /// this first for every load, before anything else, so it must be cheap; a hit here
    /// completes the load on the calling thread.
    func memoryValue(forKey key: String, kind: ImageCacheEntryKind) -> ImageCacheValue?

    /// The metadata stored with the entry of `kind` under `key` in `tiers`, expired or not, for
    /// revalidating an image found in memory. The default is the metadata of
    /// ``entry(forKey:kind:from:)``'s hit (so nothing for an expired entry).
    func metadata(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async
        -> DiskCacheMetadata?

    /// The executor whose threads ``entry(forKey:kind:from:)`` would read the entry of `kind`
    /// under `key` in `tiers` on, running the read in place when called there; nil (the
    /// default) when the read would surely miss or the cache has no such threads. Where it is
    /// not nil, the manager's `async` loads call ``entry(forKey:kind:from:)`` from their own
    /// task, without a pipeline, and its other loads start their pipeline on it, so a hit costs
    /// a hop to those threads and one back, as the read alone does.
    func readExecutor(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType)
        -> (any TaskExecutor)?

    /// Completes the cache's pending writes and stops its threads; called by
    /// ``ImageManager/shutdown(_:)`` for the manager's cache. The default does nothing.
    func shutdown() async
}

extension ImageCaching {
    /// False: the manager's queries include the memory tier.
    public var answersMemoryQueriesSynchronously: Bool { false }

    /// Nil: the cache answers memory queries through ``entry(forKey:kind:from:)``.
    public func memoryValue(forKey key: String, kind: ImageCacheEntryKind) -> ImageCacheValue? { nil }

    /// The metadata of ``entry(forKey:kind:from:)``'s hit, or nil (a miss, or a failed query).
    public func metadata(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async
        -> DiskCacheMetadata? {
        (try? await entry(forKey: key, kind: kind, from: tiers))?.metadata
    }

    /// Nil: the manager starts its loads on the global concurrent executor.
    public func readExecutor(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType)
        -> (any TaskExecutor)? { nil }

    /// Nothing to stop.
    public func shutdown() async {}
}
