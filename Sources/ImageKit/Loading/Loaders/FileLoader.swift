import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Loads `file:` URLs: reads the file's bytes.
///
/// Reads run one at a time on the loader's own serial dispatch queue, never on the Swift
/// cooperative pool, so a slow disk does not stall the service's request handlers. A load
/// cancelled before its read starts throws ``ImageKitError/cancelled`` without reading.
///
/// ``ImageManager/init(cache:downloader:coders:configuration:)`` puts one in front of the downloader;
/// the manager loads `file:` URLs only when its configuration's
/// ``ImageManagerConfiguration/allowsLocalFiles`` is on.
public final class FileLoader: ImageLoading {
    private let queue: DispatchQueue

    /// A loader with its own read queue.
    public init() {
        queue = DispatchQueue(label: "ImageKit.FileLoader")
    }

    /// True for `file:` URLs.
    public func canLoad(_ url: URL) -> Bool {
        url.isFileURL
    }

    /// Reads the file at `request`'s URL; calls `progress` once with the whole size.
    ///
    /// - Throws: ``ImageKitError/io(_:)`` when the file cannot be read,
    ///   ``ImageKitError/invalidURL(_:)`` for a URL that is not a `file:` URL,
    ///   ``ImageKitError/cancelled`` when the task is cancelled before the read.
    public func load(_ request: ImageLoaderRequest, progress: (@Sendable (DownloadProgress) -> Void)?) async throws
        -> ImageLoaderResult {
        let url = request.url
        guard url.isFileURL else {
            throw ImageKitError.invalidURL("\(MessageURL.describe(url)) is not a file URL")
        }
        let cancelled = Locked(false)
        let data = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
                queue.async {
                    guard !cancelled.withLock({ $0 }) else { return continuation.resume(throwing: ImageKitError.cancelled) }
                    do {
                        continuation.resume(returning: try Data(contentsOf: url))
                    } catch {
                        continuation.resume(throwing: ImageKitError.io("cannot read \(url.path): \(error)"))
                    }
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
        if Task.isCancelled { throw ImageKitError.cancelled }
        progress?(DownloadProgress(receivedBytes: Int64(data.count), expectedBytes: Int64(data.count)))
        return ImageLoaderResult(data: data)
    }
}
