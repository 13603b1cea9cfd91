#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The failed-URL blocklist: URLs whose loads failed in a lasting way fail at once, without
/// reaching the loader, until their entry expires.
extension ImageManager {
    /// Whether `url` is on the failed-URL blocklist now.
    public func isBlocklisted(_ url: URL) -> Bool {
        failedURLs.contains(url.absoluteString)
    }

    /// Takes `url` off the failed-URL blocklist.
    public func removeFailedURL(_ url: URL) {
        failedURLs.remove(url.absoluteString)
    }

    /// Empties the failed-URL blocklist.
    public func removeAllFailedURLs() {
        failedURLs.removeAll()
    }

    /// Puts `url` on the blocklist when `loader` (the one that failed) allows it and, for an
    /// HTTP status, the status is one of the configuration's — or when the delegate says so.
    func recordFailure(_ url: URL, _ error: ImageKitError, loader: any ImageLoading) {
        guard configuration.failedURLTimeToLive > .zero else { return }
        var lasting = loader.shouldBlockFailedURL(url, error: error)
        if lasting, let status = error.httpStatus {
            lasting = configuration.failedURLStatusCodes.contains(status)
        }
        let block = configuration.delegate?.shouldBlockFailedURL(url, error: error) ?? lasting
        if block { failedURLs.insert(url.absoluteString, error: error) }
    }
}
