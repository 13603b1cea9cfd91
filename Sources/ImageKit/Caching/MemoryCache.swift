import Synchronization

/// Decoded images and encoded variants in memory, evicted least recently used first when
/// their total cost (bytes of pixels, or encoded bytes) or count passes the configured limits.
///
/// Eviction is exact LRU across the whole cache although the cache is split
/// into independently locked shards: every access takes a stamp from one
/// counter, and eviction removes the shard tail with the oldest stamp. A hit
/// locks one shard, moves one entry to the front and does not allocate.
///
/// ```swift
/// let cache = MemoryCache()
/// cache.set(image, forKey: url.absoluteString)
/// let hit = cache.image(forKey: url.absoluteString)
/// ```
public final class MemoryCache: Sendable {
    /// The limits this cache enforces.
    public let configuration: MemoryCacheConfiguration

    private let shards: [MemoryCacheShard]
    private let cost = Atomic<Int>(0)
    private let count = Atomic<Int>(0)
    private let clock = Atomic<UInt64>(0)
    /// Images evicted so far; holding it serialises evictions, so concurrent
    /// inserts never evict more than needed.
    private let evictions = Locked(0)

    /// A cache with the given limits.
    public init(configuration: MemoryCacheConfiguration = MemoryCacheConfiguration()) {
        self.configuration = configuration
        shards = (0..<max(1, configuration.shardCount)).map { _ in MemoryCacheShard() }
    }

    /// Bytes of pixels held now.
    public var totalCost: Int { cost.load(ordering: .relaxed) }

    /// Images held now.
    public var totalCount: Int { count.load(ordering: .relaxed) }

    /// Hits, misses, evictions and current totals.
    public var statistics: MemoryCacheStatistics {
        var stats = MemoryCacheStatistics(evictions: evictions.withLock { $0 }, totalCost: totalCost,
                                          totalCount: totalCount)
        for shard in shards {
            shard.state.withLock { s in
                stats.hits += s.hits
                stats.misses += s.misses
                stats.expirations += s.expirations
            }
        }
        return stats
    }

    private func shard(for key: MemoryCacheShard.Key) -> MemoryCacheShard {
        shards[Int(UInt(bitPattern: key.hash) % UInt(shards.count))]
    }

