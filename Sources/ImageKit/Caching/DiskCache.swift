import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decoded images (and original encoded bytes) on disk, one file per key.
///
/// A bitmap entry holds the premultiplied pixels, filtered and LZ4-compressed
/// by the C core (format in `ic_store.h`), so a hit costs a read and a
/// decompress, not a decode. Files are written to a temporary name and
/// renamed into place, and every read checks checksums, so a reader never sees
/// a half-written or damaged entry: those read as misses and are deleted.
///
/// The cache keeps an index of its files (one scan at open, then kept
/// current), so size accounting and eviction never list the directory on the
/// request path. Past ``DiskCacheConfiguration/maxSize`` the least recently
/// used entries are removed down to a low-water mark; a periodic sweep also
/// removes entries older than ``DiskCacheConfiguration/maxAge`` and picks up
/// changes other processes sharing the directory made.
///
/// All disk I/O, compression and checksumming run on the cache's own threads,
/// never on the Swift cooperative pool.
public final class DiskCache: Sendable {
    /// The directory holding the entries.
    public let directory: URL
    /// The limits and policies in force.
    public let configuration: DiskCacheConfiguration

    private let path: String
    private let pool: WorkerPool
    /// Decodes the parts of a large entry alongside the I/O thread reading it; `nil` when
    /// ``DiskCacheConfiguration/decodeThreads`` is 1.
    private let partRunner: PartRunner?
    /// The part runner's threads.
    private let partPool: WorkerPool?
    private let state = Locked(State())
    private let sweeper = Locked<Task<Void, Never>?>(nil)

    /// Temporary files older than this were left by crashed writers.
    private static let staleTemporaryFileMs: Int64 = 10 * 60 * 1000

    private struct State: Sendable {
        var index = DiskIndex()
        /// The first scan (and the trim after it) is done.
        var loaded = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var stats = DiskCacheStatistics()
    }

