#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The work behind one load, or behind several coalesced ones: the loads asking for the same
/// cache key with the same processing share one disk query, one download, one decode, one
/// transform and one store.
///
/// The pipeline runs in one Swift task that only awaits: disk I/O runs on the disk cache's
/// threads, the download on the downloader's, decoding and transforming on the manager's
/// worker threads. When the last load waiting on it is cancelled (before the result exists),
/// the task is cancelled — which aborts the download — and the decoder's cancel flag is set.
final class ImageLoadJob: Sendable {
    /// What coalesces: loads with equal keys share a pipeline.
    struct Key: Hashable, Sendable {
        let key: String
        let cache: ObjectIdentifier
        let downloader: ObjectIdentifier
        let options: UInt32
        let query: ImageCacheType
        let store: ImageCacheType
        let storesOriginalData: Bool
        /// Non-zero for a load that shares with no other.
        let exclusive: UInt64
    }

    /// The answer to a load asking to join.
    enum Attachment: Sendable {
        /// The pipeline has its result or was cancelled: start another.
        case rejected
        /// Joined; for a refreshed load, the cached image already handed to the others.
        case joined(cached: ImageResult?)
    }

    private struct State: Sendable {
        var waiters: [ImageTask] = []
        /// Whether loads may still join (false once the result exists, or on cancellation).
        var accepting = true
        var cancelled = false
        var task: Task<Void, Never>?
        /// The cached image a refreshed load was handed first.
        var cached: ImageResult?
    }

    /// An image found in a cache tier.
    private struct Found: Sendable {
        var image: Image
        var tier: ImageCacheType
        var metadata: DiskCacheMetadata?
        /// The bytes it was decoded from, when it came from the original-data store.
        var originalData: Data?
        var decode: Duration?
        var transform: Duration?
    }

    /// What a download (or a file read) brought.
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
    let request: ImageLoadRequest
    private let manager: ImageManager
    private let cancelFlag = DecodeCancelFlag()
    private let state = Locked(State())

    init(request: ImageLoadRequest, key: Key, manager: ImageManager) {
        self.request = request
        self.key = key
        self.manager = manager
    }

    // MARK: - Loads joining and leaving

    /// Adds `task` to the loads waiting on this pipeline, unless it no longer accepts any.
    func attach(_ task: ImageTask) -> Attachment {
        state.withLock { s in
            guard s.accepting else { return .rejected }
            s.waiters.append(task)
            return .joined(cached: s.cached)
        }
    }

    /// Removes `task`; stops the pipeline when it was the last load and there is no result yet.
    func detach(_ task: ImageTask) {
        let stop = state.withLock { s -> (Bool, Task<Void, Never>?) in
            s.waiters.removeAll { $0 === task }
            guard s.waiters.isEmpty, s.accepting else { return (false, nil) }
            s.accepting = false
            s.cancelled = true
            return (true, s.task)
        }
        guard stop.0 else { return }
        cancelFlag.set()
        stop.1?.cancel()
    }

    /// Starts the pipeline's task.
    func start() {
        let task = manager.spawn { [self] in
            await run()
            manager.jobEnded(self)
        }
        let cancelled = state.withLock { s -> Bool in
            s.task = task
            return s.cancelled
        }
        if cancelled { task.cancel() }
    }

    // MARK: - The pipeline

