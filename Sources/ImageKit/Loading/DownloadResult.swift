#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A finished download: the body, the response head and the transfer's metrics.
public struct DownloadResult: Sendable {
    /// Whether the server sent a body or confirmed the cached copy.
    public enum Status: Sendable, Hashable {
        /// The body was downloaded.
        case downloaded
        /// A conditional request (see ``DownloadRequest/validators``) was answered 304:
        /// the cached copy is current and `data` is empty.
        case notModified
    }

    /// Downloaded or not modified.
    public var status: Status
    /// The body (empty for ``Status/notModified`` and HEAD requests).
    public var data: Data
    /// The final response head.
    public var response: DownloadResponse
    /// Timing and size figures of the transfer.
    public var metrics: DownloadMetrics

    /// A result with every part given.
    public init(status: Status, data: Data, response: DownloadResponse, metrics: DownloadMetrics) {
        self.status = status
        self.data = data
        self.response = response
        self.metrics = metrics
    }
}
