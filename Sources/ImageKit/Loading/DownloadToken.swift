/// A handle on one caller's download, returned by the completion-handler API.
///
/// Cancelling completes this caller's download with ``ImageKitError/cancelled``
/// at once; the transfer goes on for other callers sharing it and is aborted
/// when none is left.
public final class DownloadToken: Sendable {
    /// The request as the caller made it.
    public let request: DownloadRequest
    let id: UInt64
    private let core: DownloaderCore

    init(request: DownloadRequest, id: UInt64, core: DownloaderCore) {
        self.request = request
        self.id = id
        self.core = core
    }

    /// Cancels this caller's download. Does nothing once it has completed.
    public func cancel() {
        core.cancel(id)
    }
}
