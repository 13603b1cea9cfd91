#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A store of bytes by key — in process, on disk or remote (Redis, memcached, an object
/// store) — that ``ByteTierImageCache`` turns into an ``ImageCaching`` cache of encoded
/// variants and original bytes. A new tier implements these five calls and nothing more.
///
/// The bytes a tier is given already carry the entry's metadata (validators, expiry); it keeps
/// them as they are. A tier should answer within its own timeout: a slow or dead node costs a
/// miss, never a failed load.
public protocol ByteCacheTier: Sendable {
    /// The bytes stored under `key`, or nil.
    func data(forKey key: String) async throws -> Data?

    /// Stores `data` under `key`, replacing what was there. `expires`, when set, is when the
    /// entry stops being useful: a tier may drop it then (a Redis `SET … PXAT`); keeping it
    /// longer is harmless, since the reader checks.
    func setData(_ data: Data, forKey key: String, expires: Date?) async throws

    /// Removes what is stored under `key` (nothing when there is nothing).
    func removeData(forKey key: String) async throws

    /// Whether something is stored under `key`.
    func containsData(forKey key: String) async -> Bool

    /// Removes everything this tier stores.
    func removeAllData() async throws
}
