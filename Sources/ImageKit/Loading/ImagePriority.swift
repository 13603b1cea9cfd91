/// How urgent a load or a download is: the one priority ImageKit has. When the downloader's
/// concurrency limit is reached, queued downloads start highest priority first (a download
/// shared by several callers takes the highest among them); the manager's turns to download
/// and decode, and its decode and encode threads, serve higher priorities first too.
public enum ImagePriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// After every normal and high item (the prefetcher's default).
    case low = 0
    /// The default.
    case normal = 1
    /// Before every normal and low item.
    case high = 2

    /// Lower priority sorts first.
    public static func < (a: ImagePriority, b: ImagePriority) -> Bool { a.rawValue < b.rawValue }
}
