#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Several ``ImageLoading`` loaders used as one (SDWebImage's `SDImageLoadersManager`): each
/// URL goes to the first loader, in priority order, whose ``ImageLoading/canLoad(_:)`` accepts
/// it.
///
/// As in SDWebImage, the loader added last has the highest priority: ``loaders`` is asked from
/// its end to its start, so a loader appended for a scheme the others also accept takes that
/// scheme over. A URL no loader accepts fails with ``ImageKitError/invalidURL(_:)`` naming its
/// scheme.
///
/// ```swift
/// let loaders = ImageLoadersManager(loaders: [FileLoader(), try Downloader()])
/// loaders.addLoader(BucketLoader())   // asked first from now on
/// let manager = ImageManager(cache: try ImageCache(), loader: loaders)
/// ```
public final class ImageLoadersManager: ImageStreamingLoading {
    private let list: Locked<[any ImageLoading]>

    /// A manager of `loaders`, the last one asked first.
    public init(loaders: [any ImageLoading]) {
        list = Locked(loaders)
    }

    /// The loaders, from the lowest priority (first) to the highest (last, asked first).
    public var loaders: [any ImageLoading] {
        list.withLock { $0 }
    }

    /// Adds `loader` with the highest priority (asked before every other).
    public func addLoader(_ loader: any ImageLoading) {
        list.withLock { $0.append(loader) }
    }

    /// Removes `loader` (by identity), if it is one of the loaders.
    public func removeLoader(_ loader: any ImageLoading) {
        list.withLock { $0.removeAll { $0 === loader } }
    }

    /// The loader that loads `url`: the one of highest priority accepting it, or nil.
    public func loader(for url: URL) -> (any ImageLoading)? {
        list.withLock { $0.last { $0.canLoad(url) } }
    }

    /// Whether one of the loaders accepts `url`.
    public func canLoad(_ url: URL) -> Bool {
        loader(for: url) != nil
    }

    /// Loads `request` with ``loader(for:)``.
    ///
    /// - Throws: that loader's error, or ``ImageKitError/invalidURL(_:)`` when no loader
    ///   accepts the URL.
    public func load(_ request: ImageLoaderRequest, progress: (@Sendable (DownloadProgress) -> Void)?) async throws
        -> ImageLoaderResult {
        guard let loader = loader(for: request.url) else {
            let scheme = request.url.scheme.map { "the \"\($0)\" scheme" } ?? "a URL without a scheme"
            throw ImageKitError.invalidURL("no image loader loads \(scheme) (\(MessageURL.describe(request.url)))")
        }
        return try await loader.load(request, progress: progress)
    }

    /// Whether the loader that loads `url` streams its body (an ``ImageStreamingLoading``
    /// loader that says so).
    public func streamsBody(of url: URL) -> Bool {
        (loader(for: url) as? any ImageStreamingLoading)?.streamsBody(of: url) ?? false
    }

    /// Loads `request` with ``loader(for:)``, streaming when it does; a loader that does not
    /// (the list changed since ``streamsBody(of:)``) hands its whole body to `chunks` as one piece.
    ///
    /// - Throws: as ``load(_:progress:)``.
    public func load(_ request: ImageLoaderRequest, keepingData: Bool,
                     progress: (@Sendable (DownloadProgress) -> Void)?,
                     chunks: @escaping @Sendable (Data) -> Void) async throws -> ImageLoaderResult {
        if let streaming = loader(for: request.url) as? any ImageStreamingLoading,
           streaming.streamsBody(of: request.url) {
            return try await streaming.load(request, keepingData: keepingData, progress: progress, chunks: chunks)
        }
        var result = try await load(request, progress: progress)
        if !result.data.isEmpty { chunks(result.data) }
        if !keepingData { result.data = Data() }
        return result
    }

    /// The answer of the loader that loads `url`; when none does,
    /// ``ImageKitError/isLastingLoadFailure``.
    public func shouldBlockFailedURL(_ url: URL, error: ImageKitError) -> Bool {
        loader(for: url)?.shouldBlockFailedURL(url, error: error) ?? error.isLastingLoadFailure
    }

    /// Shuts every loader down, all at once, and returns when they are all done.
    public func shutdown(_ mode: ShutdownMode) async {
        await withTaskGroup(of: Void.self) { group in
            for loader in loaders {
                group.addTask { await loader.shutdown(mode) }
            }
        }
    }
}
