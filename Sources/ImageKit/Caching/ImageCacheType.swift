/// A tier of an ``ImageCache``: where to store or look for an image, and where one was found.
public enum ImageCacheType: Sendable, Hashable, CustomStringConvertible {
    /// No tier: as a result, the image was not found.
    case none
    /// The in-memory tier.
    case memory
    /// The on-disk tier.
    case disk
    /// Both tiers.
    case all

    /// `none`, `memory`, `disk` or `all` (for an `X-Cache` header, logs, metrics labels).
    public var description: String {
        switch self {
        case .none: "none"
        case .memory: "memory"
        case .disk: "disk"
        case .all: "all"
        }
    }

    var includesMemory: Bool { self == .memory || self == .all }
    var includesDisk: Bool { self == .disk || self == .all }
    /// These tiers without the memory tier.
    var excludingMemory: ImageCacheType { includesDisk ? .disk : .none }
}