    private func run() async {
        let r = request
        var found: Found?
        var diskQuery: Duration?
        // Again, silently: the result may have been stored since the load looked.
        if r.query.includesMemory, let image = r.cache.memoryCache.image(forKey: r.key) {
            found = Found(image: image, tier: .memory)
        }
        if found == nil, r.query.includesDisk {
            let start = MonotonicClock.now()
            found = await diskBitmap()
            if found == nil { found = await originalData() }
            diskQuery = MonotonicClock.duration(since: start)
        }
        guard !Task.isCancelled else { return }
        var metrics = ImageLoadMetrics(diskQuery: diskQuery, decode: found?.decode, transform: found?.transform)
        if let found, !r.isRefresh {
            await complete(found.image, cacheType: found.tier, originalData: found.originalData,
                           storesBitmap: found.originalData != nil, storesOriginal: false,
                           metadata: found.metadata ?? DiskCacheMetadata(), metrics: metrics)
            return
        }
        var cached: ImageResult?
        var validators: DownloadRequest.Validators?
        if let found {
            let metadata = found.tier == .memory ? await storedMetadata() : found.metadata
            validators = metadata.flatMap(Self.validators)
            let result = ImageResult(image: found.image, cacheType: found.tier, url: r.url,
                                     originalData: found.originalData, metrics: metrics)
            cached = result
            deliverCached(result)
        }
        if r.options.contains(.fromCacheOnly) {
            if let cached { return finishAll(.notModified(cached)) }
            return fail(.notInCache("\(r.url.absoluteString) is in no cache tier searched"))
        }
        if let delegate = manager.configuration.delegate, !delegate.shouldDownload(r.url) {
            if let cached { return finishAll(.notModified(cached)) }
            return fail(.vetoed("the manager's delegate refused to download \(r.url.absoluteString)"))
        }
        let fetched: Fetched
        do {
            fetched = try await fetch(validators: validators)
            if let validator = r.context.responseValidator, let response = fetched.response {
                do {
                    try validator(response)
                } catch {
                    throw error as? ImageKitError
                        ?? .invalidResponse("the response validator rejected \(r.url.absoluteString): \(error)")
                }
            }
        } catch {
            return fail(ImageKitError(wrapping: error))
        }
        guard !Task.isCancelled else { return }
        metrics.download = fetched.metrics
        if fetched.status == .notModified, let cached, let found {
            // Current: keep the bitmap decoded from the original bytes, as a plain disk hit would.
            if found.originalData != nil {
                await store(found.image, bitmap: true, original: nil, metadata: found.metadata ?? DiskCacheMetadata())
            }
            return finishAll(.notModified(cached))
        }
        let processed: Processed
        do {
            processed = try await process(fetched.data)
        } catch {
            return fail(ImageKitError(wrapping: error))
        }
        guard !Task.isCancelled else { return }
        metrics.decode = processed.decode
        metrics.transform = processed.transform
        var metadata = DiskCacheMetadata()
        metadata.etag = fetched.response?.entityTag
        metadata.lastModified = fetched.response?.lastModified
        await complete(processed.image, cacheType: .none, originalData: fetched.data, storesBitmap: true,
                       storesOriginal: true, metadata: metadata, metrics: metrics)
    }

    /// The decoded image stored on disk for the key, unless expired.
    private func diskBitmap() async -> Found? {
        let r = request
        let start = MonotonicClock.now()
        let disk = r.cache.diskCache
        let entry = disk.mayHold(r.key) ? try? await disk.entry(forKey: r.key) : nil
        let hit = entry.flatMap { $0.isExpired ? nil : $0 }
        manager.emit(.cacheQuery(url: r.url, key: r.key, tier: .disk, hit: hit != nil,
                                 duration: MonotonicClock.duration(since: start)))
        return hit.map { Found(image: $0.value, tier: .disk, metadata: $0.metadata) }
    }

    /// The image decoded (and transformed) from the original bytes stored for the URL, unless
    /// there are none, they expired, or they no longer decode.
    private func originalData() async -> Found? {
        let r = request
        let start = MonotonicClock.now()
        let disk = r.cache.diskCache
        let entry = disk.mayHold(r.baseKey, data: true) ? try? await disk.dataEntry(forKey: r.baseKey) : nil
        let hit = entry.flatMap { $0.isExpired ? nil : $0 }
        manager.emit(.originalDataQuery(url: r.url, key: r.baseKey, hit: hit != nil,
                                        duration: MonotonicClock.duration(since: start)))
        guard let hit, let processed = try? await process(hit.value) else { return nil }
        return Found(image: processed.image, tier: .disk, metadata: hit.metadata, originalData: hit.value,
                     decode: processed.decode, transform: processed.transform)
    }

    /// The metadata stored with the URL's original bytes or with the decoded image, for
    /// revalidating an image found in memory.
    private func storedMetadata() async -> DiskCacheMetadata? {
        let disk = request.cache.diskCache
        if disk.mayHold(request.baseKey, data: true), let entry = try? await disk.dataEntry(forKey: request.baseKey) {
            return entry.metadata
        }
        return disk.mayHold(request.key) ? try? await disk.entry(forKey: request.key)?.metadata : nil
    }

