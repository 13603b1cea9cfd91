#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An entry read from a ``DiskCache``: the image (or original bytes) with
/// what was stored alongside it.
public struct DiskCacheEntry<Value: Sendable>: Sendable {
    /// The decoded image, or the original encoded bytes.
    public var value: Value
    /// Validators and caller data stored with the entry.
    public var metadata: DiskCacheMetadata
    /// When the entry was written.
    public var created: Date
    /// When the entry was last read or written before this read (to the minute).
    public var lastAccess: Date
    /// Bytes the entry takes on disk.
    public var storedSize: Int

    /// Whether ``DiskCacheMetadata/expires`` has passed.
    public var isExpired: Bool {
        metadata.expires.map { $0 <= Date() } ?? false
    }
}
