/// URLs that failed for a lasting reason, each until its entry expires.
final class FailedURLList: Sendable {
    private let entries = Locked<[String: UInt64]>([:])
    private let timeToLive: UInt64

    /// Entries prune expired ones once there are this many.
    private static let pruneThreshold = 1024

    /// A list whose entries last `timeToLive`.
    init(timeToLive: Duration) {
        self.timeToLive = MonotonicClock.nanoseconds(timeToLive)
    }

    /// Whether `url` is listed and its entry has not expired (an expired entry is dropped).
    func contains(_ url: String) -> Bool {
        entries.withLock { e in
            guard !e.isEmpty, let expiry = e[url] else { return false }
            if MonotonicClock.now() < expiry { return true }
            e[url] = nil
            return false
        }
    }

    /// Lists `url` for the time to live from now.
    func insert(_ url: String) {
        let now = MonotonicClock.now()
        let (expiry, overflow) = now.addingReportingOverflow(timeToLive)
        entries.withLock { e in
            if e.count >= Self.pruneThreshold { e = e.filter { $0.value > now } }
            e[url] = overflow ? .max : expiry
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
