#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The work behind one load, or behind several coalesced ones: the loads asking for the same
/// cache key with the same processing share one disk query, one download, one decode, one
/// transform and one store.
///
/// The pipeline reaches the cache only through ``ImageCaching``: the memory tier first,
/// synchronously, then (when the cache does not answer its memory tier synchronously, the
/// memory tier too) the variant, the decoded image and the original bytes, in that order.
///
/// The pipeline runs in one Swift task that only awaits: disk I/O runs on the disk cache's
/// threads, the download on the loader's, decoding and transforming on the manager's
/// worker threads. A load that a disk read may answer starts its task on the disk cache's
/// threads (``ImageCaching/readExecutor(forKey:kind:from:)``), where the read runs in place
/// (an `async` load reads such a hit without a pipeline: ``ImageManager/readDirectly(_:_:)``).
/// When the last load waiting on it is cancelled (before the result exists), the task is
/// cancelled — which aborts the download — and the decode's ``DecodeCancellation``
/// is cancelled. Decoding and encoding go through the load's ``ImageCoding`` coder only.
///
/// When the loader streams (``ImageStreamingLoading``) and nothing needs the whole body first,
/// the body is decoded as it arrives (``StreamingDecode``), and kept only when the original
/// bytes are stored: the download and the decode overlap, and a thumbnail load does not hold
/// the body.
final class ImageLoadJob: Sendable {
    /// What coalesces: loads with equal keys share a pipeline.
    struct Key: Hashable, Sendable {
        let key: String
        let cache: ObjectIdentifier
        let loader: ObjectIdentifier
        let coder: ObjectIdentifier
        let options: UInt32
        let query: ImageCacheType
        let store: ImageCacheType
        let encodedStore: ImageCacheType
        let storesOriginalData: Bool
        /// Non-zero for a load that shares with no other.
        let exclusive: UInt64
    }

    /// Who waits on the pipeline and its stage (see ``ImageLoadJobStateMachine``).
    typealias StateMachine = ImageLoadJobStateMachine<ImageTask, LoadResult, Task<Void, Never>>

    /// What the pipeline has for its loads so far, and where each part came from.
    private struct Found: Sendable {
        var image: Image?
        /// Where ``image`` was found (`[]`: decoded by this pipeline).
        var imageTier: ImageCacheType = []
        var encoded: EncodedImage?
        /// Where ``encoded`` was found (`[]`: encoded by this pipeline).
        var encodedTier: ImageCacheType = []
        var metadata: DiskCacheMetadata?
        /// The bytes the image was decoded from, when this pipeline decoded it.
        var originalData: Data?
        /// Whether ``originalData`` was downloaded now (and so goes to the original-data store).
        var downloaded = false
        var decode: Duration?
        var transform: Duration?

        /// What the load reports: where the first part found came from.
        var source: ImageSource {
            let tier = encoded != nil && !encodedTier.isEmpty ? encodedTier : imageTier
            return tier.isEmpty ? .loader : ImageSource(tier: tier)
        }
    }

    /// What the loader brought.
    private struct Fetched: Sendable {
        var data: Data
        var status: DownloadResult.Status
        var response: DownloadResponse?
        var metrics: DownloadMetrics?
    }

    /// A decoded and transformed image with the time each step took.
    private struct Processed: Sendable {
        var image: Image
        var decode: Duration
        var transform: Duration?
    }

    let key: Key
    let request: LoadPlan
    private let manager: ImageManager
    /// Carries the worker pool's helper-yield signal: a decode given the helper thread as the
    /// pool's lone job gives repeated work back once another job arrives.
    private let cancellation: DecodeCancellation
    private let state = Locked(StateMachine())
    /// Whether a direct read asked the tiers for the final entry (the variant of a load asking
    /// for bytes, else the image) and missed: the pipeline does not ask again.
    private let askedFinalEntry: Bool

