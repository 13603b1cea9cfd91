#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A loader that can hand the bytes over as they arrive, so the ``ImageManager`` decodes while
/// the rest is still loading (SDWebImage's progressive load): a cold load then costs about the
/// longer of the download and the decode rather than their sum.
///
/// ``Downloader`` and ``ImageLoadersManager`` (for URLs whose loader streams) are streaming
/// loaders. Any other loader works unchanged: the manager decodes what its
/// ``ImageLoading/load(_:progress:)`` returns, as one piece.
public protocol ImageStreamingLoading: ImageLoading {
    /// Whether ``load(_:keepingData:progress:chunks:)`` streams the body of `url`; when false
    /// the manager calls ``ImageLoading/load(_:progress:)`` instead. Cheap: asked on every cold load.
    func streamsBody(of url: URL) -> Bool

    /// Loads the bytes `request` names, handing every byte of the body to `chunks`, in order,
    /// before returning.
    ///
    /// - Parameters:
    ///   - request: The URL, the validators of a cached copy, the priority, the TLS and cookie
    ///     flags and the request modifier (``ImageLoaderRequest``).
    ///   - keepingData: Whether the result holds the whole body as well (the manager asks for
    ///     it only when it stores or returns the original bytes); false: ``ImageLoaderResult/data``
    ///     is empty.
    ///   - progress: Called as bytes arrive (from any thread), or nil.
    ///   - chunks: Called with each piece of the body, from any thread, one call at a time; it
    ///     returns at once (the manager queues the piece for its decode).
    /// - Returns: The response's metadata (and the body with `keepingData`);
    ///   ``DownloadResult/Status/notModified`` when the request's validators still match.
    /// - Throws: as ``ImageLoading/load(_:progress:)``.
    func load(_ request: ImageLoaderRequest, keepingData: Bool, progress: (@Sendable (DownloadProgress) -> Void)?,
              chunks: @escaping @Sendable (Data) -> Void) async throws -> ImageLoaderResult
}
