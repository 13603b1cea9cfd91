/// Limits and policies of a ``DiskCache``.
public struct DiskCacheConfiguration: Sendable, Hashable {
    /// Most bytes of entry files; past it the least recently used entries are
    /// removed down to `maxSize * trimRatio`. Default 1 GiB.
    public var maxSize: Int
    /// Entries not read or written for this long are removed by sweeps and
    /// ``DiskCache/removeExpired()``; `nil` for no age limit. Default 7 days.
    public var maxAge: Duration?
    /// The low-water mark of a size trim, as a fraction of `maxSize`. Default 0.8.
    public var trimRatio: Double
    /// How often a background sweep rescans the directory (picking up other
    /// processes' changes), removes expired entries and trims; `nil` for no
    /// periodic sweep. Default 5 minutes.
    public var sweepInterval: Duration?
    /// When writes sync to stable storage. Default ``DiskCacheSync/none``.
    public var sync: DiskCacheSync
    /// File size against decode speed for bitmaps. Default ``DiskCacheCompression/balanced``.
    public var compression: DiskCacheCompression
    /// Threads doing the cache's disk I/O, compression and hashing. Default 2.
    public var ioThreads: Int
    /// Threads decoding one large entry (4 MiB of pixels or more) in parallel: the
    /// I/O thread reading it and up to `decodeThreads - 1` threads the cache keeps
    /// for that (shared by all reads; a read never waits for them to be free).
    /// 1 decodes on the I/O thread alone. Default 2.
    public var decodeThreads: Int
    /// Where the pixels of images read back come from (and return to once freed),
    /// sparing large hits the kernel's page faults; `nil` for fresh memory.
    /// Default ``BufferPool/shared``, the pool ``ImageDecoder`` uses.
    public var bufferPool: BufferPool?

    /// A configuration; every argument has the default described on its property.
    public init(maxSize: Int = 1 << 30, maxAge: Duration? = .seconds(7 * 24 * 3600), trimRatio: Double = 0.8,
                sweepInterval: Duration? = .seconds(300), sync: DiskCacheSync = .none,
                compression: DiskCacheCompression = .balanced, ioThreads: Int = 2, decodeThreads: Int = 2,
                bufferPool: BufferPool? = .shared) {
        self.maxSize = maxSize
        self.maxAge = maxAge
        self.trimRatio = trimRatio
        self.sweepInterval = sweepInterval
        self.sync = sync
        self.compression = compression
        self.ioThreads = ioThreads
        self.decodeThreads = decodeThreads
        self.bufferPool = bufferPool
    }
}
