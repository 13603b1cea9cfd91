import Foundation
import ImageKit

/// A ``ByteCacheTier`` in a dictionary, standing in for a shared store (Redis, …): it keeps
/// what it is given as it is, and records the expiry each key was set with.
final class InMemoryByteTier: ByteCacheTier {
    private let entries = Locked<[String: Data]>([:])
    private let expiries = Locked<[String: Date]>([:])

    /// The bytes under `key`.
    func raw(_ key: String) -> Data? { entries.withLock { $0[key] } }

    /// Replaces the bytes under `key` (to damage an entry).
    func setRaw(_ data: Data, forKey key: String) { entries.withLock { $0[key] = data } }

    /// The keys stored, sorted.
    var keys: [String] { entries.withLock { $0.keys.sorted() } }

    /// The expiry `key` was last set with.
    func expiry(_ key: String) -> Date? { expiries.withLock { $0[key] } }

    func data(forKey key: String) async throws -> Data? { raw(key) }

    func setData(_ data: Data, forKey key: String, expires: Date?) async throws {
        entries.withLock { $0[key] = data }
        expiries.withLock { $0[key] = expires }
    }

    func removeData(forKey key: String) async throws {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    func containsData(forKey key: String) async -> Bool { raw(key) != nil }

    func removeAllData() async throws {
        entries.withLock { $0 = [:] }
    }
}
