/// Limits of a ``MemoryCache``.
public struct MemoryCacheConfiguration: Sendable, Hashable {
    /// Most bytes of pixels held (``Image/cost`` summed). Default: 15 % of
    /// ``availableMemory(cgroupRoot:)``.
    public var costLimit: Int
    /// Most images held. Default: no limit.
    public var countLimit: Int
    /// How long an entry lives after it is stored, unless `set` gives its own;
    /// `nil` (the default) keeps entries until evicted.
    public var ttl: Duration?
    /// Independently locked parts of the cache (more shards, less contention). Default 8.
    public var shardCount: Int

    /// A configuration; every argument has the default described on its property.
    public init(costLimit: Int? = nil, countLimit: Int = .max, ttl: Duration? = nil, shardCount: Int = 8) {
        self.costLimit = costLimit ?? MemoryCacheConfiguration.defaultCostLimit
        self.countLimit = countLimit
        self.ttl = ttl
        self.shardCount = shardCount
    }

    /// 15 % of the memory this process may use.
    public static var defaultCostLimit: Int {
        availableMemory() / 100 * 15
    }

    /// The memory this process may use: physical memory, or less when a cgroup
    /// (container) limit is set under `cgroupRoot` — v2 `memory.max` or v1
    /// `memory/memory.limit_in_bytes`.
    public static func availableMemory(cgroupRoot: String = "/sys/fs/cgroup") -> Int {
        SystemMemory.available(cgroupRoot: cgroupRoot)
    }
}
