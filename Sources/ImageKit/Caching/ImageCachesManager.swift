/// Several ``ImageCaching`` caches used as one (SDWebImage's `SDImageCachesManager`), e.g. the
/// local memory and disk tiers in front of a tier shared by a fleet.
///
/// The caches are ordered from the highest priority (first, asked first) to the lowest (last)
/// — the reverse of SDWebImage's array, where the cache added last has the highest priority.
/// Each kind of operation runs under its own ``ImageCacheOperationPolicy``; the defaults are
/// SDWebImage's: queries and contains checks ``ImageCacheOperationPolicy/serial``, stores
/// ``ImageCacheOperationPolicy/highestOnly``, removes and clears
/// ``ImageCacheOperationPolicy/concurrent``. A hit in a lower cache is promoted: stored, with
/// its metadata, in the tiers queried of every cache above it, before the query returns
/// (unless ``promotesHits`` is false). A failing promotion leaves the hit as it was.
///
/// A failing cache does not stop the others: a query counts it as a miss (and throws its error
/// only when no cache had the entry); a store, remove or clear throws the first error once
/// every cache it reached is done.
///
/// ```swift
/// let shared = ByteTierImageCache(tier: MyRedisTier())
/// let caches = ImageCachesManager(caches: [try ImageCache(namespace: "thumbs"), shared],
///                                 storePolicy: .concurrent)   // write through to the shared tier
/// let manager = ImageManager(cache: caches, downloader: try Downloader())
/// ```
public final class ImageCachesManager: ImageCaching {
    /// The caches, highest priority first.
    public let caches: [any ImageCaching]
    /// How ``entry(forKey:kind:from:)``, ``memoryValue(forKey:kind:)`` and
    /// ``metadata(forKey:kind:from:)`` run (default serial).
    public let queryPolicy: ImageCacheOperationPolicy
    /// How ``store(_:forKey:to:metadata:)`` runs (default highest only).
    public let storePolicy: ImageCacheOperationPolicy
    /// How ``remove(forKey:from:)`` runs (default concurrent).
    public let removePolicy: ImageCacheOperationPolicy
    /// How ``contains(_:kind:in:)`` runs (default serial).
    public let containsPolicy: ImageCacheOperationPolicy
    /// How ``clear(_:)`` runs (default concurrent).
    public let clearPolicy: ImageCacheOperationPolicy
    /// Whether a hit in a lower cache is stored in the caches above it (default true).
    public let promotesHits: Bool

    /// A manager of `caches` (highest priority first) with the given policies.
    public init(caches: [any ImageCaching], queryPolicy: ImageCacheOperationPolicy = .serial,
                storePolicy: ImageCacheOperationPolicy = .highestOnly,
                removePolicy: ImageCacheOperationPolicy = .concurrent,
                containsPolicy: ImageCacheOperationPolicy = .serial,
                clearPolicy: ImageCacheOperationPolicy = .concurrent, promotesHits: Bool = true) {
        self.caches = caches
        self.queryPolicy = queryPolicy
        self.storePolicy = storePolicy
        self.removePolicy = removePolicy
        self.containsPolicy = containsPolicy
        self.clearPolicy = clearPolicy
        self.promotesHits = promotesHits
    }

    // MARK: - Queries

    /// True when every cache the query policy reaches answers its memory tier synchronously.
    public var answersMemoryQueriesSynchronously: Bool {
        queryPolicy.positions(among: caches.count).allSatisfy { caches[$0].answersMemoryQueriesSynchronously }
    }

    /// The first synchronous memory hit among the caches the query policy reaches, in order
    /// (whatever the policy: nothing runs at once here). Not promoted: promotion needs a store,
    /// which suspends. Allocates nothing.
    public func memoryValue(forKey key: String, kind: ImageCacheEntryKind) -> ImageCacheValue? {
        for i in queryPolicy.positions(among: caches.count) {
            if let value = caches[i].memoryValue(forKey: key, kind: kind) { return value }
        }
        return nil
    }