    /// Opens (creating if needed) the cache in `directory` and starts indexing it in the background.
    ///
    /// - Throws: ``ImageKitError/io(_:)`` when the directory cannot be created.
    public init(directory: URL, configuration: DiskCacheConfiguration = DiskCacheConfiguration()) throws(ImageKitError) {
        self.directory = directory
        self.configuration = configuration
        path = directory.path
        pool = WorkerPool(name: "imagekit-disk", maxThreads: max(1, configuration.ioThreads))
        partPool = configuration.decodeThreads > 1
            ? WorkerPool(name: "imagekit-parts", maxThreads: configuration.decodeThreads - 1) : nil
        partRunner = partPool.map { PartRunner(pool: $0) }
        var err = ic_error()
        let st = ic_store_create_directory(path, &err)
        guard st == IC_OK else { throw ImageKitError(status: st, error: err) }
        state.withLock { $0.index.beginScan() }
        pool.submit(priority: .high) { [self] in
            rescan()
            trim()
            let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.loaded = true
                defer { s.waiters = [] }
                return s.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        if let interval = configuration.sweepInterval {
            let task = Task.detached(priority: .background) { [weak self] in
                while !Task.isCancelled {
                    do { try await Task.sleep(for: interval) } catch { return }
                    guard let cache = self else { return }
                    await cache.sweep()
                }
            }
            sweeper.withLock { $0 = task }
        }
    }

    deinit {
        sweeper.withLock { $0?.cancel() }
    }

    /// Stops the cache: the periodic sweep ends, the reads and writes already asked for
    /// complete, and the disk threads exit; later calls fail with ``ImageKitError/shutDown(_:)``
    /// (reads find nothing). Returns when all of that is done.
    public func shutdown() async {
        let sweep = sweeper.withLock { $0 }
        sweep?.cancel()
        await sweep?.value
        await pool.shutdown()
        await partPool?.shutdown()
    }

    // MARK: - Bitmaps

    /// Writes `image` for `key`, replacing any earlier bitmap for it.
    ///
    /// - Throws: ``ImageKitError/noSpace(_:)`` when the disk is full (the cache
    ///   keeps working and writes succeed again once there is room),
    ///   ``ImageKitError/io(_:)`` for other file-system failures.
    public func store(_ image: Image, forKey key: String, metadata: DiskCacheMetadata = DiskCacheMetadata())
        async throws(ImageKitError) {
        try await pool.runTyped { [self] in
            try withExtendedLifetime(image) {
                try write(key: key, metadata: metadata, pixelBytes: image.cost) { entry in
                    entry.kind = IC_STORE_KIND_BITMAP
                    entry.image = UnsafePointer(image.raw)
                }
            }
        }
    }

    /// The bitmap stored for `key` with its metadata, expired or not; `nil` if
    /// there is none (or it was damaged, and is now deleted).
    public func entry(forKey key: String) async throws(ImageKitError) -> DiskCacheEntry<Image>? {
        try await entry(forKey: key, named: nil)
    }

    /// ``entry(forKey:)`` with the entry's file name already worked out (``heldName(_:data:)``),
    /// or nil to work it out on the pool.
    func entry(forKey key: String, named name: String?) async throws(ImageKitError) -> DiskCacheEntry<Image>? {
        try await readEntry(IC_STORE_KIND_BITMAP, key: key, name: name) { record in
            guard let raw = record.image else { return nil }
            record.image = nil
            return Image(taking: raw)
        }
    }

    /// The bitmap stored for `key`, or `nil` if there is none or it has expired.
    public func image(forKey key: String) async throws(ImageKitError) -> Image? {
        guard let entry = try await entry(forKey: key), !entry.isExpired else { return nil }
        return entry.value
    }

    /// Whether the index knows a bitmap for `key` (no disk access).
    public func contains(_ key: String) async -> Bool {
        await contains(key, data: false)
    }

    /// Whether the index knows a bitmap (or, with `data`, bytes) for `key` (no disk access; the
    /// entry's name is a hash of the key, worked out on the calling thread).
    func contains(_ key: String, data: Bool) async -> Bool {
        await waitUntilLoaded()
        let name = Self.entryName(data ? IC_STORE_KIND_DATA : IC_STORE_KIND_BITMAP, key)
        return state.withLock { $0.index.entries[name] != nil }
    }

    /// False when a read of the bitmap (or, with `data`, the bytes) for `key` would surely miss:
    /// the index is loaded and knows no such entry. Answers on the calling thread from the
    /// index alone, so a cold load can skip a read on the cache's threads; entries written by
    /// other processes since the last sweep are not known yet.
    func mayHold(_ key: String, data: Bool = false) -> Bool {
        heldName(key, data: data) != nil
    }

    /// The file name of the bitmap (or, with `data`, the bytes) for `key`, unless a read would
    /// surely miss (see ``mayHold(_:data:)``): a read given it does not work it out again.
    func heldName(_ key: String, data: Bool = false) -> String? {
        let name = Self.entryName(data ? IC_STORE_KIND_DATA : IC_STORE_KIND_BITMAP, key)
        return state.withLock { !$0.loaded || $0.index.entries[name] != nil } ? name : nil
    }

    /// The I/O threads as a task executor: a task running there reads entries in place.
    var readExecutor: any TaskExecutor { pool }

    // MARK: - Original bytes

    /// Writes `data` (typically the original encoded file) for `key`,
    /// replacing any earlier bytes for it. Bitmaps and bytes for one key are
    /// separate entries.
    public func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata = DiskCacheMetadata())
        async throws(ImageKitError) {
        try await pool.runTyped { [self] in
            try data.withUnsafeBytes { bytes in
                try write(key: key, metadata: metadata, pixelBytes: 0) { entry in
                    entry.kind = IC_STORE_KIND_DATA
                    entry.data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    entry.data_size = bytes.count
                }
            }
        }
    }

