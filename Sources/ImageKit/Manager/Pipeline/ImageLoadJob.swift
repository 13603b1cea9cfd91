/// The work behind one load, or behind several coalesced ones: the loads asking for the same
/// cache key with the same processing share one disk query, one download, one decode, one
/// transform and one store.
///
/// The pipeline is a row of stages, each a small type with one job: ``CacheQueryStage``
/// (whose first step, ``FinalEntryRead``, an `async` load runs inline before a pipeline
/// exists), ``RevalidationStage``, ``SourceGateStage``, a turn from the ``PipelineLimiter``,
/// ``FetchStage``, ``DecodeStage``, ``EncodeStage`` and ``StoreStage``. It reaches the cache
/// only through ``ImageCaching`` and the loader only through ``ImageLoading``.
///
/// The pipeline runs in one Swift task that only awaits: disk I/O runs on the disk cache's
/// threads, the download on the loader's, decoding and transforming on the manager's
/// worker threads. A load that a disk read may answer starts its task on the disk cache's
/// threads (``FinalEntryRead/executor(_:finalEntryOnly:)``), where the read runs in place.
/// When the last load waiting on it is cancelled (before the result exists), the task is
/// cancelled — which aborts the download — and the decode's ``DecodeCancellation``
/// is cancelled. Decoding and encoding go through the load's ``ImageCoding`` coder only.
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

    let key: Key
    let plan: LoadPlan
    let manager: ImageManager
    /// Carries the worker pool's helper-yield signal: a decode given the helper thread as the
    /// pool's lone job gives repeated work back once another job arrives.
    let cancellation: DecodeCancellation
    let state = Locked(StateMachine())
    /// The first read as the load that started the pipeline left it (run already, when that
    /// load read the disk tier inline and missed).
    private let finalEntry: FinalEntryRead

    init(plan: LoadPlan, key: Key, manager: ImageManager, finalEntry: FinalEntryRead = FinalEntryRead()) {
        self.plan = plan
        self.key = key
        self.manager = manager
        self.finalEntry = finalEntry
        cancellation = DecodeCancellation(helperYield: manager.workers.helperYield)
    }

    /// Starts the pipeline's task: on the cache's read executor when a disk read may answer the
    /// load, else on the global concurrent executor.
    func start() {
        let executor = FinalEntryRead.executor(plan, finalEntryOnly: false)
        let task = manager.spawn(on: executor) { [self] in
            await run()
            manager.jobEnded(self)
        }
        switch state.withLock({ $0.started(task) }) {
        case .none: break
        case .cancel: task.cancel()
        }
    }

    /// The stages, in order; each that ends the pipeline (a result, a failure, a cancellation)
    /// has handed its loads what they get.
    private func run() async {
        let query = await CacheQueryStage(job: self, finalEntry: finalEntry).run()
        guard !Task.isCancelled else { return }
        var metrics = ImageLoadMetrics(diskQuery: query.duration, decode: query.found?.decode,
                                       transform: query.found?.transform)
        var cached: RevalidationStage.Cached?
        if let hit = query.found {
            guard plan.isRefresh else { return await complete(hit, metrics, checksCancellation: false) }
            guard let copy = await RevalidationStage(job: self).deliver(hit, &metrics) else { return }
            cached = copy
        }
        guard SourceGateStage(job: self).letsLoad(cached: cached?.result) else { return }
        // A turn bounds the bodies and bitmaps alive at once; waiting holds nothing.
        let waitStart = MonotonicClock.now()
        do {
            try await manager.limiter.acquire(priority: plan.priority)
        } catch {
            return fail(ImageKitError(wrapping: error))
        }
        defer { manager.limiter.release() }
        metrics.queueWait = MonotonicClock.duration(since: waitStart)
        guard let fetched = await FetchStage(job: self).run(validators: cached?.validators, &metrics) else { return }
        if fetched.status == .notModified, let cached {
            fetched.streaming?.abandon()
            return await RevalidationStage(job: self).keepCurrent(cached)
        }
        guard let made = await DecodeStage(job: self).run(fetched, &metrics) else { return }
        await complete(made, metrics, checksCancellation: true)
    }

    /// Encodes `found` when the load wants bytes, then stores it and hands it to the loads;
    /// with `checksCancellation`, not once the pipeline was cancelled while encoding.
    private func complete(_ found: Found, _ metrics: ImageLoadMetrics, checksCancellation: Bool) async {
        var metrics = metrics
        do {
            let done = try await EncodeStage(job: self).run(found, &metrics)
            if checksCancellation, Task.isCancelled { return }
            await StoreStage(job: self).complete(done, metrics: metrics)
        } catch {
            fail(ImageKitError(wrapping: error))
        }
    }
}
