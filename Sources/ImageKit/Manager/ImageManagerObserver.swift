/// Receives an ``ImageManager``'s events, for logs, metrics and tracing.
///
/// Events are delivered synchronously on the thread where they happen (a worker thread, the
/// download callback thread, or the caller's), after the manager's locks are released, so
/// `receive` must be quick and must not block; hand heavier work to your own queue. A
/// ``DownloaderObserver`` receives the downloader's events the same way. With no observers
/// configured, no event is built.
public protocol ImageManagerObserver: Sendable {
    /// Called for every event.
    func receive(_ event: ImageManagerEvent)
}
