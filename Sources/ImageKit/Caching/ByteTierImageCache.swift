#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An ``ImageCaching`` cache over a ``ByteCacheTier``: encoded variants and original bytes,
/// each kept with its kind and metadata (validators, expiry, caller data) in the tier's bytes.
/// Decoded images are not kept (storing one does nothing; querying one misses).
///
/// It counts as one tier of ``ImageCacheType``: ``ImageCacheType/disk`` by default (a remote or
/// on-disk store), or ``ImageCacheType/memory``; it does its work only when an operation's
/// tiers include that one. Put it behind local caches with ``ImageCachesManager``:
///
/// ```swift
/// let shared = ByteTierImageCache(tier: MyRedisTier(), keyPrefix: "thumbs:")
/// let caches = ImageCachesManager(caches: [try ImageCache(), shared], storePolicy: .concurrent)
/// ```
public final class ByteTierImageCache: ImageCaching {
    /// The store of bytes.
    public let tier: any ByteCacheTier
    /// Put before every key given to ``tier`` (a namespace in a shared store).
    public let keyPrefix: String
    /// The tier this cache counts as: ``ImageCacheType/memory`` or ``ImageCacheType/disk``.
    public let tierType: ImageCacheType

    /// A cache over `tier`, counting as the memory tier when `countsAsMemory`, else as the
    /// disk tier; `keyPrefix` is put before every key.
    public init(tier: any ByteCacheTier, keyPrefix: String = "", countsAsMemory: Bool = false) {
        self.tier = tier
        self.keyPrefix = keyPrefix
        tierType = countsAsMemory ? .memory : .disk
    }

    /// True when it counts as the disk tier (it then has no memory tier to answer for); false
    /// when it counts as the memory tier, which it answers asynchronously.
    public var answersMemoryQueriesSynchronously: Bool { tierType != .memory }

    /// The variant or original bytes under `key`, unless expired, of another kind, not an
    /// envelope ``ByteTierImageCache`` wrote (of this format version, with a matching checksum),
    /// or (a variant) not an image ImageKit reads or not of the pixel size stored with it. The
    /// bytes share the buffer the tier returned.
    ///
    /// - Throws: the tier's error.
    public func entry(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async throws
        -> ImageCacheHit? {
        guard kind != .image, covers(tiers), let contents = try await contents(forKey: key, kind: kind),
              !(contents.metadata.expires.map { $0 <= Date() } ?? false)
        else { return nil }
        switch kind {
        case .variant:
            guard let encoded = try? EncodedImage(data: contents.payload),
                  contents.pixelSize.map({ $0 == encoded.pixelSize }) ?? true
            else { return nil }
            return ImageCacheHit(value: .variant(encoded), metadata: contents.metadata, tier: tierType)
        case .original:
            return ImageCacheHit(value: .original(contents.payload), metadata: contents.metadata, tier: tierType)
        case .image:
            return nil
        }
    }

    /// Stores a variant's bytes or the original bytes with `metadata` (the tier is told
    /// `metadata.expires`); ignores a decoded image.
    ///
    /// - Throws: the tier's error.
    public func store(_ value: ImageCacheValue, forKey key: String, to tiers: ImageCacheType,
                      metadata: DiskCacheMetadata) async throws {
        guard covers(tiers) else { return }
        let payload: Data
        var pixelSize: PixelSize?
        switch value {
        case .image: return
        case .variant(let encoded): (payload, pixelSize) = (encoded.data, encoded.pixelSize)
        case .original(let data): payload = data
        }
        let wrapped = ByteTierEnvelope.wrap(payload, kind: value.kind, metadata: metadata, pixelSize: pixelSize)
        try await tier.setData(wrapped, forKey: keyPrefix + key, expires: metadata.expires)
    }

    /// Removes the bytes under `key`.
    ///
    /// - Throws: the tier's error.
    public func remove(forKey key: String, from tiers: ImageCacheType) async throws {
        guard covers(tiers) else { return }
        try await tier.removeData(forKey: keyPrefix + key)
    }

    /// Whether the tier holds bytes under `key`, as its ``ByteCacheTier/containsData(forKey:)``
    /// says (without reading them: an expired entry, or one of the other kind, counts). Never
    /// for ``ImageCacheEntryKind/image``.
    public func contains(_ key: String, kind: ImageCacheEntryKind, in tiers: ImageCacheType) async -> Bool {
        guard kind != .image, covers(tiers) else { return false }
        return await tier.containsData(forKey: keyPrefix + key)
    }

    /// Removes everything from the tier (all of it, whatever the key prefix).
    ///
    /// - Throws: the tier's error.
    public func clear(_ tiers: ImageCacheType) async throws {
        guard covers(tiers) else { return }
        try await tier.removeAllData()
    }

    /// The metadata stored with the entry of `kind` under `key`, expired or not.
    public func metadata(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async
        -> DiskCacheMetadata? {
        guard kind != .image, covers(tiers) else { return nil }
        return (try? await contents(forKey: key, kind: kind))?.metadata
    }

    /// Whether `tiers` include the tier this cache counts as.
    private func covers(_ tiers: ImageCacheType) -> Bool {
        tiers == .all || tiers == tierType
    }

    /// The envelope under `key` when it holds an entry of `kind`.
    private func contents(forKey key: String, kind: ImageCacheEntryKind) async throws -> ByteTierEnvelope.Contents? {
        guard let data = try await tier.data(forKey: keyPrefix + key),
              let contents = ByteTierEnvelope.unwrap(data), contents.kind == kind
        else { return nil }
        return contents
    }
}