    init(request: LoadPlan, key: Key, manager: ImageManager, askedFinalEntry: Bool = false) {
        self.request = request
        self.key = key
        self.manager = manager
        self.askedFinalEntry = askedFinalEntry
        cancellation = DecodeCancellation(helperYield: manager.workers.helperYield)
    }

    // MARK: - Loads joining and leaving

    /// Adds `task` to the loads waiting on this pipeline, unless it no longer accepts any.
    func attach(_ task: ImageTask) -> StateMachine.AttachAction {
        state.withLock { $0.attach(task) }
    }

    /// Removes `task`; stops the pipeline when it was the last load and there is no result yet.
    func detach(_ task: ImageTask) {
        switch state.withLock({ $0.detach(task) }) {
        case .none:
            break
        case .stop(let running):
            cancellation.cancel()
            running?.cancel()
        }
    }

    /// Starts the pipeline's task: on the cache's read executor when a disk read may answer the
    /// load (see ``readExecutor()``), else on the global concurrent executor.
    func start() {
        let task = manager.spawn(on: readExecutor()) { [self] in
            await run()
            manager.jobEnded(self)
        }
        switch state.withLock({ $0.started(task) }) {
        case .none: break
        case .cancel: task.cancel()
        }
    }

    /// The executor of the cache's threads when the pipeline's first disk query (the variant,
    /// else the decoded image) may hit there and, on a hit, ends the load: the task then starts
    /// on the thread that reads, and a lone disk hit costs a hop there and one back to the
    /// caller. Nil for a refreshed load, which downloads after its hit.
    private func readExecutor() -> (any TaskExecutor)? {
        let r = request
        guard !r.isRefresh else { return nil }
        let tiers = r.tiersLeftToQuery
        guard !tiers.isEmpty else { return nil }
        if let variantKey = r.variantKey, let executor = r.cache.readExecutor(forKey: variantKey, kind: .variant,
                                                                            from: tiers) {
            return executor
        }
        return r.cache.readExecutor(forKey: r.key, kind: .image, from: tiers)
    }

    // MARK: - The pipeline

