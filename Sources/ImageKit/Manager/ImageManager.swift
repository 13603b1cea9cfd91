import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Loads images by URL: from the memory tier, else the disk tier, else the network — then
/// decodes (shrinking on load), transforms, stores and hands the image back. SDWebImage's
/// `SDWebImageManager` for services.
///
/// The manager reaches its cache only through ``ImageCaching``: the built-in ``ImageCache``,
/// an ``ImageCachesManager`` chaining several, or a cache of your own. It reaches the network
/// (or any other source of bytes) only through ``ImageLoading``: a ``Downloader``, a
/// ``FileLoader``, an ``ImageLoadersManager`` choosing among several by URL, or a loader of
/// your own.
///
/// Two call styles take one route: `async` (cancelling the awaiting task cancels the load)
/// and completion handlers returning an ``ImageTask``. A load goes through stages: the memory
/// tier in the caller's context, then the disk tier's read (inline in an `async` caller's
/// task), then the rest of the pipeline. Loads asking for the same cache
/// key with the same processing share one download and one decode. Decoding and transforming
/// run on the manager's own worker threads, never on the Swift cooperative pool.
///
/// A service sending images asks for encoded bytes instead: the variant is cached as bytes, so
/// a hit costs no decode, resize or encode.
///
/// ```swift
/// let manager = ImageManager(cache: try ImageCache(namespace: "avatars"), loader: try Downloader())
/// let avatar = try await manager.image(for: url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 128)))
/// let thumbnail = try await manager.encodedImage(for: url, as: .fixed(.jpeg(quality: 80)),
///                                                context: ImageContext(thumbnailPixelSize: PixelSize(square: 256)))
/// ```
public final class ImageManager: Sendable {
    /// A manager over the default cache (`ImageCache()`, falling back to a folder in the
    /// temporary directory) and a default downloader, for convenience; services should create
    /// and inject their own. Created on first use; when that fails (no network thread, no cache
    /// folder) it throws, and the next use tries again.
    ///
    /// - Throws: ``ImageKitError`` from ``Downloader/init(configuration:)`` or
    ///   ``ImageCache/init(namespace:directory:memory:disk:)``.
    public static var shared: ImageManager {
        get throws(ImageKitError) { try SharedManager.manager() }
    }

    /// The cache loads use unless their context names another.
    public let cache: any ImageCaching
    /// The loader loads use unless their context names another.
    public let loader: any ImageLoading
    /// The coder loads decode and encode with unless their context names another
    /// (``ImageContext/coder``): by default an ``ImageCodersManager`` holding a
    /// ``BuiltInImageCoder`` over the configuration's ``ImageManagerConfiguration/bufferPool``.
    public let coders: any ImageCoding
    /// The settings the manager was created with.
    public let configuration: ImageManagerConfiguration

    /// Decoding, transforming and encoding threads.
    let workers: WorkerPool
    /// Turns for the pipelines that hold bodies and bitmaps.
    let limiter: PipelineLimiter
    let failedURLs: FailedURLList
    /// Cleared by ``shutdown(_:)``: loads asked for later fail.
    let accepting = Atomic<Bool>(true)
    let events: EventFanOut<ImageManagerEvent>
    /// Whether loads make per-load observers (``ImageManagerConfiguration/loadObserverFactories``).
    let hasLoadObserverFactories: Bool
    let nextID = Atomic<UInt64>(0)
    /// Loads that have not ended, by id.
    let tasks = Locked<[UInt64: ImageTask]>([:])
    /// Pipelines loads may join and inline disk reads (``DiskReadStage``) they may wait on, by key.
    let registry = Locked(ImageLoadRegistry<ImageLoadJob.Key, ImageLoadJob, DiskReadStage.Waiter>())
    let counters = Locked(Counters())

    /// A manager loading through `cache` (any ``ImageCaching`` cache) and `loader` (any
    /// ``ImageLoading`` loader), decoding and encoding through `coders` (any ``ImageCoding``;
    /// nil, the default, makes an ``ImageCodersManager`` holding a ``BuiltInImageCoder`` over
    /// the configuration's ``ImageManagerConfiguration/bufferPool``).
    public init(cache: any ImageCaching, loader: any ImageLoading, coders: (any ImageCoding)? = nil,
                configuration: ImageManagerConfiguration = ImageManagerConfiguration()) {
        self.cache = cache
        self.loader = loader
        self.coders = coders ?? ImageCodersManager(coders: [BuiltInImageCoder(bufferPool: configuration.bufferPool)])
        self.configuration = configuration
        workers = WorkerPool(name: "imagekit-decode", maxThreads: max(1, configuration.decodeThreads))
        limiter = PipelineLimiter(limit: configuration.maxActivePipelines, maxWaiting: configuration.maxWaitingPipelines)
        failedURLs = FailedURLList(timeToLive: configuration.failedURLTimeToLive,
                                   maxCount: configuration.failedURLMaxCount, maxBytes: configuration.failedURLMaxBytes)
        events = EventFanOut(configuration.observers.map { observer in { observer.receive($0) } })
        hasLoadObserverFactories = !configuration.loadObserverFactories.isEmpty
    }