    /// The bytes stored for `key` with their metadata, expired or not; `nil` if there are none.
    public func dataEntry(forKey key: String) async throws(ImageKitError) -> DiskCacheEntry<Data>? {
        try await dataEntry(forKey: key, named: nil)
    }

    /// ``dataEntry(forKey:)`` with the entry's file name already worked out (``heldName(_:data:)``),
    /// or nil to work it out on the pool.
    func dataEntry(forKey key: String, named name: String?) async throws(ImageKitError) -> DiskCacheEntry<Data>? {
        try await readEntry(IC_STORE_KIND_DATA, key: key, name: name) { record in
            guard let bytes = record.data else { return nil }
            record.data = nil
            return Data(bytesNoCopy: bytes, count: record.data_size, deallocator: .free)
        }
    }

    /// The bytes stored for `key`, or `nil` if there are none or they have expired.
    public func data(forKey key: String) async throws(ImageKitError) -> Data? {
        guard let entry = try await dataEntry(forKey: key), !entry.isExpired else { return nil }
        return entry.value
    }

    // MARK: - Removal and limits

    /// Deletes the bitmap and the bytes stored for `key`.
    public func remove(forKey key: String) async throws(ImageKitError) {
        try await pool.runTyped { [self] in
            for kind in [IC_STORE_KIND_BITMAP, IC_STORE_KIND_DATA] {
                let name = Self.entryName(kind, key)
                state.withLock { _ = $0.index.remove(name) }
                var err = ic_error()
                let st = ic_store_remove(path, name, &err)
                guard st == IC_OK || st == IC_ERR_NOT_FOUND else { throw ImageKitError(status: st, error: err) }
            }
        }
    }

    /// Deletes every entry.
    public func removeAll() async throws(ImageKitError) {
        try await pool.runTyped { [self] in
            var err = ic_error()
            let st = ic_store_clear(path, nil, &err)
            state.withLock { $0.index.removeAll() }
            guard st == IC_OK else { throw ImageKitError(status: st, error: err) }
        }
    }

    /// Deletes the entries not read or written within ``DiskCacheConfiguration/maxAge``.
    public func removeExpired() async {
        await waitUntilLoaded()
        _ = try? await pool.run(priority: .low) { [self] in removeOld() }
    }

    /// Bytes of entry files, from the index.
    public var totalSize: Int {
        get async {
            await waitUntilLoaded()
            return state.withLock { $0.index.totalSize }
        }
    }

    /// Number of entry files, from the index.
    public var totalCount: Int {
        get async {
            await waitUntilLoaded()
            return state.withLock { $0.index.count }
        }
    }

    /// Hits, misses, removals and current totals.
    public var statistics: DiskCacheStatistics {
        get async {
            await waitUntilLoaded()
            return state.withLock { s in
                var stats = s.stats
                stats.totalSize = s.index.totalSize
                stats.totalCount = s.index.count
                return stats
            }
        }
    }

    /// Runs a sweep now: rescans the directory, removes expired entries and trims to the size limit.
    public func sweep() async {
        await waitUntilLoaded()
        _ = try? await pool.run(priority: .low) { [self] in
            state.withLock { $0.index.beginScan() }
            rescan()
            removeOld()
            trim()
        }
    }

    // MARK: - Internals (run on the pool's threads)

