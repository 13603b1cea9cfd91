/// Receives a ``Downloader``'s events, for logs and metrics.
///
/// Events are delivered the way an ``ImageManagerObserver`` receives the manager's:
/// synchronously on the thread where they happen (`started` where the transfer is handed to
/// the network, the others on the download thread), after the downloader's lock is
/// released, in order for each transfer. `receive` must be quick and must not block: on the
/// download thread every transfer waits while it runs; hand heavier work to your own queue.
/// One event describes one transfer, however many callers share it. With no observers
/// configured, no event is built.
public protocol DownloaderObserver: Sendable {
    /// Called for every event.
    func receive(_ event: DownloadEvent)
}
