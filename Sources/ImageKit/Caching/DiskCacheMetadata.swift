#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HTTP validators and caller data stored with a ``DiskCache`` entry.
public struct DiskCacheMetadata: Sendable, Hashable {
    /// The response's `ETag`, sent back as `If-None-Match` when revalidating (at most 8 KiB).
    public var etag: String?
    /// The response's `Last-Modified`, sent back as `If-Modified-Since` (at most 1 KiB).
    public var lastModified: String?
    /// When the entry stops being fresh (e.g. from `Cache-Control: max-age`);
    /// ``ImageCache`` treats an expired entry as a miss. `nil` = never.
    public var expires: Date?
    /// Anything else the caller wants back with the entry (at most 1 MiB).
    public var userData: Data?

    /// Metadata with the given values (all absent by default).
    public init(etag: String? = nil, lastModified: String? = nil, expires: Date? = nil, userData: Data? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.expires = expires
        self.userData = userData
    }
}