    /// A manager loading through `cache` and an ``ImageLoadersManager`` of a ``FileLoader``
    /// and `downloader`: http and https URLs download, `file:` URLs are read (when the
    /// configuration's ``ImageManagerConfiguration/allowsLocalFiles`` is on); decoding and
    /// encoding through `coders`, as ``init(cache:loader:coders:configuration:)`` does.
    public convenience init(cache: any ImageCaching, downloader: Downloader, coders: (any ImageCoding)? = nil,
                            configuration: ImageManagerConfiguration = ImageManagerConfiguration()) {
        self.init(cache: cache, loader: ImageLoadersManager(loaders: [FileLoader(), downloader]), coders: coders,
                  configuration: configuration)
    }

    // MARK: - Loading

    /// Loads the image at `url`.
    ///
    /// A memory hit returns without suspending. With ``ImageOptions/refreshCached`` the result
    /// is the revalidated image: the cached one when the server says it is current, else the
    /// new one.
    ///
    /// - Parameters:
    ///   - url: The image's URL; `nil` or an unusable URL fails with ``ImageKitError/invalidURL(_:)``.
    ///   - options: Flags of this load.
    ///   - context: Values of this load that are not flags, or nil for the defaults.
    ///   - progress: Called as the download's body arrives, on the callback queue (the
    ///     context's, else the configuration's), never after the load ended.
    /// - Throws: ``ImageKitError`` — ``ImageKitError/invalidURL(_:)``,
    ///   ``ImageKitError/blocklisted(_:original:)``, ``ImageKitError/notInCache(_:)``,
    ///   ``ImageKitError/deadlineExceeded(_:)``, the download's or the decoder's error, and
    ///   ``ImageKitError/cancelled`` when the calling task is cancelled.
    public func image(for url: URL?, options: ImageOptions = [], context: ImageContext? = nil,
                      progress: (@Sendable (DownloadProgress) -> Void)? = nil) async throws(ImageKitError)
        -> ImageResult {
        try await load(url, nil, options, context, progress, ImageResult.from)
    }

    /// Loads the image at `url` as encoded bytes in `format`: the service's path.
    ///
    /// The variant (the image after the context's thumbnail size and transformer, encoded) is
    /// cached as bytes under its own key — the image's key plus the encoding — in the tiers of
    /// ``ImageContext/encodedStoreCacheType``. A hit returns the cached bytes without decoding,
    /// resizing, encoding or copying, and without suspending when it is in memory. A miss finds
    /// the decoded image in a tier or downloads and decodes it, then encodes on the manager's
    /// worker threads. Loads of the same variant share one pipeline. By default the decoded
    /// bitmap is kept in no tier (see ``ImageContext/imageStoreCacheTypeForEncodedLoads``).
    ///
    /// - Parameters:
    ///   - url: The image's URL; `nil` or an unusable URL fails with ``ImageKitError/invalidURL(_:)``.
    ///   - format: The encoding, fixed or chosen per image.
    ///   - options: Flags of this load.
    ///   - context: Values of this load that are not flags, or nil for the defaults.
    ///   - progress: Called as the download's body arrives, as for
    ///     ``image(for:options:context:progress:)``.
    /// - Throws: as ``image(for:options:context:progress:)``, and the encoder's error.
    public func encodedImage(for url: URL?, as format: OutputFormat, options: ImageOptions = [],
                             context: ImageContext? = nil,
                             progress: (@Sendable (DownloadProgress) -> Void)? = nil) async throws(ImageKitError)
        -> EncodedImageResult {
        try await load(url, format, options, context, progress, EncodedImageResult.from)
    }

    /// Loads the image at `url` and calls `completed` on the callback queue (the context's, else
    /// the configuration's) — once, or twice for a ``ImageOptions/refreshCached`` load whose
    /// cached image changed, and never after the returned task was cancelled.
    ///
    /// - Parameters:
    ///   - url: The image's URL; `nil` or an unusable URL fails with ``ImageKitError/invalidURL(_:)``.
    ///   - options: Flags of this load.
    ///   - context: Values of this load that are not flags, or nil for the defaults.
    ///   - progress: Called on the callback queue as the download's body arrives.
    ///   - completed: Called with the result or the error, as described above.
    /// - Returns: A task that cancels the load.
    @discardableResult
    public func loadImage(with url: URL?, options: ImageOptions = [], context: ImageContext? = nil,
                          progress: (@Sendable (DownloadProgress) -> Void)? = nil,
                          completed: @escaping @Sendable (Result<ImageResult, ImageKitError>) -> Void) -> ImageTask {
        start(url, nil, options, context, progress, ImageResult.from, completed)
    }

    /// Loads the image at `url` as encoded bytes in `format` (as
    /// ``encodedImage(for:as:options:context:progress:)`` does) and calls `completed` on the callback
    /// queue, as ``loadImage(with:options:context:progress:completed:)`` does.
    ///
    /// - Returns: A task that cancels the load.
    @discardableResult
    public func loadEncodedImage(with url: URL?, as format: OutputFormat, options: ImageOptions = [],
                                 context: ImageContext? = nil,
                                 progress: (@Sendable (DownloadProgress) -> Void)? = nil,
                                 completed: @escaping @Sendable (Result<EncodedImageResult, ImageKitError>) -> Void)
        -> ImageTask {
        start(url, format, options, context, progress, EncodedImageResult.from, completed)
    }