    private func waitUntilLoaded() async {
        if state.withLock({ $0.loaded }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.loaded { return true }
                s.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func nowMs() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    private static func date(ms: Int64) -> Date {
        Date(timeIntervalSince1970: Double(ms) / 1000)
    }

    /// A C fixed-size name field as a String.
    private static func string<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private static func entryName(_ kind: ic_store_kind, _ key: String) -> String {
        var key = key
        var name = ic_store_written().name
        key.withUTF8 { k in
            withUnsafeMutableBytes(of: &name) { out in
                ic_store_entry_name(kind, UnsafeRawPointer(k.baseAddress)?.assumingMemoryBound(to: CChar.self),
                                    k.count, out.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
        }
        return string(name)
    }

    /// Calls `body` with the C view of `metadata`, valid during the call.
    private static func withCMeta<R>(_ metadata: DiskCacheMetadata, _ body: (ic_store_meta) throws -> R) rethrows -> R {
        var etag = metadata.etag ?? ""
        var lastModified = metadata.lastModified ?? ""
        let user = metadata.userData ?? Data()
        return try etag.withUTF8 { e in
            try lastModified.withUTF8 { l in
                try user.withUnsafeBytes { u in
                    var meta = ic_store_meta()
                    meta.expires_ms = metadata.expires.map { max(1, Int64(($0.timeIntervalSince1970 * 1000).rounded(.down))) } ?? 0
                    meta.etag = UnsafeRawPointer(e.baseAddress)?.assumingMemoryBound(to: CChar.self)
                    meta.etag_length = e.count
                    meta.last_modified = UnsafeRawPointer(l.baseAddress)?.assumingMemoryBound(to: CChar.self)
                    meta.last_modified_length = l.count
                    meta.user_data = u.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    meta.user_data_length = u.count
                    return try body(meta)
                }
            }
        }
    }

    /// Reads an entry of `kind` (file `name`, or nil to work it out) on the pool; `take` moves the
    /// value out of the record.
    private func readEntry<Value: Sendable>(_ kind: ic_store_kind, key: String, name: String?,
                                            take: @escaping @Sendable (inout ic_store_record) -> Value?)
        async throws(ImageKitError) -> DiskCacheEntry<Value>? {
        try await pool.runTyped(priority: .high) { [self] in
            guard var record = try read(kind, key: key, name: name) else { return nil }
            defer { ic_store_record_free(&record) }
            guard let value = take(&record) else { return nil }
            func text(_ p: UnsafePointer<CChar>?, _ n: Int) -> String? {
                p.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: n), as: UTF8.self) }
            }
            let m = record.meta
            let metadata = DiskCacheMetadata(
                etag: text(m.etag, m.etag_length),
                lastModified: text(m.last_modified, m.last_modified_length),
                expires: m.expires_ms != 0 ? Self.date(ms: m.expires_ms) : nil,
                userData: m.user_data.map { Data(bytes: $0, count: m.user_data_length) })
            return DiskCacheEntry(value: value, metadata: metadata, created: Self.date(ms: m.created_ms),
                                  lastAccess: Self.date(ms: record.accessed_ms), storedSize: Int(record.stored_size))
        }
    }

    /// Bitmaps from this size up are "large" for ``DiskCacheCompression/balanced``; it is also
    /// where the C store starts splitting a read into parts for several threads.
    private static let largeBitmapBytes = Int(IC_STORE_PARALLEL_MIN_BYTES)

    /// Writes one entry (kind and payload filled in by `fill`; `pixelBytes` 0 for data) and
    /// records it in the index.
    private func write(key: String, metadata: DiskCacheMetadata, pixelBytes: Int,
                       fill: (inout ic_store_entry) -> Void) throws {
        var options = ic_store_write_options()
        ic_store_write_options_init(&options)
        switch configuration.sync {
        case .none: options.sync = IC_STORE_SYNC_NONE
        case .file: options.sync = IC_STORE_SYNC_FILE
        case .full: options.sync = IC_STORE_SYNC_FULL
        }
        switch configuration.compression {
        case .smallest: options.filter = Int32(IC_STORE_FILTER_RGB_UP.rawValue)
        case .balanced: if pixelBytes >= Self.largeBitmapBytes { options.min_lz4_saving_percent = 50 }
        case .fastest: options.min_lz4_saving_percent = 50
        }
        var written = ic_store_written()
        var err = ic_error()
        var key = key
        let st = key.withUTF8 { k in
            Self.withCMeta(metadata) { meta in
                var entry = ic_store_entry()
                entry.key = UnsafeRawPointer(k.baseAddress)?.assumingMemoryBound(to: CChar.self)
                entry.key_length = k.count
                entry.meta = meta
                fill(&entry)
                return ic_store_write(path, &entry, &options, &written, &err)
            }
        }
        guard st == IC_OK else {
            state.withLock { $0.stats.writeErrors += 1 }
            throw ImageKitError(status: st, error: err)
        }
        let name = Self.string(written.name)
        let overLimit = state.withLock { s -> Bool in
            if written.directory_created != 0 { s.index.removeAll() }  // deleted underneath: nothing else is left
            s.index.record(name, size: Int(written.size), accessed: Self.nowMs())
            return s.loaded && s.index.totalSize > configuration.maxSize
        }
        // The write that crosses the limit trims (down to the low-water mark, so rarely).
        if overLimit { trim() }
    }

    /// Reads one entry (file `name`, or nil to work it out); `nil` for a miss (absent, another key,
    /// or damaged and now deleted).
    private func read(_ kind: ic_store_kind, key original: String, name: String?) throws -> ic_store_record? {
        let name = name ?? Self.entryName(kind, original)
        var options = ic_store_read_options()
        ic_store_read_options_init(&options)
        partRunner?.configure(&options, parts: configuration.decodeThreads)
        options.pool = configuration.bufferPool?.raw
        var record = ic_store_record()
        var err = ic_error()
        var key = original
        let st = key.withUTF8 { k in
            ic_store_read(path, kind, UnsafeRawPointer(k.baseAddress)?.assumingMemoryBound(to: CChar.self), k.count,
                          &options, &record, &err)
        }
        switch st {
        case IC_OK:
            state.withLock { s in
                s.index.record(name, size: Int(record.stored_size), accessed: Self.nowMs())
                s.stats.hits += 1
            }
            return record
        case IC_ERR_NOT_FOUND, IC_ERR_CORRUPT:
            state.withLock { s in
                s.index.remove(name)
                s.stats.misses += 1
                if st == IC_ERR_CORRUPT { s.stats.corruptEntriesRemoved += 1 }
            }
            return nil
        default:
            throw ImageKitError(status: st, error: err)
        }
    }

    /// Lists the directory and reconciles the index with it.
    private func rescan() {
        var listing = ic_store_listing()
        var err = ic_error()
        let st = ic_store_scan(path, Self.staleTemporaryFileMs, &listing, &err)
        var found: [String: DiskIndex.Entry] = [:]
        if st == IC_OK, let files = listing.files {
            found.reserveCapacity(listing.count)
            for i in 0..<listing.count {
                found[Self.string(files[i].name)] = DiskIndex.Entry(size: Int(files[i].size),
                                                                    accessed: files[i].modified_ms)
            }
        }
        ic_store_listing_free(&listing)
        // A failed listing keeps what the index knew.
        state.withLock { s in s.index.finishScan(st == IC_OK ? found : s.index.entries) }
    }

    /// Removes least recently used entries down to the low-water mark once over the size limit.
    private func trim() {
        let victims = state.withLock { s -> [String] in
            guard s.index.totalSize > configuration.maxSize else { return [] }
            let lowWater = Int(Double(configuration.maxSize) * min(max(configuration.trimRatio, 0), 1))
            let names = s.index.takeLeastRecentlyUsed(downTo: lowWater)
            s.stats.evictions += names.count
            return names
        }
        for name in victims { _ = ic_store_remove(path, name, nil) }
    }

    /// Removes entries last accessed longer than maxAge ago.
    private func removeOld() {
        guard let maxAge = configuration.maxAge else { return }
        let ageMs = Int64(clamping: MonotonicClock.nanoseconds(maxAge) / 1_000_000)
        let cutoff = Self.nowMs() - ageMs
        let old = state.withLock { s -> [String] in
            let names = s.index.takeAccessed(before: cutoff)
            s.stats.expirations += names.count
            return names
        }
        for name in old { _ = ic_store_remove(path, name, nil) }
    }
}
