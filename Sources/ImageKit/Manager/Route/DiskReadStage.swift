/// The pipeline's first stage (``FinalEntryRead``) run inline by an `async` load, in its own
/// task, before any pipeline exists: a lone disk hit then costs a hop to the disk threads and
/// one back, as the read alone does, instead of starting a pipeline task there. Loads of the
/// same key arriving meanwhile wait for that read's answer; on a miss they all go on through
/// one pipeline, which is handed the stage and so does not ask again.
struct DiskReadStage: Sendable {
    /// What the read found.
    enum Outcome: Sendable {
        case hit(LoadResult)
        /// Not found, or a pipeline for the key was in flight: the load goes on through a
        /// pipeline, handed the read as it stands (run when it missed, not run when it joins).
        case miss(FinalEntryRead)
        /// The calling task was cancelled meanwhile (the read itself is not interrupted).
        case cancelled
    }

    /// What a load waiting on another's read leaves in the registry.
    typealias Waiter = CheckedContinuation<Outcome, Never>

    let manager: ImageManager
    let plan: LoadPlan
    let loadObservers: [any ImageLoadObserver]

    /// Whether an `async` load of `plan` runs the stage inline: the cache's index may hold its
    /// final entry (see ``ImageCaching/readExecutor(forKey:kind:from:)``), and the load is not
    /// refreshed and has no deadline (a pipeline's load fails at its deadline even while a
    /// read blocks).
    static func applies(to plan: LoadPlan) -> Bool {
        plan.context.deadline == nil && FinalEntryRead.executor(plan, finalEntryOnly: true) != nil
    }

    /// Reads the final entry in the calling task (or waits for the read of the same key in
    /// flight) and keeps a hit in the memory tier as a pipeline would; counted as a running
    /// load meanwhile.
    func run() async -> Outcome {
        manager.counters.withLock { $0.directReads += 1 }
        defer { manager.counters.withLock { $0.directReads -= 1 } }
        let key = plan.pipelineKey(exclusive: plan.isShareable ? 0 : manager.makeID())
        let outcome: Outcome
        switch manager.registry.withLock({ $0.beginRead(key) }) {
        case .join:
            return .miss(FinalEntryRead())
        case .wait:
            outcome = await withCheckedContinuation { waiter in
                if !manager.registry.withLock({ $0.wait(for: key, waiter) }) {
                    waiter.resume(returning: .miss(FinalEntryRead()))
                }
            }
        case .read:
            var found = await read()
            let waiting = manager.registry.withLock { $0.endRead(key) }
            if case .hit(var result) = found, !waiting.isEmpty {
                result.metrics.sharedBy = 1 + waiting.count
                found = .hit(result)
            }
            for waiter in waiting { waiter.resume(returning: found) }
            outcome = found
        }
        if case .hit = outcome, Task.isCancelled { return .cancelled }
        return outcome
    }

    /// The read itself: the query (reported to the load's observers and the manager's), then
    /// the memory store of a hit.
    private func read() async -> Outcome {
        let report: LoadPlan.Report = { manager.emit($0(), to: loadObservers) }
        let start = MonotonicClock.now()
        var entry = FinalEntryRead()
        guard let hit = await entry.run(plan, report: report) else { return .miss(entry) }
        var result = LoadResult(source: ImageSource(tier: hit.tier), url: plan.url,
                                metrics: ImageLoadMetrics(diskQuery: MonotonicClock.duration(since: start)))
        switch hit.value {
        case .image(let image): result.image = image
        case .variant(let encoded): result.encoded = encoded
        case .original: return .miss(entry)  // not the kind asked for: no cache answers so
        }
        await plan.storeInMemory(image: result.image, imageTier: hit.tier, encoded: result.encoded,
                                 encodedTier: hit.tier, metadata: hit.metadata, report: report)
        return .hit(result)
    }
}
