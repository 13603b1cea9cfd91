/// Counters of a ``DiskCache`` since it was opened.
public struct DiskCacheStatistics: Sendable, Hashable {
    /// Reads that found an entry.
    public var hits: Int
    /// Reads that found none (including damaged entries).
    public var misses: Int
    /// Damaged entry files found by reads (and deleted).
    public var corruptEntriesRemoved: Int
    /// Writes that failed (disk full, I/O errors).
    public var writeErrors: Int
    /// Entries removed to stay within ``DiskCacheConfiguration/maxSize``.
    public var evictions: Int
    /// Entries removed for being older than ``DiskCacheConfiguration/maxAge``.
    public var expirations: Int
    /// Bytes of entry files now, as the index knows them.
    public var totalSize: Int
    /// Entry files now, as the index knows them.
    public var totalCount: Int

    /// Counters with the given values (all zero by default).
    public init(hits: Int = 0, misses: Int = 0, corruptEntriesRemoved: Int = 0, writeErrors: Int = 0,
                evictions: Int = 0, expirations: Int = 0, totalSize: Int = 0, totalCount: Int = 0) {
        self.hits = hits
        self.misses = misses
        self.corruptEntriesRemoved = corruptEntriesRemoved
        self.writeErrors = writeErrors
        self.evictions = evictions
        self.expirations = expirations
        self.totalSize = totalSize
        self.totalCount = totalCount
    }
}