    private func run() async {
        let r = request
        var found = memoryHit()
        var diskQuery: Duration?
        let tiers = r.tiersLeftToQuery
        if found == nil, !tiers.isEmpty {
            let start = MonotonicClock.now()
            // What a direct read asked for already (the final entry) is not asked again.
            if !askedFinalEntry || r.variantKey == nil { found = await cachedVariant(tiers) }
            if found == nil, !askedFinalEntry || r.variantKey != nil { found = await cachedImage(tiers) }
            if found == nil { found = await originalData(tiers) }
            diskQuery = MonotonicClock.duration(since: start)
        }
        guard !Task.isCancelled else { return }
        var metrics = ImageLoadMetrics(diskQuery: diskQuery, decode: found?.decode, transform: found?.transform)
        if let hit = found, !r.isRefresh {
            do {
                let done = try await encoded(hit, &metrics)
                await complete(done, metrics: metrics)
            } catch {
                fail(ImageKitError(wrapping: error))
            }
            return
        }
        var cached: LoadResult?
        var validators: DownloadRequest.Validators?
        if let hit = found {
            let metadata = hit.metadata == nil ? await storedMetadata() : hit.metadata
            validators = metadata.flatMap(Self.validators)
            let done: Found
            do {
                done = try await encoded(hit, &metrics)
            } catch {
                return fail(ImageKitError(wrapping: error))
            }
            found = done
            let result = LoadResult(image: done.image, encoded: done.encoded, source: done.source, url: r.url,
                                    originalData: done.originalData, metrics: metrics)
            cached = result
            deliverCached(result)
        }
        if r.options.contains(.fromCacheOnly) {
            if let cached { return finishAll(.notModified(cached)) }
            return fail(.notInCache("\(MessageURL.describe(r.url)) is in no cache tier searched"))
        }
        if let delegate = manager.configuration.delegate, !delegate.shouldDownload(r.url) {
            if let cached { return finishAll(.notModified(cached)) }
            return fail(.vetoed("the manager's delegate refused to download \(MessageURL.describe(r.url))"))
        }
        // A turn bounds the bodies and bitmaps alive at once; waiting holds nothing.
        let waitStart = MonotonicClock.now()
        do {
            try await manager.limiter.acquire(priority: r.priority)
        } catch {
            return fail(ImageKitError(wrapping: error))
        }
        defer { manager.limiter.release() }
        metrics.queueWait = MonotonicClock.duration(since: waitStart)
        let streaming = streamingDecode(validators: validators)
        let fetched: Fetched
        do {
            fetched = try await fetchUntilDecodeFails(validators: validators, streaming: streaming)
            if let validator = r.context.responseValidator, let response = fetched.response {
                do {
                    try validator(response)
                } catch {
                    throw error as? ImageKitError
                        ?? ImageKitError(code: .invalidResponse,
                                         message: "the response validator rejected "
                                             + "\(MessageURL.describe(r.url)): \(error)",
                                         underlying: error)
                }
            }
        } catch {
            streaming?.abandon()
            if let failure = streaming?.failure, !Task.isCancelled {
                // The decode failed first (a header over the limits, corrupt data) and stopped the
                // download: the load fails with the decode's error.
                emit(.decodeFailed(url: r.url, key: r.key, error: failure, duration: .zero))
                return fail(failure)
            }
            return fail(ImageKitError(wrapping: error))
        }
        guard !Task.isCancelled else {
            streaming?.abandon()
            return
        }
        metrics.download = fetched.metrics
        if fetched.status == .notModified, let cached, let found {
            streaming?.abandon()
            // Current: keep the bitmap decoded from the original bytes, as a plain disk hit would.
            if found.originalData != nil, let image = found.image, r.store.includesDisk {
                await store(bitmap: image, encoded: nil, original: nil, metadata: found.metadata ?? DiskCacheMetadata())
            }
            return finishAll(.notModified(cached))
        }
        do {
            let processed: Processed
            if let streaming {
                processed = try await processStreamed(streaming)
                metrics.streamQueuePeakBytes = streaming.peakQueuedBytes
            } else {
                processed = try await process(fetched.data)
            }
            guard !Task.isCancelled else { return }
            metrics.decode = processed.decode
            metrics.transform = processed.transform
            var metadata = DiskCacheMetadata()
            metadata.etag = fetched.response?.entityTag
            metadata.lastModified = fetched.response?.lastModified
            // A streamed body that was not kept is nowhere: the result carries no original bytes.
            let original = streaming.map { $0.keepsBody } ?? true ? fetched.data : nil
            let made = Found(image: processed.image, metadata: metadata, originalData: original, downloaded: true)
            let done = try await encoded(made, &metrics)
            guard !Task.isCancelled else { return }
            await complete(done, metrics: metrics)
        } catch {
            fail(ImageKitError(wrapping: error))
        }
    }

    /// The variant (for loads asking for bytes), else the decoded image, in the memory tier,
    /// as the cache answers synchronously.
    private func memoryHit() -> Found? {
        let r = request
        guard r.query.includesMemory else { return nil }
        if let variantKey = r.variantKey,
           case .variant(let encoded)? = r.cache.memoryValue(forKey: variantKey, kind: .variant) {
            return Found(encoded: encoded, encodedTier: .memory)
        }
        guard case .image(let image)? = r.cache.memoryValue(forKey: r.key, kind: .image) else { return nil }
        return Found(image: image, imageTier: .memory)
    }

    /// Asks `tiers` for the entry of `kind` under `key`, reporting the query to the waiting loads.
    private func query(_ key: String, _ kind: ImageCacheEntryKind, _ tiers: ImageCacheType) async -> ImageCacheHit? {
        await request.query(key, kind, tiers) { emit($0()) }
    }

