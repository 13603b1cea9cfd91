import Foundation
import ImageKit

/// An ``ImageLoading`` loader of the tests' own: serves `memory://` URLs from a dictionary of
/// images by path, with no socket, and records what it was asked.
///
/// An image stored with an entity tag is served with an `ETag` response header, and a request
/// whose validators carry that tag is answered ``DownloadResult/Status/notModified``. A held
/// path waits until the load is cancelled; a gated one waits after its first progress report
/// until released. ``blocksFailures`` answers
/// ``shouldBlockFailedURL(_:error:)`` when set.
final class ScriptedLoader: ImageLoading {
    private struct Entry {
        var data: Data
        var entityTag: String?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var requests: [ImageLoaderRequest] = []
        var cancelled: [String] = []
        var held: Set<String> = []
        var gated: Set<String> = []
        var blocksFailures: Bool?
        var failure: ImageKitError?
    }

    let scheme: String
    private let state = Locked(State())

    init(scheme: String = "memory") {
        self.scheme = scheme
    }

    /// A URL of this loader for `path`.
    func url(_ path: String) -> URL {
        URL(string: "\(scheme)://images\(path)")!
    }

    /// Serves `bytes` at `path`, with `entityTag` as its ETag.
    func put(_ path: String, _ bytes: [UInt8], entityTag: String? = nil) {
        state.withLock { $0.entries[path] = Entry(data: Data(bytes), entityTag: entityTag) }
    }

    /// Makes loads of `path` wait until they are cancelled.
    func hold(_ path: String) {
        _ = state.withLock { $0.held.insert(path) }
    }

    /// Makes loads of `path` wait after their first progress report until ``release(_:)``.
    func gate(_ path: String) {
        _ = state.withLock { $0.gated.insert(path) }
    }

    /// Lets the loads of `path` waiting after their first progress report go on.
    func release(_ path: String) {
        _ = state.withLock { $0.gated.remove(path) }
    }

    /// Fails every load with `error` (nil: serve again).
    func fail(with error: ImageKitError?) {
        state.withLock { $0.failure = error }
    }

    /// The answer of ``shouldBlockFailedURL(_:error:)`` (nil: the protocol's default rule).
    func blockFailures(_ answer: Bool?) {
        state.withLock { $0.blocksFailures = answer }
    }

    /// The requests asked so far, in order.
    var requests: [ImageLoaderRequest] { state.withLock { $0.requests } }
    /// The paths whose loads saw their task cancelled.
    var cancelled: [String] { state.withLock { $0.cancelled } }

    func canLoad(_ url: URL) -> Bool {
        url.scheme == scheme
    }

    func load(_ request: ImageLoaderRequest, progress: (@Sendable (DownloadProgress) -> Void)?) async throws
        -> ImageLoaderResult {
        let path = request.url.path
        let (entry, held, failure) = state.withLock { s in
            s.requests.append(request)
            return (s.entries[path], s.held.contains(path), s.failure)
        }
        if held {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        }
        if Task.isCancelled {
            state.withLock { $0.cancelled.append(path) }
            throw ImageKitError.cancelled
        }
        if let failure { throw failure }
        guard let entry else { throw ImageKitError.io("nothing stored at \(path)") }
        var response: DownloadResponse?
        if let tag = entry.entityTag {
            let current = request.validators?.entityTag == tag
            response = DownloadResponse(url: request.url, statusCode: current ? 304 : 200, headers: ["ETag": tag],
                                        httpVersion: .unknown)
            if current { return ImageLoaderResult(data: Data(), status: .notModified, response: response) }
        }
        let total = Int64(entry.data.count)
        progress?(DownloadProgress(receivedBytes: total / 2, expectedBytes: total))
        while state.withLock({ $0.gated.contains(path) }), !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(5))
        }
        progress?(DownloadProgress(receivedBytes: total, expectedBytes: total))
        return ImageLoaderResult(data: entry.data, response: response)
    }

    func shouldBlockFailedURL(_ url: URL, error: ImageKitError) -> Bool {
        state.withLock { $0.blocksFailures } ?? error.isLastingLoadFailure
    }
}
