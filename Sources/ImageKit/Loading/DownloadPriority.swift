/// How urgent a download is. When the concurrency limit is reached, queued
/// downloads start highest priority first; a download shared by several
/// callers takes the highest priority among them.
public enum DownloadPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Start after every normal and high download.
    case low = 0
    /// The default.
    case normal = 1
    /// Start before every normal and low download.
    case high = 2

    /// Lower priority sorts first.
    public static func < (a: DownloadPriority, b: DownloadPriority) -> Bool { a.rawValue < b.rawValue }
}