    /// The encoded variant stored in `tiers` for the key, unless expired or unreadable.
    private func cachedVariant(_ tiers: ImageCacheType) async -> Found? {
        guard let variantKey = request.variantKey, let hit = await query(variantKey, .variant, tiers),
              case .variant(let encoded) = hit.value
        else { return nil }
        return Found(encoded: encoded, encodedTier: hit.tier, metadata: hit.metadata)
    }

    /// `found` with the encoded variant the load asks for, encoding the image on a worker
    /// thread when the variant was not found; `found` itself for loads that want no bytes.
    private func encoded(_ found: Found, _ metrics: inout ImageLoadMetrics) async throws -> Found {
        let r = request
        guard let output = r.output, found.encoded == nil else { return found }
        guard let image = found.image else {
            throw ImageKitError.internal("no image to encode for \(MessageURL.describe(r.url))")
        }
        let format = output.encodeFormat(for: image)
        let manager = self.manager
        let key = r.variantKey ?? r.key
        let start = MonotonicClock.now()
        do {
            let encoded = try await manager.workers.run(priority: r.priority) {
                try r.coder.encode(image, as: format)
            }
            let duration = MonotonicClock.duration(since: start)
            metrics.encode = duration
            emit(.encoded(url: r.url, key: key, format: encoded.format, bytes: encoded.data.count,
                                  duration: duration, error: nil))
            var done = found
            done.encoded = encoded
            done.encodedTier = []
            return done
        } catch {
            let e = ImageKitError(wrapping: error)
            emit(.encoded(url: r.url, key: key, format: format.imageFormat, bytes: 0,
                                  duration: MonotonicClock.duration(since: start), error: e))
            throw e
        }
    }

    /// The decoded image stored in `tiers` for the key, unless expired.
    private func cachedImage(_ tiers: ImageCacheType) async -> Found? {
        guard let hit = await query(request.key, .image, tiers), case .image(let image) = hit.value else { return nil }
        return Found(image: image, imageTier: hit.tier, metadata: hit.metadata)
    }

    /// The image decoded (and transformed) from the original bytes stored in `tiers` for the
    /// URL, unless there are none, they expired, or they no longer decode.
    private func originalData(_ tiers: ImageCacheType) async -> Found? {
        let r = request
        guard let hit = await query(r.baseKey, .original, tiers), case .original(let data) = hit.value else {
            return nil
        }
        // Decoding holds the bytes and a bitmap: it takes a turn like a download.
        guard (try? await manager.limiter.acquire(priority: r.priority)) != nil else { return nil }
        defer { manager.limiter.release() }
        guard let processed = try? await process(data) else { return nil }
        return Found(image: processed.image, imageTier: hit.tier, metadata: hit.metadata, originalData: data,
                     decode: processed.decode, transform: processed.transform)
    }

    /// The metadata stored with the URL's original bytes, the encoded variant or the decoded
    /// image (expired or not), for revalidating what was found in memory.
    private func storedMetadata() async -> DiskCacheMetadata? {
        let r = request
        var entries: [(String, ImageCacheEntryKind)] = [(r.baseKey, .original)]
        if let variantKey = r.variantKey { entries.append((variantKey, .variant)) }
        entries.append((r.key, .image))
        for (key, kind) in entries {
            if let metadata = await r.cache.metadata(forKey: key, kind: kind, from: .all) { return metadata }
        }
        return nil
    }

    private static func validators(_ metadata: DiskCacheMetadata) -> DownloadRequest.Validators? {
        guard metadata.etag != nil || metadata.lastModified != nil else { return nil }
        return DownloadRequest.Validators(entityTag: metadata.etag, lastModified: metadata.lastModified)
    }

