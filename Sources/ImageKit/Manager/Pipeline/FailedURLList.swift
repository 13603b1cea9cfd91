/// URLs that failed for a lasting reason, each with its failure until its entry expires.
final class FailedURLList: Sendable {
    private struct Entry: Sendable {
        var expiry: UInt64
        var error: ImageKitError
    }

    private let entries = Locked<[String: Entry]>([:])
    private let timeToLive: UInt64

    /// Entries prune expired ones once there are this many.
    private static let pruneThreshold = 1024

    /// A list whose entries last `timeToLive`.
    init(timeToLive: Duration) {
        self.timeToLive = MonotonicClock.nanoseconds(timeToLive)
    }

    /// The failure `url` is listed for, unless its entry expired (an expired entry is dropped).
    func failure(_ url: String) -> ImageKitError? {
        entries.withLock { e in
            guard !e.isEmpty, let entry = e[url] else { return nil }
            if MonotonicClock.now() < entry.expiry { return entry.error }
            e[url] = nil
            return nil
        }
    }

    /// Whether `url` is listed and its entry has not expired.
    func contains(_ url: String) -> Bool {
        failure(url) != nil
    }

    /// Lists `url` with `error` for the time to live from now.
    func insert(_ url: String, error: ImageKitError) {
        let now = MonotonicClock.now()
        let (expiry, overflow) = now.addingReportingOverflow(timeToLive)
        entries.withLock { e in
            if e.count >= Self.pruneThreshold { e = e.filter { $0.value.expiry > now } }
            e[url] = Entry(expiry: overflow ? .max : expiry, error: error)
        }
    }

    /// Removes `url`.
    func remove(_ url: String) {
        entries.withLock { $0[url] = nil }
    }

    /// Removes every entry.
    func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// Entries held (expired ones included until looked up).
    var count: Int { entries.withLock { $0.count } }
}
