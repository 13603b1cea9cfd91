/// Something that happened to a transfer, for a ``DownloaderObserver``.
public enum DownloadEvent: Sendable {
    /// The transfer left the queue and was handed to the network.
    case started(DownloadRequest)
    /// The final response head arrived.
    case response(DownloadRequest, DownloadResponse)
    /// More of the body arrived (throttled by the configuration's progress interval).
    case progress(DownloadRequest, DownloadProgress)
    /// The transfer succeeded.
    case finished(DownloadRequest, DownloadResponse, DownloadMetrics)
    /// The transfer failed or was cancelled; metrics are nil when it never started.
    case failed(DownloadRequest, ImageKitError, DownloadMetrics?)

    /// The request the event is about.
    public var request: DownloadRequest {
        switch self {
        case .started(let r), .response(let r, _), .progress(let r, _), .finished(let r, _, _),
             .failed(let r, _, _):
            r
        }
    }
}
