#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A source of image bytes the ``ImageManager`` loads through (SDWebImage's `SDImageLoader`):
/// the network, local files, an object store, a database — anything that turns a URL into
/// encoded bytes.
///
/// ``Downloader`` (http and https), ``FileLoader`` (`file:`) and ``ImageLoadersManager``
/// (several loaders, chosen by URL) are the built-in loaders. A loader of your own implements
/// ``canLoad(_:)`` and ``load(_:progress:)``; the manager decodes, transforms and caches what
/// it returns exactly as it does downloads.
///
/// Cancellation is Swift task cancellation: when every load waiting on a pipeline is cancelled,
/// the task running ``load(_:progress:)`` is cancelled, and the loader stops and throws
/// (``ImageKitError/cancelled`` or `CancellationError`).
///
/// Loaders are classes: the manager shares one pipeline between loads of the same image
/// through the same loader, and tells loaders apart by identity (`ObjectIdentifier`).
///
/// ```swift
/// final class BucketLoader: ImageLoading {
///     func canLoad(_ url: URL) -> Bool { url.scheme == "bucket" }
///     func load(_ request: ImageLoaderRequest,
///               progress: (@Sendable (DownloadProgress) -> Void)?) async throws -> ImageLoaderResult {
///         ImageLoaderResult(data: try await bucket.object(at: request.url.path))
///     }
/// }
/// ```
public protocol ImageLoading: AnyObject, Sendable {
    /// Whether this loader loads `url` (by its scheme, usually). Called for every load that
    /// reaches the loader, so it must be cheap.
    func canLoad(_ url: URL) -> Bool

    /// Loads the bytes `request` names.
    ///
    /// - Parameters:
    ///   - request: The URL, the validators of a cached copy, the priority, the TLS and cookie
    ///     flags and the request modifier (``ImageLoaderRequest``).
    ///   - progress: Called as bytes arrive (from any thread), or nil.
    /// - Returns: The bytes with the response's metadata; ``DownloadResult/Status/notModified``
    ///   (and no bytes) when the request's validators still match.
    /// - Throws: ``ImageKitError`` (a failure of another type fails the load as
    ///   ``ImageKitError/internal(_:)``); ``ImageKitError/cancelled`` when the task is cancelled.
    func load(_ request: ImageLoaderRequest, progress: (@Sendable (DownloadProgress) -> Void)?) async throws
        -> ImageLoaderResult

    /// Whether `url`, whose load failed with `error`, may go on the manager's failed-URL
    /// blocklist. The manager blocks a URL when this says yes and, for an
    /// ``ImageKitError/httpStatus(_:_:)`` failure, the status is among its configuration's
    /// ``ImageManagerConfiguration/failedURLStatusCodes``; a manager delegate implementing
    /// ``ImageManagerDelegate/shouldBlockFailedURL(_:error:)`` decides instead.
    func shouldBlockFailedURL(_ url: URL, error: ImageKitError) -> Bool

    /// Stops the loader's threads and work in flight: those finish (``ShutdownMode/drain``) or
    /// are cancelled (``ShutdownMode/cancel``). ``ImageManager/shutdown(_:)`` calls it for the
    /// manager's loader. The default does nothing.
    func shutdown(_ mode: ShutdownMode) async
}

extension ImageLoading {
    /// The manager's rule: an HTTP status may be blocked (the manager's
    /// ``ImageManagerConfiguration/failedURLStatusCodes`` choose which); any other failure
    /// when it is lasting (``ImageKitError/isLastingLoadFailure``): undecodable data, a file
    /// that does not exist, TLS, … — never timeouts, connection failures or cancellation.
    public func shouldBlockFailedURL(_ url: URL, error: ImageKitError) -> Bool {
        if error.code == .httpStatus { return true }
        return error.isLastingLoadFailure
    }

    /// Nothing to stop.
    public func shutdown(_ mode: ShutdownMode) async {}
}
