/// URLs that failed for a lasting reason, each with its failure until its entry expires.
///
/// Bounded, since the URLs come from clients: at most `maxCount` entries and `maxBytes`
/// bytes. An entry is keyed by a 128-bit hash of its URL, seeded per process (so nobody can
/// aim a collision at another URL), not by the URL string: a 60 KB URL costs what a short one
/// does, and the failure's message (which shows its URL cut short, see ``MessageURL``) is
/// what the byte bound counts. Past either bound the oldest entries go first.
///
/// Entries leave in the order they came, which under one time to live is also the order they
/// expire: an insert drops the expired entries at the front and then the oldest past the
/// bounds, so every operation is O(1) amortised and none scans the list under its lock.
final class FailedURLList: Sendable {
    /// An entry's key: a URL's hash.
    private struct Key: Hashable, Sendable {
        let high: Int
        let low: Int

        init(_ url: String) {
            var h = Hasher()
            h.combine(0 as UInt8)
            h.combine(url)
            var l = Hasher()
            l.combine(1 as UInt8)
            l.combine(url)
            high = h.finalize()
            low = l.finalize()
        }
    }

    private struct Entry: Sendable {
        var expiry: UInt64
        var error: ImageKitError
        var serial: UInt64 // which item of `order` stands for this entry
        var bytes: Int
    }

    private struct State: Sendable {
        var entries: [Key: Entry] = [:]
        /// Keys in insertion order from `head`; an item whose serial is not its entry's is stale
        /// (the URL was listed again, removed or expired) and skipped.
        var order: [(key: Key, serial: UInt64)] = []
        var head = 0
        var nextSerial: UInt64 = 0
        var bytes = 0

        /// Drops stale items at the front; the oldest live entry's key, or nil when none.
        mutating func front() -> Key? {
            while head < order.count {
                let item = order[head]
                if entries[item.key]?.serial == item.serial { return item.key }
                head += 1
            }
            return nil
        }

        mutating func remove(_ key: Key) {
            if let old = entries.removeValue(forKey: key) { bytes -= old.bytes }
        }

        /// Gives back the room of skipped items once they are most of `order`.
        mutating func compact() {
            if head > 64 && head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
            if order.count > 2 * entries.count + 64 {
                let live = order[head...].filter { entries[$0.key]?.serial == $0.serial }
                order = Array(live)
                head = 0
            }
        }
    }

    /// What an entry costs beyond its message: the key, the dictionary slot and the order item.
    static let entryOverhead = 96

    private let state = Locked(State())
    private let timeToLive: UInt64
    private let maxCount: Int
    private let maxBytes: Int

    /// A list whose entries last `timeToLive`, holding at most `maxCount` entries and `maxBytes`
    /// bytes.
    init(timeToLive: Duration, maxCount: Int = ImageManagerConfiguration.defaultFailedURLMaxCount,
         maxBytes: Int = ImageManagerConfiguration.defaultFailedURLMaxBytes) {
        self.timeToLive = MonotonicClock.nanoseconds(timeToLive)
        self.maxCount = max(0, maxCount)
        self.maxBytes = max(0, maxBytes)
    }

    /// The failure `url` is listed for, unless its entry expired (an expired entry is dropped).
    func failure(_ url: String) -> ImageKitError? {
        let key = Key(url)
        return state.withLock { s in
            guard let entry = s.entries[key] else { return nil }
            if MonotonicClock.now() < entry.expiry { return entry.error }
            s.remove(key)
            return nil
        }
    }

    /// Whether `url` is listed and its entry has not expired.
    func contains(_ url: String) -> Bool {
        failure(url) != nil
    }

    /// Lists `url` with `error` for the time to live from now, dropping the oldest entries
    /// past the bounds (a failure whose message alone is past the byte bound is not listed).
    func insert(_ url: String, error: ImageKitError) {
        let key = Key(url)
        let bytes = Self.entryOverhead + error.message.utf8.count
        let now = MonotonicClock.now()
        let (expiry, overflow) = now.addingReportingOverflow(timeToLive)
        state.withLock { s in
            s.remove(key)
            while let oldest = s.front(), let entry = s.entries[oldest], entry.expiry <= now { s.remove(oldest) }
            guard maxCount > 0, bytes <= maxBytes else { return s.compact() }
            while s.entries.count >= maxCount || s.bytes + bytes > maxBytes, let oldest = s.front() { s.remove(oldest) }
            s.entries[key] = Entry(expiry: overflow ? .max : expiry, error: error, serial: s.nextSerial, bytes: bytes)
            s.order.append((key, s.nextSerial))
            s.nextSerial += 1
            s.bytes += bytes
            s.compact()
        }
    }

    /// Removes `url`.
    func remove(_ url: String) {
        let key = Key(url)
        state.withLock { $0.remove(key) }
    }

    /// Removes every entry.
    func removeAll() {
        state.withLock { $0 = State() }
    }

    /// Entries held (expired ones included until looked up or pushed out).
    var count: Int { state.withLock { $0.entries.count } }

    /// The bytes the entries held count for (see ``init(timeToLive:maxCount:maxBytes:)``).
    var bytes: Int { state.withLock { $0.bytes } }
}
