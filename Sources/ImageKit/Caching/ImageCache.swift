#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A namespaced two-tier image cache: decoded images in a ``MemoryCache`` in
/// front of a ``DiskCache`` of LZ4-compressed bitmaps, plus the original
/// encoded bytes per key so a later request for another size need not
/// download again.
///
/// A disk hit is promoted to memory. Entries whose
/// ``DiskCacheMetadata/expires`` has passed count as misses in both tiers.
///
/// ```swift
/// let cache = try ImageCache(namespace: "avatars")
/// try await cache.store(image, forKey: key)
/// if let hit = try await cache.image(forKey: key) { … }   // hit.image; hit.tier: .memory or .disk
/// ```
///
/// It is the built-in ``ImageCaching`` cache: the manager reaches its memory tier
/// synchronously, through ``memoryValue(forKey:kind:)``.
public final class ImageCache: Sendable {
    /// The namespace: the name of this cache's folder in the cache directory.
    public let namespace: String
    /// The in-memory tier.
    public let memoryCache: MemoryCache
    /// The on-disk tier.
    public let diskCache: DiskCache

    /// Opens the cache `namespace` in `directory` (default
    /// ``defaultDirectory``), i.e. the folder `directory/namespace`.
    ///
    /// - Throws: ``ImageKitError/invalidArgument(_:)`` for an empty namespace or
    ///   one containing `/`; ``ImageKitError/io(_:)`` when the folder cannot be created.
    public init(namespace: String = "default", directory: URL? = nil,
                memory: MemoryCacheConfiguration = MemoryCacheConfiguration(),
                disk: DiskCacheConfiguration = DiskCacheConfiguration()) throws(ImageKitError) {
        guard !namespace.isEmpty, namespace != ".", namespace != "..",
              !namespace.contains("/"), !namespace.contains("\0")
        else {
            throw ImageKitError.invalidArgument("image cache: namespace \"\(namespace)\" is not a folder name")
        }
        self.namespace = namespace
        memoryCache = MemoryCache(configuration: memory)
        let parent = directory ?? ImageCache.defaultDirectory
        diskCache = try DiskCache(directory: parent.appendingPathComponent(namespace, isDirectory: true),
                                  configuration: disk)
    }

    /// `$XDG_CACHE_HOME/ImageKit`, or `~/.cache/ImageKit` when that is not set.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? FileManager.default.homeDirectoryForCurrentUser
            base = home.appendingPathComponent(".cache", isDirectory: true)
        }
        return base.appendingPathComponent("ImageKit", isDirectory: true)
    }

    /// Stores `image` for `key` in the given tiers. `metadata.expires`, when
    /// set, also bounds how long the memory tier keeps it.
    ///
    /// - Throws: the disk tier's error (``ImageKitError/noSpace(_:)``, …); the
    ///   memory tier has been updated by then.
    public func store(_ image: Image, forKey key: String, to tiers: ImageCacheType = .all,
                      metadata: DiskCacheMetadata = DiskCacheMetadata()) async throws(ImageKitError) {
        if tiers.includesMemory {
            memoryCache.set(image, forKey: key, ttl: Self.timeToLive(metadata.expires))
        }
        if tiers.includesDisk {
            try await diskCache.store(image, forKey: key, metadata: metadata)
        }
    }

    /// The image for `key` from the first tier of `tiers` that has it (memory
    /// first), and which tier that was; nil when none has it.
    public func image(forKey key: String, from tiers: ImageCacheType = .all) async throws(ImageKitError)
        -> (image: Image, tier: ImageCacheType)? {
        if tiers.includesMemory, let image = memoryCache.image(forKey: key) {
            return (image, .memory)
        }
        if tiers.includesDisk, let entry = try await diskCache.entry(forKey: key), !entry.isExpired {
            memoryCache.set(entry.value, forKey: key, ttl: Self.timeToLive(entry.metadata.expires))
            return (entry.value, .disk)
        }
        return nil
    }

    /// Whether any of `tiers` holds an image for `key` (the disk tier answers from its index).
    public func contains(_ key: String, in tiers: ImageCacheType = .all) async -> Bool {
        if tiers.includesMemory && memoryCache.contains(key) { return true }
        return tiers.includesDisk ? await diskCache.contains(key) : false
    }

    /// Removes what is stored for `key` from `tiers`: in memory the image or variant, on disk
    /// the bitmap and the bytes (a variant or the original).
    public func remove(forKey key: String, from tiers: ImageCacheType = .all) async throws(ImageKitError) {
        if tiers.includesMemory { memoryCache.remove(forKey: key) }
        if tiers.includesDisk { try await diskCache.remove(forKey: key) }
    }

    /// Removes everything from `tiers`.
    public func clear(_ tiers: ImageCacheType = .all) async throws(ImageKitError) {
        if tiers.includesMemory { memoryCache.removeAll() }
        if tiers.includesDisk { try await diskCache.removeAll() }
    }

    /// Stores the original encoded bytes for `key` on disk.
    public func storeOriginalData(_ data: Data, forKey key: String,
                                  metadata: DiskCacheMetadata = DiskCacheMetadata()) async throws(ImageKitError) {
        try await diskCache.storeData(data, forKey: key, metadata: metadata)
    }

    /// The original encoded bytes stored for `key`, or `nil` (none, or expired).
    public func originalData(forKey key: String) async throws(ImageKitError) -> Data? {
        try await diskCache.data(forKey: key)
    }

    /// Stops the disk tier (see ``DiskCache/shutdown()``); the memory tier keeps its entries.
    public func shutdown() async {
        await diskCache.shutdown()
    }

    /// Bytes the disk tier holds.
    public var totalDiskSize: Int {
        get async { await diskCache.totalSize }
    }

    /// Entries the disk tier holds (bitmaps and original bytes).
    public var totalDiskCount: Int {
        get async { await diskCache.totalCount }
    }

    /// Time left until `expires`, for the memory tier; `nil` when there is no expiry.
    static func timeToLive(_ expires: Date?) -> Duration? {
        expires.map { .milliseconds(max(0, Int64($0.timeIntervalSinceNow * 1000))) }
    }
}