    private func nextStamp() -> UInt64 {
        clock.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The image stored for `key`, or `nil`. Marks it most recently used.
    public func image(forKey string: String) -> Image? {
        value(forKey: string)?.image
    }

    /// The encoded image stored for `key`, or `nil`. Marks it most recently used. The bytes are
    /// not copied: the result shares the cached buffer.
    public func encodedImage(forKey string: String) -> EncodedImage? {
        value(forKey: string)?.encoded
    }

    private func value(forKey string: String) -> MemoryCacheValue? {
        let key = MemoryCacheShard.Key(string)
        let (value, expired) = shard(for: key).state.withLock { s -> (MemoryCacheValue?, MemoryCacheValue?) in
            guard let i = s.slots[key] else {
                s.misses += 1
                return (nil, nil)
            }
            let expiry = s.nodes[Int(i)].expiry
            if expiry != 0 && MonotonicClock.now() >= expiry {
                let (old, oldCost) = s.release(i)
                s.expirations += 1
                s.misses += 1
                cost.wrappingSubtract(oldCost, ordering: .relaxed)
                count.wrappingSubtract(1, ordering: .relaxed)
                return (nil, old)
            }
            if s.head != i {
                s.unlink(i)
                s.pushFront(i)
            }
            s.nodes[Int(i)].stamp = nextStamp()
            s.hits += 1
            return (s.nodes[Int(i)].value, nil)
        }
        _ = expired  // released here, outside the lock
        return value
    }

    /// Whether a live image is stored for `key` (does not count as a use).
    public func contains(_ string: String) -> Bool {
        contains(string, encoded: nil)
    }

    /// Whether a live entry is stored for `key`: an encoded variant (`encoded` true), a decoded
    /// image (false) or either (nil). Does not count as a use.
    func contains(_ string: String, encoded: Bool?) -> Bool {
        let key = MemoryCacheShard.Key(string)
        return shard(for: key).state.withLock { s in
            guard let i = s.slots[key] else { return false }
            if let encoded {
                let isEncoded: Bool
                if case .encoded = s.nodes[Int(i)].value { isEncoded = true } else { isEncoded = false }
                if isEncoded != encoded { return false }
            }
            let expiry = s.nodes[Int(i)].expiry
            return expiry == 0 || MonotonicClock.now() < expiry
        }
    }

    /// Stores `image` for `key` (replacing any image stored for it) and evicts
    /// least recently used images while the limits are exceeded.
    ///
    /// - Parameters:
    ///   - image: The image to keep.
    ///   - string: The key.
    ///   - ttl: How long the entry lives; `nil` takes the configuration's ``MemoryCacheConfiguration/ttl``.
    ///     An image costing more than the whole cost limit is not stored (and any older image for the key is removed).
    public func set(_ image: Image, forKey string: String, ttl: Duration? = nil) {
        set(.image(image), forKey: string, ttl: ttl)
    }

    /// Stores `encoded` for `key` (replacing anything stored for it), costing its byte count,
    /// and evicts least recently used entries while the limits are exceeded.
    ///
    /// - Parameters:
    ///   - encoded: The bytes to keep.
    ///   - string: The key.
    ///   - ttl: How long the entry lives, as for an image.
    public func set(_ encoded: EncodedImage, forKey string: String, ttl: Duration? = nil) {
        set(.encoded(encoded), forKey: string, ttl: ttl)
    }

    private func set(_ value: MemoryCacheValue, forKey string: String, ttl: Duration?) {
        let entryCost = value.cost
        guard entryCost <= configuration.costLimit, configuration.countLimit > 0 else {
            remove(forKey: string)
            return
        }
        let key = MemoryCacheShard.Key(string)
        var expiry: UInt64 = 0
        if let life = ttl ?? configuration.ttl {
            let (sum, overflow) = MonotonicClock.now().addingReportingOverflow(MonotonicClock.nanoseconds(life))
            expiry = overflow ? .max : max(sum, 1)
        }
        let replaced = shard(for: key).state.withLock { s -> MemoryCacheValue? in
            let stamp = nextStamp()
            if let i = s.slots[key] {
                let old = s.nodes[Int(i)].value
                cost.wrappingAdd(entryCost - s.nodes[Int(i)].cost, ordering: .relaxed)
                s.nodes[Int(i)].value = value
                s.nodes[Int(i)].cost = entryCost
                s.nodes[Int(i)].expiry = expiry
                s.nodes[Int(i)].stamp = stamp
                if s.head != i {
                    s.unlink(i)
                    s.pushFront(i)
                }
                return old
            }
            let node = MemoryCacheShard.Node(key: key, value: value, cost: entryCost, expiry: expiry,
                                             stamp: stamp, prev: -1, next: -1)
            let i: Int32
            if s.free >= 0 {
                i = s.free
                s.free = s.nodes[Int(i)].next
                s.nodes[Int(i)] = node
            } else {
                i = Int32(s.nodes.count)
                s.nodes.append(node)
            }
            s.slots[key] = i
            s.pushFront(i)
            cost.wrappingAdd(entryCost, ordering: .relaxed)
            count.wrappingAdd(1, ordering: .relaxed)
            return nil
        }
        _ = replaced  // released here, outside the lock
        evict(toCost: configuration.costLimit, count: configuration.countLimit)
    }

    /// Removes what is stored for `key`; returns it when it was a decoded image.
    @discardableResult
    public func remove(forKey string: String) -> Image? {
        let key = MemoryCacheShard.Key(string)
        let removed = shard(for: key).state.withLock { s -> MemoryCacheValue? in
            guard let i = s.slots[key] else { return nil }
            let (value, oldCost) = s.release(i)
            cost.wrappingSubtract(oldCost, ordering: .relaxed)
            count.wrappingSubtract(1, ordering: .relaxed)
            return value
        }
        return removed?.image
    }

    /// Removes every image.
    public func removeAll() {
        for shard in shards {
            let old = shard.state.withLock { s -> [MemoryCacheShard.Node] in
                var removedCost = 0
                for i in s.slots.values { removedCost += s.nodes[Int(i)].cost }
                cost.wrappingSubtract(removedCost, ordering: .relaxed)
                count.wrappingSubtract(s.slots.count, ordering: .relaxed)
                let nodes = s.nodes
                s.slots = [:]
                s.nodes = []
                s.head = -1
                s.tail = -1
                s.free = -1
                return nodes
            }
            _ = old  // images released here, outside the lock
        }
    }

    /// Removes every image whose time to live has passed (expired images are
    /// otherwise removed when looked up or evicted).
    public func removeExpired() {
        let now = MonotonicClock.now()
        for shard in shards {
            let expired = shard.state.withLock { s -> [MemoryCacheValue] in
                var images: [MemoryCacheValue] = []
                let dead = s.slots.values.filter { s.nodes[Int($0)].expiry != 0 && now >= s.nodes[Int($0)].expiry }
                for i in dead {
                    let (image, oldCost) = s.release(i)
                    if let image { images.append(image) }
                    s.expirations += 1
                    cost.wrappingSubtract(oldCost, ordering: .relaxed)
                    count.wrappingSubtract(1, ordering: .relaxed)
                }
                return images
            }
            _ = expired  // released here, outside the lock
        }
    }

    /// Evicts least recently used images until the total cost is at most `limit`.
    public func trim(toCost limit: Int) {
        evict(toCost: limit, count: .max)
    }

    /// Evicts least recently used images until at most `limit` remain.
    public func trim(toCount limit: Int) {
        evict(toCost: .max, count: limit)
    }

    /// Removes the globally least recently used image until both totals are within bounds.
    private func evict(toCost costLimit: Int, count countLimit: Int) {
        guard totalCost > costLimit || totalCount > countLimit else { return }
        evictions.withLock { evictedSoFar in
            while totalCost > costLimit || totalCount > countLimit {
                var oldest = -1
                var oldestStamp = UInt64.max
                for (n, shard) in shards.enumerated() {
                    let stamp = shard.state.withLock { s in s.tail >= 0 ? s.nodes[Int(s.tail)].stamp : .max }
                    if stamp < oldestStamp {
                        oldest = n
                        oldestStamp = stamp
                    }
                }
                guard oldest >= 0 else { return }
                let victim = shards[oldest].state.withLock { s -> MemoryCacheValue? in
                    // Used again since we looked: look again.
                    guard s.tail >= 0, s.nodes[Int(s.tail)].stamp == oldestStamp else { return nil }
                    let (image, oldCost) = s.release(s.tail)
                    cost.wrappingSubtract(oldCost, ordering: .relaxed)
                    count.wrappingSubtract(1, ordering: .relaxed)
                    return image
                }
                if victim != nil { evictedSoFar += 1 }  // the image is released here, outside the shard lock
            }
        }
    }
}