    /// Loads the image at `url` as a sequence of events, for `async` callers that want to see
    /// a load progress (SDWebImage's progressive load): ``ImageLoadEvent/progress(_:)`` as the
    /// download's body arrives, ``ImageLoadEvent/partial(_:)`` with the image decoded so far
    /// (with ``ImageOptions/progressiveLoad``, every ``ImageContext/progressiveInterval`` at
    /// most, from decoders that give partial images), then ``ImageLoadEvent/final(_:)``, after
    /// which the sequence ends. A ``ImageOptions/refreshCached`` load first yields its cached
    /// image as ``ImageLoadEvent/cached(_:)`` and ends there when the server says it is current.
    /// A failure ends the sequence with the ``ImageKitError``; ending the iteration (or
    /// cancelling its task) cancels the load.
    ///
    /// - Parameters:
    ///   - url: The image's URL; `nil` or an unusable URL fails with ``ImageKitError/invalidURL(_:)``.
    ///   - options: Flags of this load.
    ///   - context: Values of this load that are not flags, or nil for the defaults (its
    ///     ``ImageContext/partialImageHandler``, when set, is called as well).
    /// - Returns: The events, in order.
    public func images(for url: URL?, options: ImageOptions = [], context: ImageContext? = nil)
        -> AsyncThrowingStream<ImageLoadEvent, any Error> {
        AsyncThrowingStream { continuation in
            var context = context ?? ImageContext()
            let handler = context.partialImageHandler
            context.partialImageHandler = { image in
                handler?(image)
                continuation.yield(.partial(image))
            }
            let task = startTask(url, nil, options, context, { continuation.yield(.progress($0)) }) { delivery in
                switch delivery {
                case .image(let result, let isFinal):
                    switch ImageResult.from(result) {
                    case .success(let image):
                        continuation.yield(isFinal ? .final(image) : .cached(image))
                        if isFinal { continuation.finish() }
                    case .failure(let error):
                        continuation.finish(throwing: error)
                    }
                case .failure(let error):
                    continuation.finish(throwing: error)
                case .notModified, .cancelled:
                    continuation.finish()
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Cancels every load in flight (their completions are not called; `async` callers get
    /// ``ImageKitError/cancelled``).
    public func cancelAll() {
        let all = tasks.withLock { Array($0.values) }
        for task in all { task.cancel() }
    }

    /// Whether any load, pipeline or store is still in flight.
    public var isRunning: Bool { !statistics.isIdle }

    /// What is in flight now.
    public var statistics: ImageManagerStatistics {
        let running = tasks.withLock { $0.count }
        let c = counters.withLock { $0 }
        let turns = limiter.counts
        return ImageManagerStatistics(runningTasks: running + c.directReads, jobs: c.jobs,
                                      backgroundTasks: c.backgroundTasks, blocklistedURLs: failedURLs.count,
                                      activePipelines: turns.active, waitingPipelines: turns.waiting)
    }

    /// Stops the manager: loads asked for from now on fail with ``ImageKitError/shutDown(_:)``;
    /// the loads in flight finish (``ShutdownMode/drain``) or are cancelled
    /// (``ShutdownMode/cancel``); then pending disk writes complete and the manager's worker
    /// threads, its cache's disk threads and its loader's threads (a downloader's network
    /// thread) exit. Returns when all of that is done. The cache and loader the manager was
    /// created with are shut down with it (those a load's context named are not).
    ///
    /// Without it, releasing the last reference to a manager lets its threads exit once their
    /// queued work is done, and releasing its downloader aborts the downloads still running;
    /// disk writes in flight complete, but nobody waits for them.
    public func shutdown(_ mode: ShutdownMode = .drain) async {
        accepting.store(false, ordering: .sequentiallyConsistent)
        if mode == .cancel { cancelAll() }
        await Polling.waitUntil { self.statistics.isIdle }
        await workers.shutdown()
        await loader.shutdown(mode)
        await cache.shutdown()
    }

    /// The key the decoded image for `url` is cached under with these options and context: the
    /// URL's string (or the context's ``ImageContext/cacheKeyFilter``'s result) followed by the
    /// processing (thumbnail size, scale-down limit, frames, transformer), if any. Nil for a URL
    /// the manager does not load.
    /// With `format`, the key of the encoded variant instead.
    public func cacheKey(for url: URL?, as format: OutputFormat? = nil, options: ImageOptions = [],
                         context: ImageContext? = nil) -> String? {
        guard let url, let string = loadableString(url, context?.loader ?? loader) else { return nil }
        let context = context ?? ImageContext()
        let keys = ImageLoadKeys(url: url, urlString: string, output: format, options: options, context: context,
                                 configuration: configuration)
        return keys.variantKey ?? keys.key
    }
}
