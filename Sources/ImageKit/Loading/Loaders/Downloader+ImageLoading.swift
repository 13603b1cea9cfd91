#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The downloader is the manager's loader for http and https URLs; its
/// ``Downloader/shutdown(_:)`` is the loader's shutdown.
extension Downloader: ImageLoading {
    /// True for http and https URLs.
    public func canLoad(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// Downloads `request`'s URL: conditionally with its validators; at its context's
    /// ``ImageContext/priority``; without
    /// verifying the peer under ``ImageOptions/allowInvalidSSLCertificates``; with the
    /// downloader's cookie jar under ``ImageOptions/handleCookies``; rewritten by the context's
    /// ``ImageContext/requestModifier`` (whose nil cancels the load).
    ///
    /// - Throws: ``ImageKitError`` as ``download(_:priority:progress:)`` does.
    public func load(_ request: ImageLoaderRequest, progress: (@Sendable (DownloadProgress) -> Void)?) async throws
        -> ImageLoaderResult {
        var download = DownloadRequest(url: request.url, validators: request.validators)
        let options = request.options
        if options.contains(.allowInvalidSSLCertificates) {
            download.tls = DownloaderConfiguration.TLSOptions(verifiesPeer: false, caFile: configuration.tls.caFile)
        }
        if options.contains(.handleCookies) { download.usesCookies = true }
        if let modifier = request.context.requestModifier {
            guard let modified = await modifier(download) else {
                throw ImageKitError.cancelled
            }
            download = modified
        }
        return ImageLoaderResult(try await self.download(download, priority: request.context.priority,
                                                         progress: progress))
    }
}