    private static func validators(_ metadata: DiskCacheMetadata) -> DownloadRequest.Validators? {
        guard metadata.etag != nil || metadata.lastModified != nil else { return nil }
        return DownloadRequest.Validators(entityTag: metadata.etag, lastModified: metadata.lastModified)
    }

    /// Downloads the URL (conditionally with `validators`), or reads a `file:` URL.
    private func fetch(validators: DownloadRequest.Validators?) async throws -> Fetched {
        let r = request
        if r.url.isFileURL {
            let url = r.url
            let data = try await manager.workers.run(priority: r.workerPriority) {
                do {
                    return try Data(contentsOf: url)
                } catch {
                    throw ImageKitError.io("cannot read \(url.path): \(error)")
                }
            }
            return Fetched(data: data, status: .downloaded)
        }
        var download = DownloadRequest(url: r.url, validators: validators)
        if r.options.contains(.allowInvalidSSLCertificates) {
            download.tls = DownloaderConfiguration.TLSOptions(verifiesPeer: false,
                                                              caFile: r.downloader.configuration.tls.caFile)
        }
        if r.options.contains(.handleCookies) { download.usesCookies = true }
        if let modifier = r.context.requestModifier {
            guard let modified = await modifier(download) else {
                throw ImageKitError.cancelled
            }
            download = modified
        }
        manager.emit(.downloadStarted(url: r.url))
        let start = MonotonicClock.now()
        do {
            let result = try await r.downloader.download(download, priority: r.downloadPriority) { [weak self] p in
                self?.progress(p)
            }
            manager.emit(.downloadFinished(url: r.url, response: result.response, metrics: result.metrics))
            return Fetched(data: result.data, status: result.status, response: result.response, metrics: result.metrics)
        } catch {
            let e = ImageKitError(wrapping: error)
            manager.emit(.downloadFailed(url: r.url, error: e, duration: MonotonicClock.duration(since: start)))
            throw e
        }
    }

    /// Decodes and transforms `data` on the worker threads.
    private func process(_ data: Data) async throws -> Processed {
        let r = request
        let manager = self.manager
        let flag = cancelFlag
        do {
            return try await manager.workers.run(priority: r.workerPriority) {
                try Self.decodeAndTransform(data, r, manager, flag)
            }
        } catch {
            throw ImageKitError(wrapping: error)
        }
    }

    /// The decode (stopped when `flag` is set) and the transform; runs on a worker thread.
    private static func decodeAndTransform(_ data: Data, _ r: ImageLoadRequest, _ manager: ImageManager,
                                           _ flag: DecodeCancelFlag) throws -> Processed {
        manager.emit(.decodeStarted(url: r.url, key: r.key))
        let start = MonotonicClock.now()
        let decoder = ImageDecoder(options: r.decodeOptions, bufferPool: manager.configuration.bufferPool)
        var statistics = DecodeStatistics()
        let image: Image
        do {
            image = try data.withUnsafeBytes { try decoder.decode($0, statistics: &statistics, cancelFlag: flag.pointer) }
        } catch {
            let e = ImageKitError(wrapping: error)
            manager.emit(.decodeFailed(url: r.url, key: r.key, error: e, duration: MonotonicClock.duration(since: start)))
            throw e
        }
        let decode = MonotonicClock.duration(since: start)
        manager.emit(.decoded(url: r.url, key: r.key, size: PixelSize(width: image.width, height: image.height),
                              duration: decode))
        guard let transformer = r.transformer(for: image) else {
            return Processed(image: image, decode: decode)
        }
        let transformStart = MonotonicClock.now()
        do {
            let transformed = try transformer.transform(image)
            let transform = MonotonicClock.duration(since: transformStart)
            manager.emit(.transformed(url: r.url, key: r.key, transformer: transformer.key, duration: transform,
                                      error: nil))
            return Processed(image: transformed, decode: decode, transform: transform)
        } catch {
            let e = ImageKitError.transformFailed("\(transformer.key): \(error)")
            manager.emit(.transformed(url: r.url, key: r.key, transformer: transformer.key,
                                      duration: MonotonicClock.duration(since: transformStart), error: e))
            throw e
        }
    }

