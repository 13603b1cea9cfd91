/// Receives a ``Downloader``'s events, for logs and metrics.
///
/// Events arrive on the configuration's callback queue, in order for each transfer.
/// One event describes one transfer, however many callers share it.
public protocol DownloaderObserver: Sendable {
    /// Called for every event.
    func receive(_ event: DownloadEvent)
}
