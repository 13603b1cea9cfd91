import ImageKit

/// The calls the test caches received, in order, across caches ("upper.entry k", …).
final class CacheCallLog: Sendable {
    private let calls = Locked<[String]>([])

    func record(_ call: String) {
        calls.withLock { $0.append(call) }
    }

    /// Every call so far.
    var all: [String] { calls.withLock { $0 } }

    /// The calls so far of `operation` ("store", "entry", …), whichever cache received them.
    func operations(_ operation: String) -> [String] {
        all.filter { $0.split(separator: " ").first?.hasSuffix("." + operation) ?? false }
    }

    func reset() {
        calls.withLock { $0 = [] }
    }
}
