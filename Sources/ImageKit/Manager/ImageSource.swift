/// Where a load's result came from: a cache tier, or the loader (a download, a file read, a
/// loader of your own).
public enum ImageSource: Sendable, Hashable, CustomStringConvertible {
    /// The cache's memory tier.
    case memory
    /// The cache's disk tier (for a cache of your own, any tier outside the process's memory,
    /// such as a shared one).
    case disk
    /// Not cached: loaded now.
    case loader

    /// `memory`, `disk` or `loader` (for an `X-Cache` header, logs, metrics labels).
    public var description: String {
        switch self {
        case .memory: "memory"
        case .disk: "disk"
        case .loader: "loader"
        }
    }

    /// Whether the result came from a cache tier (no load).
    public var isCached: Bool { self != .loader }

    /// The source a hit in `tier` reports: memory for the memory tier, else disk.
    init(tier: ImageCacheType) {
        self = tier.includesMemory ? .memory : .disk
    }
}