    /// The decode that takes the body as it streams in, or nil when the body is decoded whole:
    /// streaming is off, the loader does not stream this URL, or the load revalidates a cached
    /// copy (a 304 has no body to decode, and today's path keeps what it found).
    private func streamingDecode(validators: DownloadRequest.Validators?) -> StreamingDecode? {
        let r = request
        guard manager.configuration.streamsDecoding, validators == nil,
              let loader = r.loader as? any ImageStreamingLoading, loader.streamsBody(of: r.url) else { return nil }
        return StreamingDecode(coder: r.coder, options: r.decodeOptions, cancellation: cancellation,
                               workers: manager.workers, priority: r.priority, keepsBody: r.storesOriginalData,
                               interval: r.context.progressiveInterval) { [weak self] in self?.partialSink() }
    }

    /// Where partial images go while some load waiting on the pipeline wants them, else nil.
    private func partialSink() -> StreamingDecode.PartialSink? {
        let waiters = state.withLock { $0.waiters }
        guard waiters.contains(where: \.wantsPartialImages) else { return nil }
        return { [weak self] image in
            guard let self else { return }
            for task in self.state.withLock({ $0.waiters }) { task.partial(image) }
        }
    }

    /// ``fetch(validators:streaming:)``, cancelled as soon as the streamed decode fails: the
    /// rest of the body could not change the outcome, so a file refused on its header (an
    /// image over the limits) costs its first bytes, not the whole download. A transfer that
    /// other loads share goes on for them (cancelling one waiter cancels only its share).
    private func fetchUntilDecodeFails(validators: DownloadRequest.Validators?,
                                       streaming: StreamingDecode?) async throws -> Fetched {
        guard let streaming else { return try await fetch(validators: validators, streaming: nil) }
        let transfer = Task { try await self.fetch(validators: validators, streaming: streaming) }
        streaming.whenFailed { transfer.cancel() }
        return try await withTaskCancellationHandler {
            try await transfer.value
        } onCancel: {
            transfer.cancel()
        }
    }

    /// Loads the URL's bytes (conditionally with `validators`) through the request's loader;
    /// with `streaming`, hands them to it as they arrive.
    private func fetch(validators: DownloadRequest.Validators?, streaming: StreamingDecode?) async throws -> Fetched {
        let r = request
        guard r.loader.canLoad(r.url) else {
            throw ImageKitError.invalidURL("the image loader does not load \(MessageURL.describe(r.url))")
        }
        emit(.downloadStarted(url: r.url))
        let start = MonotonicClock.now()
        do {
            let request = r.loaderRequest(validators: validators)
            let progress: @Sendable (DownloadProgress) -> Void = { [weak self] p in self?.progress(p) }
            let result: ImageLoaderResult
            if let streaming, let loader = r.loader as? any ImageStreamingLoading {
                result = try await loader.load(request, keepingData: streaming.keepsBody, progress: progress) { piece in
                    streaming.receive(piece)
                }
            } else {
                result = try await r.loader.load(request, progress: progress)
            }
            if let response = result.response, let metrics = result.metrics {
                emit(.downloadFinished(url: r.url, response: response, metrics: metrics))
            }
            return Fetched(data: result.data, status: result.status, response: result.response, metrics: result.metrics)
        } catch {
            let e = ImageKitError(wrapping: error)
            emit(.downloadFailed(url: r.url, error: e, duration: MonotonicClock.duration(since: start)))
            throw e
        }
    }

