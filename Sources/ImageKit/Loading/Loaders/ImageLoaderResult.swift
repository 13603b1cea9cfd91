#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an ``ImageLoading`` loader brought: the encoded bytes, whether the cached copy is
/// still current, and the response's metadata when there was a response.
public struct ImageLoaderResult: Sendable {
    /// Loaded, or the cached copy is current (``DownloadResult/Status/notModified``; then
    /// ``data`` is empty and the manager keeps the cached image).
    public var status: DownloadResult.Status
    /// The encoded image.
    public var data: Data
    /// The response head (status, headers: entity tag, last-modified date and MIME type), or
    /// nil for a loader without one. Its validators are stored with the image for later
    /// revalidation, and the context's ``ImageContext/responseValidator`` checks it.
    public var response: DownloadResponse?
    /// The transfer's figures, or nil; reported in ``ImageLoadMetrics/download``.
    public var metrics: DownloadMetrics?

    /// A result with every part given (by default: loaded, with no response or metrics).
    public init(data: Data, status: DownloadResult.Status = .downloaded, response: DownloadResponse? = nil,
                metrics: DownloadMetrics? = nil) {
        self.status = status
        self.data = data
        self.response = response
        self.metrics = metrics
    }

    /// The result of a download: its status, body, response head and metrics.
    public init(_ download: DownloadResult) {
        self.init(data: download.data, status: download.status, response: download.response,
                  metrics: download.metrics)
    }
}