    /// The entry from the caches the query policy reaches: under ``ImageCacheOperationPolicy/serial``
    /// the first cache's hit in order, under ``ImageCacheOperationPolicy/concurrent`` the first hit
    /// to arrive. The hit is promoted to the caches above the one that had it.
    ///
    /// - Throws: the first cache error, when no cache had the entry.
    public func entry(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async throws
        -> ImageCacheHit? {
        let positions = queryPolicy.positions(among: caches.count)
        var firstError: (any Error)?
        var found: (position: Int, hit: ImageCacheHit)?
        if queryPolicy == .concurrent {
            do {
                let answer = try await FirstAnswer.race(positions.map { i in
                    let cache = caches[i]
                    return { @Sendable in try await cache.entry(forKey: key, kind: kind, from: tiers) }
                })
                found = answer.map { (positions.lowerBound + $0.index, $0.value) }
            } catch {
                firstError = error
            }
        } else {
            for i in positions {
                do {
                    if let hit = try await caches[i].entry(forKey: key, kind: kind, from: tiers) {
                        found = (i, hit)
                        break
                    }
                } catch {
                    firstError = firstError ?? error
                }
            }
        }
        guard let found else {
            if let firstError { throw firstError }
            return nil
        }
        if promotesHits {
            for i in 0..<found.position {
                try? await caches[i].store(found.hit.value, forKey: key, to: tiers, metadata: found.hit.metadata)
            }
        }
        return found.hit
    }

    /// The first metadata found among the caches the query policy reaches, in order.
    public func metadata(forKey key: String, kind: ImageCacheEntryKind, from tiers: ImageCacheType) async
        -> DiskCacheMetadata? {
        for i in queryPolicy.positions(among: caches.count) {
            if let metadata = await caches[i].metadata(forKey: key, kind: kind, from: tiers) { return metadata }
        }
        return nil
    }

    /// Whether the caches the contains policy reaches hold the entry: under
    /// ``ImageCacheOperationPolicy/serial`` asked in order until one does, under
    /// ``ImageCacheOperationPolicy/concurrent`` all at once, answering at the first yes.
    public func contains(_ key: String, kind: ImageCacheEntryKind, in tiers: ImageCacheType) async -> Bool {
        let positions = containsPolicy.positions(among: caches.count)
        if containsPolicy == .concurrent {
            let yes = try? await FirstAnswer.race(positions.map { i in
                let cache = caches[i]
                return { @Sendable in await cache.contains(key, kind: kind, in: tiers) ? true : nil }
            })
            return yes != nil
        }
        for i in positions where await caches[i].contains(key, kind: kind, in: tiers) {
            return true
        }
        return false
    }

    // MARK: - Writes

    /// Stores `value` in the caches the store policy reaches.
    ///
    /// - Throws: the first cache error, once every cache reached is done.
    public func store(_ value: ImageCacheValue, forKey key: String, to tiers: ImageCacheType,
                      metadata: DiskCacheMetadata) async throws {
        try await run(storePolicy) { try await $0.store(value, forKey: key, to: tiers, metadata: metadata) }
    }

    /// Removes what is stored under `key` from the caches the remove policy reaches.
    ///
    /// - Throws: the first cache error, once every cache reached is done.
    public func remove(forKey key: String, from tiers: ImageCacheType) async throws {
        try await run(removePolicy) { try await $0.remove(forKey: key, from: tiers) }
    }

    /// Empties `tiers` of the caches the clear policy reaches.
    ///
    /// - Throws: the first cache error, once every cache reached is done.
    public func clear(_ tiers: ImageCacheType) async throws {
        try await run(clearPolicy) { try await $0.clear(tiers) }
    }

    /// Shuts every cache down, in order.
    public func shutdown() async {
        for cache in caches { await cache.shutdown() }
    }

    /// Runs `body` on the caches `policy` reaches (in order, or at once), to the end on each;
    /// then throws the first error.
    private func run(_ policy: ImageCacheOperationPolicy,
                     _ body: @escaping @Sendable (any ImageCaching) async throws -> Void) async throws {
        let positions = policy.positions(among: caches.count)
        var firstError: (any Error)?
        if policy == .concurrent {
            firstError = await withTaskGroup(of: (any Error)?.self) { group in
                for i in positions {
                    let cache = caches[i]
                    group.addTask {
                        do {
                            try await body(cache)
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                var first: (any Error)?
                for await error in group where first == nil {
                    first = error
                }
                return first
            }
        } else {
            for i in positions {
                do { try await body(caches[i]) } catch { firstError = firstError ?? error }
            }
        }
        if let firstError { throw firstError }
    }
}
