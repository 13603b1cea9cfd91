#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decisions an ``ImageManager`` asks its owner for (SDWebImage's `SDWebImageManagerDelegate`).
/// Called on the thread doing the load; answer quickly.
public protocol ImageManagerDelegate: Sendable {
    /// Whether to download `url` after a cache miss; `false` fails the load with
    /// ``ImageKitError/vetoed(_:)``. The default answers `true`.
    func shouldDownload(_ url: URL) -> Bool

    /// Whether `url`, which failed with `error`, goes on the failed-URL blocklist. The default
    /// blocks lasting failures (HTTP 4xx, undecodable data, TLS, …) and never transient ones
    /// (timeouts, connection and DNS failures, 5xx, cancellation).
    func shouldBlockFailedURL(_ url: URL, error: ImageKitError) -> Bool
}

extension ImageManagerDelegate {
    /// Downloads every URL.
    public func shouldDownload(_ url: URL) -> Bool { true }

    /// Blocks lasting failures only (``ImageKitError/isLastingLoadFailure``).
    public func shouldBlockFailedURL(_ url: URL, error: ImageKitError) -> Bool { error.isLastingLoadFailure }
}
