#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Warms the caches ahead of need: loads lists of URLs through an ``ImageManager``, a few at a
/// time, at low priority by default (SDWebImage's `SDWebImagePrefetcher`).
///
/// Where the images end up follows the context's ``ImageContext/storeCacheType``: memory,
/// disk, or both (the default). At most ``maxConcurrentPrefetchCount`` loads run at once
/// across every list given to this prefetcher; lists are served in the order they came.
///
/// ```swift
/// let prefetcher = ImagePrefetcher(manager: manager)
/// prefetcher.prefetch(urls, completion: { finished, skipped in print("\(finished) done, \(skipped) failed") })
/// ```
public final class ImagePrefetcher: Sendable {
    /// Told each URL's outcome as its load ends (SDWebImage's prefetcher delegate's
    /// `didPrefetchURL:finishedCount:totalCount:`): the URL, its image or error, how many
    /// loads of the list have ended (this one included) and how many the list has.
    public typealias URLCompletion = @Sendable (_ url: URL, _ result: Result<ImageResult, ImageKitError>,
                                                _ finished: Int, _ total: Int) -> Void

    /// The manager that loads.
    public let manager: ImageManager
    /// Most loads in flight at once (default 3).
    public let maxConcurrentPrefetchCount: Int
    /// Options of every load unless a call gives its own (default none).
    public let options: ImageOptions
    /// Context of every load unless a call gives its own (default: priority
    /// ``ImagePriority/low``, so prefetching queues behind the loads that are wanted now).
    public let context: ImageContext

    private struct State: Sendable {
        var running = 0
        /// Lists not yet finished or cancelled, oldest first.
        var tokens: [ImagePrefetchToken] = []
    }

    private let state = Locked(State())

    /// A prefetcher loading through `manager`.
    public init(manager: ImageManager, maxConcurrentPrefetchCount: Int = 3, options: ImageOptions = [],
                context: ImageContext = ImageContext(priority: .low)) {
        self.manager = manager
        self.maxConcurrentPrefetchCount = max(1, maxConcurrentPrefetchCount)
        self.options = options
        self.context = context
    }

    /// Loads `urls` into the caches.
    ///
    /// - Parameters:
    ///   - urls: The images to load.
    ///   - options: Options of these loads (default: the prefetcher's).
    ///   - context: Context of these loads (default: the prefetcher's).
    ///   - urlCompleted: Called as each load ends, with its URL and outcome, before `progress`.
    ///   - progress: Called after each load ends, with how many have ended and how many there are.
    ///   - completion: Called once every load has ended, with how many ended and how many of
    ///     those failed. No handler is called once the token is cancelled.
    /// - Returns: A token that cancels what is left of this list.
    ///
    /// Handlers run on the context's callback queue, else the manager's.
    @discardableResult
    public func prefetch(_ urls: [URL], options: ImageOptions? = nil, context: ImageContext? = nil,
                         urlCompleted: URLCompletion? = nil,
                         progress: (@Sendable (_ finished: Int, _ total: Int) -> Void)? = nil,
                         completion: (@Sendable (_ finished: Int, _ skipped: Int) -> Void)? = nil)
        -> ImagePrefetchToken {
        let context = context ?? self.context
        let token = ImagePrefetchToken(urls: urls, options: options ?? self.options, context: context,
                                       queue: context.callbackQueue ?? manager.configuration.callbackQueue,
                                       prefetcher: self, urlCompleted: urlCompleted, progress: progress,
                                       completion: completion)
        if urls.isEmpty {
            token.completeEmpty()
            return token
        }
        state.withLock { $0.tokens.append(token) }
        pump()
        return token
    }

    /// Cancels every list in progress.
    public func cancelPrefetching() {
        let tokens = state.withLock { $0.tokens }
        for token in tokens { token.cancel() }
    }

    /// Loads running now, across every list.
    public var runningCount: Int { state.withLock { $0.running } }

    /// Starts loads while there are free slots and URLs waiting.
    private func pump() {
        while true {
            let next = state.withLock { s -> (ImagePrefetchToken, Int)? in
                guard s.running < maxConcurrentPrefetchCount else { return nil }
                for token in s.tokens {
                    if let index = token.takeNext() {
                        s.running += 1
                        return (token, index)
                    }
                }
                return nil
            }
            guard let (token, index) = next else { return }
            let task = manager.loadImage(with: token.urls[index], options: token.options, context: token.context) {
                [self] result in
                if token.loadEnded(index, result) { slotsFreed(1) }
            }
            token.track(index, task)
        }
    }

    /// `count` loads ended or were cancelled: start others.
    func slotsFreed(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.running -= count }
        pump()
    }

    /// A list finished or was cancelled.
    func tokenEnded(_ token: ImagePrefetchToken) {
        state.withLock { $0.tokens.removeAll { $0 === token } }
    }
}
