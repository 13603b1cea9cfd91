/// What ``ImageManager/shutdown(_:)`` and ``Downloader/shutdown(_:)`` do with the work in flight.
public enum ShutdownMode: Sendable, Hashable {
    /// Let the loads (downloads) in flight finish; refuse new ones.
    case drain
    /// Cancel the loads (downloads) in flight: their callers get ``ImageKitError/cancelled``.
    case cancel
}
