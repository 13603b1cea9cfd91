import Dispatch

/// Downloads over HTTP(S) with one libcurl thread: identical requests in flight
/// share one transfer, queued downloads start by priority (FIFO or LIFO within a
/// priority) under a concurrency limit, and every caller can cancel its own
/// download without disturbing the others.
///
/// By default it connects to public addresses only: loopback, private, link-local
/// and cloud metadata destinations are refused, for the request and every redirect
/// (``DownloaderConfiguration/destinationPolicy``).
///
/// Two call styles share one implementation: `async` (cancelling the task
/// cancels the download) and completion handlers returning a ``DownloadToken``.
/// Releasing the downloader aborts what is still in flight (callers get
/// ``ImageKitError/cancelled``).
public final class Downloader: Sendable {
    private let core: DownloaderCore

    /// The settings the downloader was created with.
    public var configuration: DownloaderConfiguration { core.configuration }

    /// Starts a downloader (and its network thread).
    /// - Throws: ``ImageKitError/invalidArgument(_:)`` for impossible limits, or the
    ///   engine's error when its thread cannot start.
    public init(configuration: DownloaderConfiguration = DownloaderConfiguration()) throws(ImageKitError) {
        core = try DownloaderCore(configuration: configuration)
    }

    deinit {
        core.shutdown()
    }

    /// Downloads `request`.
    ///
    /// - Parameters:
    ///   - request: What to download: the URL, method, headers and per-request settings.
    ///   - priority: Where the download goes in the queue when the limit is reached.
    ///   - progress: Called on the configuration's callback queue as the body arrives.
    /// - Returns: The body, response head and metrics; ``DownloadResult/Status/notModified``
    ///   for a 304 answering a request with validators.
    /// - Throws: ``ImageKitError`` (``ImageKitError/cancelled`` when the task is cancelled).
    public func download(_ request: DownloadRequest, priority: ImagePriority = .normal,
                         progress: (@Sendable (DownloadProgress) -> Void)? = nil) async throws(ImageKitError)
        -> DownloadResult {
        let token = DownloadToken(request: request, id: core.makeWaiter(), core: core)
        let progress = onCallbackQueue(progress)
        typealias Outcome = Result<DownloadResult, ImageKitError>
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                core.submit(token.id, request, priority: priority, progress: progress) { result in
                    continuation.resume(returning: result)
                }
            }
        } onCancel: {
            token.cancel()
        }
        return try result.get()
    }

    /// Downloads `request`, handing its body to `chunks` piece by piece as it arrives, so the
    /// caller can work on it before the end (a decode that keeps pace with the network). An
    /// identical download joins a transfer in flight only before its body starts (and, when
    /// it keeps the body, one that keeps it too); the body limit and the Content-Length check
    /// hold as for ``download(_:priority:progress:)``.
    ///
    /// - Parameters:
    ///   - request: What to download: the URL, method, headers and per-request settings.
    ///   - priority: Where the download goes in the queue when the limit is reached.
    ///   - progress: Called on the configuration's callback queue as the body arrives.
    ///   - keepingBody: Whether the result holds the whole body as well; false keeps no byte
    ///     of it past `chunks` (the result's ``DownloadResult/data`` is empty).
    ///   - chunks: Called with each piece, in order, on the network thread: copy what you need
    ///     and return at once (every transfer of the downloader waits while it runs). Not called
    ///     for a response whose status fails the download.
    /// - Returns: The response head and metrics (and the body with `keepingBody`).
    /// - Throws: ``ImageKitError`` as ``download(_:priority:progress:)`` does; with a response
    ///   modifier or a decryptor configured (they need the whole body),
    ///   ``ImageKitError/invalidArgument(_:)``.
    public func download(_ request: DownloadRequest, priority: ImagePriority = .normal,
                         progress: (@Sendable (DownloadProgress) -> Void)? = nil, keepingBody: Bool,
                         chunks: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) async throws(ImageKitError)
        -> DownloadResult {
        guard core.streamsBodies else {
            throw .invalidArgument("download: a streamed body cannot pass through the response modifier or decryptor")
        }
        let token = DownloadToken(request: request, id: core.makeWaiter(), core: core)
        let progress = onCallbackQueue(progress)
        let stream = DownloaderCore.Stream(chunks: chunks, keepsBody: keepingBody)
        typealias Outcome = Result<DownloadResult, ImageKitError>
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                core.submit(token.id, request, priority: priority, progress: progress, stream: stream) { result in
                    continuation.resume(returning: result)
                }
            }
        } onCancel: {
            token.cancel()
        }
        return try result.get()
    }

    /// Whether ``download(_:priority:progress:keepingBody:chunks:)`` can stream: not with a
    /// response modifier or a decryptor configured.
    public var streamsBodies: Bool { core.streamsBodies }

    /// Downloads `request` and calls `completion` once, on the configuration's
    /// callback queue, with the result or the error.
    ///
    /// - Parameters:
    ///   - request: What to download: the URL, method, headers and per-request settings.
    ///   - priority: Where the download goes in the queue when the limit is reached.
    ///   - progress: Called on the callback queue as the body arrives.
    ///   - completion: Called once with the result, or the error (``ImageKitError/cancelled``
    ///     when the token cancels it).
    /// - Returns: A token that cancels this caller's download.
    ///
    /// (A separate name from the async ``download(_:priority:progress:)``, which an
    /// async context would otherwise pick for a trailing closure.)
    @discardableResult
    public func startDownload(_ request: DownloadRequest, priority: ImagePriority = .normal,
                              progress: (@Sendable (DownloadProgress) -> Void)? = nil,
                              completion: @escaping @Sendable (Result<DownloadResult, ImageKitError>) -> Void)
        -> DownloadToken {
        let token = DownloadToken(request: request, id: core.makeWaiter(), core: core)
        let queue = configuration.callbackQueue
        core.submit(token.id, request, priority: priority, progress: onCallbackQueue(progress)) { result in
            queue.async { completion(result) }
        }
        return token
    }

    /// `handler` moved onto the callback queue, so the network thread never runs it.
    private func onCallbackQueue(_ handler: (@Sendable (DownloadProgress) -> Void)?) -> DownloaderCore.Progress? {
        guard let handler else { return nil }
        let queue = configuration.callbackQueue
        return { progress in queue.async { handler(progress) } }
    }

    /// Cancels every download: queued and running ones (and those being submitted) end with
    /// ``ImageKitError/cancelled``, their transfers leave the queue or are aborted, and their
    /// completions run now. Downloads asked for later run as usual (SDWebImage's
    /// `cancelAllDownloads`).
    public func cancelAllDownloads() {
        core.cancelAll()
    }

    /// Whether the downloader holds queued downloads back (SDWebImage's `suspended`): while
    /// true, no queued download starts — new ones queue — and those running go on; setting it
    /// back to false starts queued downloads as the concurrency limits allow.
    public var isSuspended: Bool {
        get { core.isSuspended }
        set { core.setSuspended(newValue) }
    }

    /// A snapshot of what is queued and in flight.
    public var statistics: DownloaderStatistics { core.statistics }

    /// Stops the downloader: downloads asked for from now on fail with
    /// ``ImageKitError/cancelled``; those in flight finish (``ShutdownMode/drain``) or are
    /// aborted (``ShutdownMode/cancel``); then the network thread exits and its connections
    /// close. Returns when all of that is done.
    public func shutdown(_ mode: ShutdownMode = .drain) async {
        if mode == .drain {
            core.refuseNew()
            await Polling.waitUntil { self.core.statistics.isIdle }
        }
        core.shutdown()
    }
}
