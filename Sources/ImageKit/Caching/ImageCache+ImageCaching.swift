#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ImageCache`` as an ``ImageCaching`` cache. Its memory tier holds decoded images and
/// encoded variants (not original bytes) and answers synchronously; its disk tier holds all
/// three kinds, with their metadata.
extension ImageCache: ImageCaching {
    /// True: ``memoryValue(forKey:kind:)`` answers for the memory tier.
    public var answersMemoryQueriesSynchronously: Bool { true }

    /// The image or variant stored under `key` in the memory tier (marked most recently used);
    /// never original bytes, which the memory tier does not keep. Does not allocate.
    public func memoryValue(forKey key: String, kind: ImageCacheEntryKind) -> ImageCacheValue? {
        switch kind {
        case .image: memoryCache.image(forKey: key).map(ImageCacheValue.image)
        case .variant: memoryCache.encodedImage(forKey: key).map(ImageCacheValue.variant)
        case .original: nil
        }
    }

    /// The live entry of `kind` under `key`: from memory, else from disk (a disk hit is not
    /// copied to memory; ``image(forKey:from:)`` does that). A variant on disk whose bytes are
    /// not an image ImageKit reads is a miss.
    ///
    /// - Throws: the disk tier's error (``ImageKitError/io(_:)``, …).
    public func entry(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async throws
        -> ImageCacheHit? {
        if tiers.includesMemory, let value = memoryValue(forKey: key, kind: kind) {
            return ImageCacheHit(value: value, tier: .memory)
        }
        guard tiers.includesDisk else { return nil }
        switch kind {
        case .image:
            guard let name = diskCache.heldName(key), let entry = try await diskCache.entry(forKey: key, named: name),
                  !entry.isExpired
            else { return nil }
            return ImageCacheHit(value: .image(entry.value), metadata: entry.metadata, tier: .disk)
        case .variant:
            guard let name = diskCache.heldName(key, data: true),
                  let entry = try await diskCache.dataEntry(forKey: key, named: name),
                  !entry.isExpired, let encoded = try? EncodedImage(data: entry.value)
            else { return nil }
            return ImageCacheHit(value: .variant(encoded), metadata: entry.metadata, tier: .disk)
        case .original:
            guard let name = diskCache.heldName(key, data: true),
                  let entry = try await diskCache.dataEntry(forKey: key, named: name), !entry.isExpired
            else { return nil }
            return ImageCacheHit(value: .original(entry.value), metadata: entry.metadata, tier: .disk)
        }
    }

    /// The disk tier's threads, when `tiers` include the disk and its index may know the entry
    /// (an image is a bitmap entry, a variant or original bytes a data entry); nil otherwise.
    public func readExecutor(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType)
        -> (any TaskExecutor)? {
        guard tiers.includesDisk, diskCache.mayHold(key, data: kind != .image) else { return nil }
        return diskCache.readExecutor
    }

    /// Stores `value` under `key`: an image or a variant in memory (for at most until
    /// `metadata.expires`) and on disk; original bytes on disk only.
    ///
    /// - Throws: the disk tier's error; the memory tier has been updated by then.
    public func store(_ value: ImageCacheValue, forKey key: String, to tiers: ImageCacheType,
                      metadata: DiskCacheMetadata) async throws {
        switch value {
        case .image(let image):
            try await store(image, forKey: key, to: tiers, metadata: metadata)
        case .variant(let encoded):
            if tiers.includesMemory {
                memoryCache.set(encoded, forKey: key, ttl: Self.timeToLive(metadata.expires))
            }
            if tiers.includesDisk {
                try await diskCache.storeData(encoded.data, forKey: key, metadata: metadata)
            }
        case .original(let data):
            if tiers.includesDisk {
                try await diskCache.storeData(data, forKey: key, metadata: metadata)
            }
        }
    }

    /// Whether `tiers` hold an entry of `kind` under `key`: the memory tier checks the entry's
    /// kind and life, the disk tier answers from its index.
    public func contains(_ key: String, kind: ImageCacheEntryKind, in tiers: ImageCacheType) async -> Bool {
        if tiers.includesMemory, kind != .original, memoryCache.contains(key, encoded: kind == .variant) {
            return true
        }
        guard tiers.includesDisk else { return false }
        return await diskCache.contains(key, data: kind != .image)
    }

    /// The metadata stored on disk with the entry of `kind` under `key`, expired or not (the
    /// memory tier keeps none).
    public func metadata(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async
        -> DiskCacheMetadata? {
        guard tiers.includesDisk else { return nil }
        if kind == .image {
            guard diskCache.mayHold(key) else { return nil }
            return try? await diskCache.entry(forKey: key)?.metadata
        }
        guard diskCache.mayHold(key, data: true) else { return nil }
        return try? await diskCache.dataEntry(forKey: key)?.metadata
    }
}
