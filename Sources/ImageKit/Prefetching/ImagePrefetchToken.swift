import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One list given to an ``ImagePrefetcher``: its progress, and a handle to cancel what is left.
public final class ImagePrefetchToken: Sendable {
    /// The URLs of the list.
    public let urls: [URL]
    let options: ImageOptions
    let context: ImageContext?
    private let queue: DispatchQueue
    private let prefetcher: ImagePrefetcher
    private let urlCompleted: ImagePrefetcher.URLCompletion?
    private let progress: (@Sendable (Int, Int) -> Void)?
    private let completion: (@Sendable (Int, Int) -> Void)?

    private struct State: Sendable {
        /// The next URL to start.
        var next = 0
        /// Loads started and not ended, by index; the task once known.
        var running: [Int: ImageTask?] = [:]
        var finished = 0
        var skipped = 0
        var cancelled = false
    }

    private let state = Locked(State())

    init(urls: [URL], options: ImageOptions, context: ImageContext?, queue: DispatchQueue, prefetcher: ImagePrefetcher,
         urlCompleted: ImagePrefetcher.URLCompletion?, progress: (@Sendable (Int, Int) -> Void)?,
         completion: (@Sendable (Int, Int) -> Void)?) {
        self.urls = urls
        self.options = options
        self.context = context
        self.queue = queue
        self.prefetcher = prefetcher
        self.urlCompleted = urlCompleted
        self.progress = progress
        self.completion = completion
    }

    /// Loads that have ended, succeeded or failed.
    public var finishedCount: Int { state.withLock { $0.finished } }

    /// Loads that failed.
    public var skippedCount: Int { state.withLock { $0.skipped } }

    /// Whether ``cancel()`` was called before the list finished.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Cancels the loads of this list that are running and starts no more; neither handler is
    /// called for loads ending after this. Does nothing once the list has finished.
    public func cancel() {
        let tasks = state.withLock { s -> [ImageTask?]? in
            guard !s.cancelled, s.finished < urls.count else { return nil }
            s.cancelled = true
            defer { s.running = [:] }
            return Array(s.running.values)
        }
        guard let tasks else { return }
        for task in tasks { task?.cancel() }
        prefetcher.tokenEnded(self)
        prefetcher.slotsFreed(tasks.count)
    }

    // MARK: - Prefetcher side

    /// The index of the next URL to load, if any is left.
    func takeNext() -> Int? {
        state.withLock { s in
            guard !s.cancelled, s.next < urls.count else { return nil }
            defer { s.next += 1 }
            s.running[s.next] = .some(nil)
            return s.next
        }
    }

    /// Remembers the task of load `index`, or cancels it when the list was cancelled meanwhile.
    func track(_ index: Int, _ task: ImageTask) {
        let cancelled = state.withLock { s -> Bool in
            if s.running[index] != nil { s.running[index] = task }
            return s.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Load `index` ended (on the callback queue) with `result`; reports it, the progress and,
    /// after the last, the completion. False when the list was cancelled first (its slot was
    /// freed then).
    func loadEnded(_ index: Int, _ result: Result<ImageResult, ImageKitError>) -> Bool {
        let success = if case .success = result { true } else { false }
        let counts = state.withLock { s -> (finished: Int, skipped: Int)? in
            guard s.running.removeValue(forKey: index) != nil else { return nil }
            s.finished += 1
            if !success { s.skipped += 1 }
            return (s.finished, s.skipped)
        }
        guard let counts else { return false }
        urlCompleted?(urls[index], result, counts.finished, urls.count)
        progress?(counts.finished, urls.count)
        if counts.finished == urls.count {
            prefetcher.tokenEnded(self)
            completion?(counts.finished, counts.skipped)
        }
        return true
    }

    /// Reports an empty list as finished.
    func completeEmpty() {
        guard let completion else { return }
        queue.async { completion(0, 0) }
    }
}
