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
/// Two call styles share one implementation: `async` (cancelling the awaiting task cancels the
/// load) and completion handlers returning an ``ImageTask``. Loads asking for the same cache
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
    private let failedURLs: FailedURLList
    /// Cleared by ``shutdown(_:)``: loads asked for later fail.
    private let accepting = Atomic<Bool>(true)
    private let events: EventFanOut<ImageManagerEvent>
    /// Whether loads make per-load observers (``ImageManagerConfiguration/loadObserverFactories``).
    let hasLoadObserverFactories: Bool
    private let nextID = Atomic<UInt64>(0)
    /// Loads that have not ended, by id.
    private let tasks = Locked<[UInt64: ImageTask]>([:])
    /// Pipelines loads may join and direct disk reads they may wait on, by key.
    let registry = Locked(ImageLoadRegistry<ImageLoadJob.Key, ImageLoadJob, DirectReadWaiter>())
    let counters = Locked(Counters())

    /// What is in flight, for ``statistics``.
    struct Counters: Sendable {
        var jobs = 0
        var backgroundTasks = 0
        /// `async` loads reading the disk tier themselves (``readDirectly(_:_:)``).
        var directReads = 0
    }

    /// What the synchronous part of a load found.
    fileprivate enum Prelude: Sendable {
        case failed(URL?, ImageKitError)
        /// A memory hit with nothing more to do (built without an ``LoadPlan``).
        case hit(LoadResult, ImageOptions, DispatchQueue)
        /// A memory hit that a refresh or a read of the original bytes follows.
        case memoryHit(LoadPlan, LoadResult)
        case load(LoadPlan)
    }

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

    /// The `async` call style over any output.
    private func load<Output: Sendable>(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions,
                                        _ context: ImageContext?,
                                        _ progress: (@Sendable (DownloadProgress) -> Void)?,
                                        _ extract: @escaping ImageTaskContinuation<Output>.Extract)
        async throws(ImageKitError) -> Output {
        let started = MonotonicClock.now()
        if Task.isCancelled { throw ImageKitError.cancelled }
        let observed = observeLoad(url)
        let prelude = prepare(url, output, options, context, observed.observers)
        /// Ends the load in the caller's task, reporting `event` (given the load's id and duration).
        func end(_ event: (UInt64, Duration) -> ImageManagerEvent) -> Duration {
            let total = MonotonicClock.duration(since: started)
            emit(event(observed.id ?? makeID(), total), to: observed.observers)
            for observer in observed.observers { observer.loadEnded() }
            return total
        }
        var askedFinalEntry = false
        switch prelude {
        case .hit(var result, _, _):
            result.metrics = ImageLoadMetrics(total: end { .completed(task: $0, url: result.url, source: .memory,
                                                                      duration: $1) })
            return try extract(result).get()
        case .failed(let url, let error):
            _ = end { .failed(task: $0, url: url, error: error, duration: $1) }
            throw error
        case .load(let r) where mayReadDirectly(r):
            switch await readDirectly(r, observed.observers) {
            case .hit(var result):
                result.metrics.total = end { .completed(task: $0, url: result.url, source: result.source,
                                                        duration: $1) }
                return try extract(result).get()
            case .cancelled:
                _ = end { .cancelled(task: $0, url: url, duration: $1) }
                throw ImageKitError.cancelled
            case .miss(let asked):
                askedFinalEntry = asked
            }
        default:
            break
        }
        let adapter = ImageTaskContinuation(extract)
        let queue = prelude.callbackQueue ?? context?.callbackQueue ?? configuration.callbackQueue
        let task = ImageTask(id: observed.id ?? makeID(), url: url, options: prelude.options, started: started,
                             manager: self, sink: adapter.receive, progress: Self.progressSink(progress, on: queue),
                             partial: Self.partialSink(prelude, on: queue),
                             observers: observed.observers)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                adapter.install(continuation)
                launch(task, prelude, askedFinalEntry: askedFinalEntry)
            }
        } onCancel: {
            task.cancel()
        }
        return try outcome.get()
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

    /// The completion-handler call style over any output.
    private func start<Output: Sendable>(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions,
                                         _ context: ImageContext?,
                                         _ progress: (@Sendable (DownloadProgress) -> Void)?,
                                         _ extract: @escaping ImageTaskContinuation<Output>.Extract,
                                         _ completed: @escaping @Sendable (Result<Output, ImageKitError>) -> Void)
        -> ImageTask {
        startTask(url, output, options, context, progress) { delivery in
            switch delivery {
            case .image(let result, _): completed(extract(result))
            case .failure(let error): completed(.failure(error))
            case .notModified, .cancelled: break
            }
        }
    }

    /// Starts a load whose deliveries go to `deliver` on the callback queue (the context's, else
    /// the configuration's), each once the caller may have it: images and failures, and the end
    /// of a refreshed load whose cached image is current (``ImageTask/Delivery/notModified``).
    private func startTask(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions, _ context: ImageContext?,
                           _ progress: (@Sendable (DownloadProgress) -> Void)?,
                           _ deliver: @escaping @Sendable (ImageTask.Delivery) -> Void) -> ImageTask {
        let started = MonotonicClock.now()
        let observed = observeLoad(url)
        let prelude = prepare(url, output, options, context, observed.observers)
        let queue = prelude.callbackQueue ?? context?.callbackQueue ?? configuration.callbackQueue
        let sink: ImageTask.Sink = { task, delivery in
            switch delivery {
            case .image, .failure:
                queue.async { if task.claim(delivery) { deliver(delivery) } }
            case .notModified:
                if task.claim(delivery) { queue.async { deliver(delivery) } }
            case .cancelled:
                break
            }
        }
        let task = ImageTask(id: observed.id ?? makeID(), url: url, options: prelude.options, started: started,
                             manager: self, sink: sink, progress: Self.progressSink(progress, on: queue),
                             partial: Self.partialSink(prelude, on: queue), observers: observed.observers)
        launch(task, prelude)
        return task
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

    /// The context's partial-image handler run on `queue` while its load runs, for a
    /// ``ImageOptions/progressiveLoad`` load that reaches a pipeline (both call styles).
    private static func partialSink(_ prelude: Prelude, on queue: DispatchQueue) -> ImageTask.PartialSink? {
        let r: LoadPlan
        switch prelude {
        case .load(let request), .memoryHit(let request, _): r = request
        case .failed, .hit: return nil
        }
        guard r.options.contains(.progressiveLoad), let handler = r.context.partialImageHandler else { return nil }
        return { task, image in queue.async { if task.isRunning { handler(image) } } }
    }

    /// `progress` run on `queue` while its load runs (both call styles).
    private static func progressSink(_ progress: (@Sendable (DownloadProgress) -> Void)?,
                                     on queue: DispatchQueue) -> ImageTask.ProgressSink? {
        guard let progress else { return nil }
        return { task, value in queue.async { if task.isRunning { progress(value) } } }
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

    // MARK: - Failed URLs

    /// Whether `url` is on the failed-URL blocklist now.
    public func isBlocklisted(_ url: URL) -> Bool {
        failedURLs.contains(url.absoluteString)
    }

    /// Takes `url` off the failed-URL blocklist.
    public func removeFailedURL(_ url: URL) {
        failedURLs.remove(url.absoluteString)
    }

    /// Empties the failed-URL blocklist.
    public func removeAllFailedURLs() {
        failedURLs.removeAll()
    }

    /// Puts `url` on the blocklist when `loader` (the one that failed) allows it and, for an
    /// HTTP status, the status is one of the configuration's — or when the delegate says so.
    func recordFailure(_ url: URL, _ error: ImageKitError, loader: any ImageLoading) {
        guard configuration.failedURLTimeToLive > .zero else { return }
        var lasting = loader.shouldBlockFailedURL(url, error: error)
        if lasting, let status = error.httpStatus {
            lasting = configuration.failedURLStatusCodes.contains(status)
        }
        let block = configuration.delegate?.shouldBlockFailedURL(url, error: error) ?? lasting
        if block { failedURLs.insert(url.absoluteString, error: error) }
    }

    // MARK: - The load

    /// The id and the per-load observers of a load being asked for, made in the caller's context:
    /// no id (it is taken when needed) and no observers without load observer factories.
    @inline(__always)
    private func observeLoad(_ url: URL?) -> (id: UInt64?, observers: [any ImageLoadObserver]) {
        guard hasLoadObserverFactories else { return (nil, []) }
        let id = makeID()
        return (id, configuration.loadObserverFactories.compactMap { $0.makeObserver(task: id, url: url) })
    }

    /// Steps 1–5 of a load, synchronously: validate the URL, check the blocklist, run the
    /// options processor, compute the keys, look in the memory tier (reported to the
    /// manager's observers and the load's).
    private func prepare(_ url: URL?, _ output: OutputFormat?, _ options: ImageOptions,
                         _ context: ImageContext?, _ loadObservers: [any ImageLoadObserver]) -> Prelude {
        guard accepting.load(ordering: .relaxed) else {
            return .failed(url, .shutDown("the image manager was shut down"))
        }
        guard let url, let string = loadableString(url, context?.loader ?? loader) else {
            return .failed(url, .invalidURL("\(url.map { "\"\(MessageURL.describe($0))\"" } ?? "no URL") is not an "
                + (configuration.allowsLocalFiles ? "http, https or file" : "http or https")
                + " URL, nor one the manager's loader accepts"))
        }
        if !options.contains(.retryFailed), let failure = failedURLs.failure(string) {
            return .failed(url, .blocklisted("\(MessageURL.describe(string)) failed earlier (\(failure.message)); "
                + "retry with .retryFailed or after the blocklist entry expires", original: failure))
        }
        var options = options
        var context = context ?? ImageContext()
        if let processor = configuration.optionsProcessor {
            (options, context) = processor(url, options, context)
        }
        if let deadline = context.deadline, deadline <= .now {
            return .failed(url, .deadlineExceeded("the load's deadline had passed when it started"))
        }
        let keys = ImageLoadKeys(url: url, urlString: string, output: output, options: options, context: context,
                                 configuration: configuration)
        let hit = LoadPlan.query(options, context).includesMemory
            ? memoryHit(url, keys, context.cache ?? cache, loadObservers) : nil
        if let hit, !options.contains(.refreshCached), !options.contains(.queryMemoryData) {
            return .hit(hit, options, context.callbackQueue ?? configuration.callbackQueue)
        }
        let request = LoadPlan(url: url, keys: keys, output: output, options: options, context: context,
                                       configuration: configuration, cache: cache, loader: loader,
                                       coder: coders)
        return hit.map { .memoryHit(request, $0) } ?? .load(request)
    }

    /// The URL's string when the manager loads it: http(s) with a host, (when allowed) `file:`,
    /// or any other URL `loader` accepts. Which loader loads an http(s) or `file:` URL (and
    /// whether one does) is found when the load reaches the loader, after the cache tiers.
    private func loadableString(_ url: URL, _ loader: any ImageLoading) -> String? {
        let string = url.absoluteString
        switch URLKind(string) {
        case .web(let hasHost):
            return hasHost ? string : nil
        case .file:
            return configuration.allowsLocalFiles && !url.path.isEmpty ? string : nil
        case .other:
            return loader.canLoad(url) ? string : nil
        }
    }

    /// What the memory tier holds for the request (the encoded variant for loads asking for
    /// bytes, else the decoded image), reported to the manager's observers and the load's.
    /// The cache's synchronous ``ImageCaching/memoryValue(forKey:kind:)`` answers it.
    private func memoryHit(_ url: URL, _ keys: ImageLoadKeys, _ cache: any ImageCaching,
                           _ loadObservers: [any ImageLoadObserver]) -> LoadResult? {
        let observed = !events.isEmpty || !loadObservers.isEmpty
        let start = observed ? MonotonicClock.now() : 0
        var result: LoadResult?
        if let variantKey = keys.variantKey {
            if case .variant(let encoded)? = cache.memoryValue(forKey: variantKey, kind: .variant) {
                result = LoadResult(encoded: encoded, source: .memory, url: url, metrics: ImageLoadMetrics())
            }
        } else if case .image(let image)? = cache.memoryValue(forKey: keys.key, kind: .image) {
            result = LoadResult(image: image, source: .memory, url: url, metrics: ImageLoadMetrics())
        }
        if observed {
            emit(.cacheQuery(url: url, key: keys.variantKey ?? keys.key, tier: .memory, hit: result != nil,
                             duration: MonotonicClock.duration(since: start)), to: loadObservers)
        }
        return result
    }

    /// Steps 6–11: hands `task` its result or starts (or joins) the pipeline that will (which
    /// does not ask again for the final entry when `askedFinalEntry`: a direct read missed it).
    private func launch(_ task: ImageTask, _ prelude: Prelude, askedFinalEntry: Bool = false) {
        switch prelude {
        case .failed(_, let error):
            task.finish(.failure(error), detach: false)
        case .hit(let result, _, _):
            task.finish(.image(result, isFinal: true), detach: false)
        case .memoryHit(let r, let result):
            guard register(task, r) else { return }
            if r.isRefresh {
                task.deliverCached(result)
                join(task, r)
            } else {  // .queryMemoryData
                let read = spawn {
                    var withData = result
                    withData.originalData = (try? await r.cache.entry(forKey: r.baseKey, kind: .original,
                                                                      from: .all))?.value.original
                    task.finish(.image(withData, isFinal: true), detach: false)
                }
                if !task.setWork(.task(read)) { read.cancel() }
            }
        case .load(let r):
            guard register(task, r) else { return }
            join(task, r, askedFinalEntry: askedFinalEntry)
        }
    }

    /// Records `task` as running and arms its deadline; false when it was cancelled already.
    private func register(_ task: ImageTask, _ r: LoadPlan) -> Bool {
        let running = tasks.withLock { t -> Bool in
            guard task.isRunning else { return false }
            t[task.id] = task
            return true
        }
        if running, let deadline = r.context.deadline { task.arm(deadline: deadline) }
        return running
    }

    /// Puts `task` on the pipeline for its request: one in flight with the same key, or a new one
    /// (told whether a direct read asked for the final entry already).
    private func join(_ task: ImageTask, _ r: LoadPlan, askedFinalEntry: Bool = false) {
        let key = r.pipelineKey(exclusive: r.isShareable ? 0 : makeID())
        let (job, cached, isNew) = registry.withLock { reg -> (ImageLoadJob, LoadResult?, Bool) in
            if let existing = reg.jobs[key], case .joined(let cached) = existing.attach(task) {
                return (existing, cached, false)
            }
            let job = ImageLoadJob(request: r, key: key, manager: self, askedFinalEntry: askedFinalEntry)
            _ = job.attach(task)
            reg.jobs[key] = job
            return (job, nil, true)
        }
        if isNew { counters.withLock { $0.jobs += 1 } }
        if !task.setWork(.job(job)) { job.detach(task) }
        if let cached { task.deliverCached(cached) }
        if isNew { job.start() }
    }

    // MARK: - Bookkeeping

    /// A task that ended (completed, failed or cancelled) leaves the registry.
    func taskEnded(_ task: ImageTask) {
        tasks.withLock { $0[task.id] = nil }
    }

    /// A pipeline's task ended.
    func jobEnded(_ job: ImageLoadJob) {
        registry.withLock { $0.jobEnded(job, key: job.key) }
        counters.withLock { $0.jobs -= 1 }
    }

    /// Starts a Swift task counted in ``statistics`` until it ends, on `executor` when given.
    func spawn(on executor: (any TaskExecutor)? = nil,
               _ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        counters.withLock { $0.backgroundTasks += 1 }
        return Task(executorPreference: executor) {
            await body()
            self.counters.withLock { $0.backgroundTasks -= 1 }
        }
    }

    /// Sends `event` to the manager's observers, then to `loadObservers` (those of the loads it
    /// is about), through ``EventFanOut``; builds nothing when there are none.
    func emit(_ event: @autoclosure () -> ImageManagerEvent, to loadObservers: [any ImageLoadObserver] = []) {
        events.emit(event(), to: loadObservers)
    }

    func makeID() -> UInt64 {
        nextID.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

extension ImageManager.Prelude {
    /// The options after the options processor (none when the load failed before it).
    fileprivate var options: ImageOptions {
        switch self {
        case .failed: []
        case .hit(_, let options, _): options
        case .memoryHit(let r, _), .load(let r): r.options
        }
    }

    /// The queue completion handlers run on, once the context is known.
    fileprivate var callbackQueue: DispatchQueue? {
        switch self {
        case .failed: nil
        case .hit(_, _, let queue): queue
        case .memoryHit(let r, _), .load(let r): r.callbackQueue
        }
    }
}
