/// Tiers of a cache: where a load looks and what it stores in, and which tier an entry was
/// found in.
///
/// An option set: ``memory``, ``disk``, ``all`` (both), or `[]` for no tier. There is no member
/// named `none` on purpose: `context.storeCacheType = []` says "store nothing" in so many
/// characters, while a `none` would have met `Optional.none` (the "use the default" value) and
/// meant the opposite. Where a result came from is an ``ImageSource``, not a tier.
public struct ImageCacheType: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits.
    public let rawValue: UInt8

    /// Tiers from their bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The in-memory tier.
    public static let memory = ImageCacheType(rawValue: 1 << 0)
    /// The on-disk tier (for a cache of your own, whatever it keeps outside the process's memory).
    public static let disk = ImageCacheType(rawValue: 1 << 1)
    /// Both tiers.
    public static let all: ImageCacheType = [.memory, .disk]

    /// `memory`, `disk`, `all` or `none` (for `[]`), for logs and metrics labels.
    public var description: String {
        switch self {
        case .memory: "memory"
        case .disk: "disk"
        case []: "none"
        default: "all"
        }
    }

    var includesMemory: Bool { contains(.memory) }
    var includesDisk: Bool { contains(.disk) }
    /// These tiers without the memory tier.
    var excludingMemory: ImageCacheType { subtracting(.memory) }
}
