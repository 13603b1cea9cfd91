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

    /// Downloads `request`'s URL: conditionally with its validators; at its priority; without
    /// verifying the peer unless it ``ImageLoaderRequest/verifiesPeer``; with the downloader's
    /// cookie jar when it ``ImageLoaderRequest/usesCookies``; rewritten by its
    /// ``ImageLoaderRequest/requestModifier`` (whose nil cancels the load).
    ///
    /// - Throws: ``ImageKitError`` as ``download(_:priority:progress:)`` does.
    public func load(_ request: ImageLoaderRequest, progress: (@Sendable (DownloadProgress) -> Void)?) async throws
        -> ImageLoaderResult {
        ImageLoaderResult(try await self.download(downloadRequest(for: request), priority: request.priority,
                                                  progress: progress))
    }

    /// The download `request` asks for (see ``load(_:progress:)``).
    func downloadRequest(for request: ImageLoaderRequest) async throws -> DownloadRequest {
        var download = DownloadRequest(url: request.url, validators: request.validators)
        if !request.verifiesPeer {
            download.tls = DownloaderConfiguration.TLSOptions(verifiesPeer: false, caFile: configuration.tls.caFile)
        }
        if request.usesCookies { download.usesCookies = true }
        if let modifier = request.requestModifier {
            guard let modified = await modifier(download) else {
                throw ImageKitError.cancelled
            }
            download = modified
        }
        return download
    }
}

/// The downloader streams bodies unless a response modifier or a decryptor needs them whole.
extension Downloader: ImageStreamingLoading {
    /// True for http and https URLs while the downloader has no response modifier or decryptor.
    public func streamsBody(of url: URL) -> Bool {
        streamsBodies && canLoad(url)
    }

    /// Downloads `request`'s URL as ``load(_:progress:)`` does, handing the body to `chunks` as
    /// it arrives (one copy per piece, made on the network thread).
    ///
    /// - Throws: ``ImageKitError`` as ``download(_:priority:progress:keepingBody:chunks:)`` does.
    public func load(_ request: ImageLoaderRequest, keepingData: Bool,
                     progress: (@Sendable (DownloadProgress) -> Void)?,
                     chunks: @escaping @Sendable (Data) -> Void) async throws -> ImageLoaderResult {
        let download = try await downloadRequest(for: request)
        return ImageLoaderResult(try await self.download(download, priority: request.priority,
                                                         progress: progress, keepingBody: keepingData) { piece in
            chunks(Data(piece))
        })
    }
}
