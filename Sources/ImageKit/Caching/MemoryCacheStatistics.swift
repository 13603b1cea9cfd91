/// Counters of a ``MemoryCache`` since it was created.
public struct MemoryCacheStatistics: Sendable, Hashable {
    /// Lookups that found a live image.
    public var hits: Int
    /// Lookups that found nothing (or an expired image).
    public var misses: Int
    /// Images removed to stay within the limits or by `trim`.
    public var evictions: Int
    /// Images removed because their time to live had passed.
    public var expirations: Int
    /// Bytes of pixels held now.
    public var totalCost: Int
    /// Images held now.
    public var totalCount: Int

    /// Counters with the given values (all zero by default).
    public init(hits: Int = 0, misses: Int = 0, evictions: Int = 0, expirations: Int = 0,
                totalCost: Int = 0, totalCount: Int = 0) {
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
        self.expirations = expirations
        self.totalCost = totalCost
        self.totalCount = totalCount
    }
}