    // MARK: - Results

    /// Stores the result in memory, hands it to the loads that do not wait for the disk, writes
    /// the disk tier, then hands it to the loads that do (``ImageOptions/waitStoreCache``).
    private func complete(_ image: Image, cacheType: ImageCacheType, originalData: Data?, storesBitmap: Bool,
                          storesOriginal: Bool, metadata: DiskCacheMetadata, metrics: ImageLoadMetrics) async {
        let r = request
        if r.store.includesMemory, cacheType != .memory {
            let start = MonotonicClock.now()
            r.cache.memoryCache.set(image, forKey: r.key)
            manager.emit(.stored(url: r.url, key: r.key, tiers: .memory, duration: MonotonicClock.duration(since: start), error: nil))
        }
        let bitmap = storesBitmap && r.store.includesDisk
        let original = storesOriginal && r.storesOriginalData
            ? originalData.flatMap { data in r.context.cacheSerializer.map { $0(image, data, r.url) } ?? data }
            : nil
        let waiters = state.withLock { s -> [ImageTask] in
            s.accepting = false
            defer { s.waiters = [] }
            return s.waiters
        }
        var result = ImageResult(image: image, cacheType: cacheType, url: r.url, originalData: originalData,
                                 metrics: metrics)
        result.metrics.sharedBy = waiters.count
        let writesDisk = bitmap || original != nil
        var later: [ImageTask] = []
        for task in waiters {
            if writesDisk && task.options.contains(.waitStoreCache) {
                later.append(task)
            } else {
                task.finish(.image(result, isFinal: true), detach: false)
            }
        }
        guard writesDisk else { return }
        result.metrics.store = await store(image, bitmap: bitmap, original: original, metadata: metadata)
        for task in later { task.finish(.image(result, isFinal: true), detach: false) }
    }

    /// Writes the decoded image and the original bytes to the disk tier; returns the time it took.
    /// A failed write (disk full, …) is reported to the observers and otherwise ignored.
    @discardableResult
    private func store(_ image: Image, bitmap: Bool, original: Data?, metadata: DiskCacheMetadata) async -> Duration {
        let r = request
        let start = MonotonicClock.now()
        var failure: ImageKitError?
        if bitmap {
            do { try await r.cache.diskCache.store(image, forKey: r.key, metadata: metadata) } catch {
                failure = ImageKitError(wrapping: error)
            }
        }
        if let original {
            do { try await r.cache.storeOriginalData(original, forKey: r.baseKey, metadata: metadata) } catch {
                failure = failure ?? ImageKitError(wrapping: error)
            }
        }
        let duration = MonotonicClock.duration(since: start)
        manager.emit(.stored(url: r.url, key: r.key, tiers: .disk, duration: duration, error: failure))
        return duration
    }

    /// Hands a refreshed load's cached image to every load waiting (and, later, to those joining).
    private func deliverCached(_ result: ImageResult) {
        let waiters = state.withLock { s -> [ImageTask] in
            s.cached = result
            return s.waiters
        }
        for task in waiters { task.deliverCached(result) }
    }

    /// Ends every waiting load with `delivery`.
    private func finishAll(_ delivery: ImageTask.Delivery) {
        let waiters = state.withLock { s -> [ImageTask] in
            s.accepting = false
            defer { s.waiters = [] }
            return s.waiters
        }
        for task in waiters { task.finish(delivery, detach: false) }
    }

    /// Fails every waiting load with `error` (unless the pipeline was cancelled) and puts the
    /// URL on the blocklist when the failure says something lasting about it.
    private func fail(_ error: ImageKitError) {
        guard !Task.isCancelled else { return }
        manager.recordFailure(request.url, error)
        finishAll(.failure(error))
    }

    /// Passes download progress to every waiting load.
    private func progress(_ progress: DownloadProgress) {
        let waiters = state.withLock { $0.waiters }
        for task in waiters { task.progress(progress) }
    }
}
