/// How an ``ImageCachesManager`` runs one kind of operation over its caches (SDWebImage's
/// `SDImageCachesManagerOperationPolicy`). The caches are ordered from the highest priority
/// (first) to the lowest (last).
public enum ImageCacheOperationPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Every cache, one after the other from the highest: a query or a contains check stops at
    /// the first cache that has the entry; a store, remove or clear goes to every cache.
    case serial
    /// Every cache at once: a query answers with the first hit to arrive, a contains check with
    /// the first yes, without waiting for the other caches (their calls are cancelled and their
    /// answers dropped); a store, remove or clear goes to every cache and returns when all are
    /// done.
    case concurrent
    /// The highest-priority cache (the first) only.
    case highestOnly
    /// The lowest-priority cache (the last) only.
    case lowestOnly

    /// `serial`, `concurrent`, `highestOnly` or `lowestOnly`.
    public var description: String {
        switch self {
        case .serial: "serial"
        case .concurrent: "concurrent"
        case .highestOnly: "highestOnly"
        case .lowestOnly: "lowestOnly"
        }
    }

    /// The positions of the caches an operation under this policy reaches, among `count`.
    func positions(among count: Int) -> Range<Int> {
        switch self {
        case .serial, .concurrent: 0..<count
        case .highestOnly: 0..<min(1, count)
        case .lowestOnly: max(0, count - 1)..<count
        }
    }
}