    /// Decodes and transforms `data` on the worker threads.
    private func process(_ data: Data) async throws -> Processed {
        let r = request
        let cancellation = self.cancellation
        do {
            return try await manager.workers.run(priority: r.priority) { [self] in
                try Self.decodeAndTransform(data, r, self, cancellation)
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// Ends a streamed decode and transforms its image on the worker threads. Its events come
    /// once the body is in: `decodeStarted`, then `decoded` with the time the decode spent on
    /// the workers over the whole stream.
    private func processStreamed(_ streaming: StreamingDecode) async throws -> Processed {
        let r = request
        emit(.decodeStarted(url: r.url, key: r.key))
        let start = MonotonicClock.now()
        let image: Image
        let decode: Duration
        do {
            (image, decode) = try await streaming.finish()
        } catch {
            // The time from the end of the body to the failure: what the load waited for it.
            emit(.decodeFailed(url: r.url, key: r.key, error: error, duration: MonotonicClock.duration(since: start)))
            throw error
        }
        emit(.decoded(url: r.url, key: r.key, size: PixelSize(width: image.width, height: image.height),
                      duration: decode))
        do {
            return try await manager.workers.run(priority: r.priority) { [self] in
                try Self.transform(image, decode: decode, r, self)
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// The decode through the load's coder (stopped once `cancellation` is cancelled) and the
    /// transform; runs on a worker thread.
    private static func decodeAndTransform(_ data: Data, _ r: LoadPlan, _ job: ImageLoadJob,
                                           _ cancellation: DecodeCancellation) throws -> Processed {
        job.emit(.decodeStarted(url: r.url, key: r.key))
        let start = MonotonicClock.now()
        let image: Image
        do {
            var options = r.decodeOptions
            if job.manager.configuration.decodeHelperThreadWhenIdle, job.manager.workers.offersSecondCore {
                options.usesHelperThread = true
            }
            image = try r.coder.decode(data, options: options, cancellation: cancellation)
        } catch {
            let e = ImageKitError(wrapping: error)
            job.emit(.decodeFailed(url: r.url, key: r.key, error: e, duration: MonotonicClock.duration(since: start)))
            throw e
        }
        let decode = MonotonicClock.duration(since: start)
        job.emit(.decoded(url: r.url, key: r.key, size: PixelSize(width: image.width, height: image.height),
                              duration: decode))
        return try transform(image, decode: decode, r, job)
    }

    /// `image` through the load's transformer, if it has one for it; runs on a worker thread.
    private static func transform(_ image: Image, decode: Duration, _ r: LoadPlan,
                                  _ job: ImageLoadJob) throws -> Processed {
        guard let transformer = r.transformer(for: image) else {
            return Processed(image: image, decode: decode)
        }
        let transformStart = MonotonicClock.now()
        do {
            let transformed = try transformer.transform(image, stoppingOn: job.cancellation)
            let transform = MonotonicClock.duration(since: transformStart)
            job.emit(.transformed(url: r.url, key: r.key, transformer: transformer.key, duration: transform,
                                      error: nil))
            return Processed(image: transformed, decode: decode, transform: transform)
        } catch {
            // Stopped because nobody waits any more: a cancellation, not a failed transform.
            let e = job.cancellation.isCancelled
                ? ImageKitError.cancelled
                : ImageKitError(code: .transformFailed, message: "\(transformer.key): \(error)", underlying: error)
            job.emit(.transformed(url: r.url, key: r.key, transformer: transformer.key,
                                      duration: MonotonicClock.duration(since: transformStart), error: e))
            throw e
        }
    }

    // MARK: - Results

    /// Stores the result in memory, hands it to the loads that do not wait for the disk, writes
    /// the disk tier, then hands it to the loads that do (``ImageOptions/waitStoreCache``).
    private func complete(_ found: Found, metrics: ImageLoadMetrics) async {
        let r = request
        await r.storeInMemory(image: found.image, imageTier: found.imageTier, encoded: found.encoded,
                              encodedTier: found.encodedTier, metadata: found.metadata ?? DiskCacheMetadata()) {
            emit($0())
        }
        // Decoded here (downloaded, or from the original-data store): the bitmap is new to disk.
        let bitmap = r.store.includesDisk && (found.originalData != nil || found.downloaded) ? found.image : nil
        let encoded = r.encodedStore.includesDisk && found.encodedTier.isEmpty ? found.encoded : nil
        var original: Data?
        if found.downloaded, r.storesOriginalData, let data = found.originalData, let image = found.image {
            original = r.context.cacheSerializer.map { $0(image, data, r.url) } ?? data
        }
        let waiters = state.withLock { $0.finish() }
        var result = LoadResult(image: found.image, encoded: found.encoded, source: found.source, url: r.url,
                                originalData: found.originalData, metrics: metrics)
        result.metrics.sharedBy = waiters.count
        let writesDisk = bitmap != nil || encoded != nil || original != nil
        var later: [ImageTask] = []
        for task in waiters {
            if writesDisk && task.options.contains(.waitStoreCache) {
                later.append(task)
            } else {
                task.finish(.image(result, isFinal: true), detach: false)
            }
        }
        guard writesDisk else { return }
        result.metrics.store = await store(bitmap: bitmap, encoded: encoded, original: original,
                                           metadata: found.metadata ?? DiskCacheMetadata(), for: later)
        for task in later { task.finish(.image(result, isFinal: true), detach: false) }
    }

    /// Writes the decoded image, the encoded variant and the original bytes to the disk tier;
    /// returns the time it took. A failed write (disk full, …) is reported to the observers and
    /// otherwise ignored. `tasks`: the loads it is reported to besides the manager's observers
    /// (nil: those waiting on the pipeline).
    @discardableResult
    private func store(bitmap image: Image?, encoded: EncodedImage?, original: Data?,
                       metadata: DiskCacheMetadata, for tasks: [ImageTask]? = nil) async -> Duration {
        let r = request
        let start = MonotonicClock.now()
        var failure: ImageKitError?
        if let image {
            do { try await r.cache.store(.image(image), forKey: r.key, to: .disk, metadata: metadata) } catch {
                failure = ImageKitError(wrapping: error)
            }
        }
        if let encoded, let variantKey = r.variantKey {
            do { try await r.cache.store(.variant(encoded), forKey: variantKey, to: .disk, metadata: metadata) } catch {
                failure = failure ?? ImageKitError(wrapping: error)
            }
        }
        if let original {
            do {
                try await r.cache.store(.original(original), forKey: r.baseKey, to: .disk, metadata: metadata)
            } catch {
                failure = failure ?? ImageKitError(wrapping: error)
            }
        }
        let duration = MonotonicClock.duration(since: start)
        emit(.stored(url: r.url, key: r.variantKey ?? r.key, tiers: .disk, duration: duration, error: failure),
             to: tasks)
        return duration
    }

    /// Hands a refreshed load's cached image to every load waiting (and, later, to those joining).
    private func deliverCached(_ result: LoadResult) {
        let waiters = state.withLock { $0.foundCached(result) }
        for task in waiters { task.deliverCached(result) }
    }

    /// Ends every waiting load with `delivery`.
    private func finishAll(_ delivery: ImageTask.Delivery) {
        let waiters = state.withLock { $0.finish() }
        for task in waiters { task.finish(delivery, detach: false) }
    }

    /// Fails every waiting load with `error` (unless the pipeline was cancelled) and puts the
    /// URL on the blocklist when the failure says something lasting about it.
    private func fail(_ error: ImageKitError) {
        guard !Task.isCancelled else { return }
        manager.recordFailure(request.url, error, loader: request.loader)
        finishAll(.failure(error))
    }

    /// Sends `event` to the manager's observers and to the load observers of `tasks` (nil: the
    /// loads waiting on the pipeline now).
    private func emit(_ event: @autoclosure () -> ImageManagerEvent, to tasks: [ImageTask]? = nil) {
        guard manager.hasLoadObserverFactories else { return manager.emit(event()) }
        let waiting = tasks ?? state.withLock { $0.waiters }
        manager.emit(event(), to: waiting.flatMap(\.loadObservers))
    }

    /// Passes download progress to every waiting load.
    private func progress(_ progress: DownloadProgress) {
        let waiters = state.withLock { $0.waiters }
        for task in waiters { task.progress(progress) }
    }
}
