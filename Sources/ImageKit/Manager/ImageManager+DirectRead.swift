/// A lone `async` disk hit without a pipeline: the load reads its entry from the disk tier in
/// its own task (a hop to the disk threads and one back, as the read alone costs) instead of
/// starting a pipeline task there. Loads of the same key arriving meanwhile wait for that
/// read's answer; on a miss they all go on through one pipeline, which does not ask again.
extension ImageManager {
    /// What a direct disk read found.
    enum DirectRead: Sendable {
        case hit(LoadResult)
        /// Not found (`asked`: the final entry was asked for and missed), or a pipeline for the
        /// key was in flight (`asked` false): the load goes on through a pipeline.
        case miss(asked: Bool)
        /// The calling task was cancelled meanwhile (the read itself is not interrupted).
        case cancelled
    }

    /// What a load waiting on another's direct read leaves in the registry.
    typealias DirectReadWaiter = CheckedContinuation<DirectRead, Never>

    /// Whether the `async` load of `r` may read the disk tier itself: the cache's index may
    /// hold its final entry (the variant of a load asking for bytes, else the image; see
    /// ``ImageCaching/readExecutor(forKey:kind:from:)``), and the load is not refreshed and has
    /// no deadline (a pipeline's load fails at its deadline even while a read blocks).
    func mayReadDirectly(_ r: LoadPlan) -> Bool {
        guard !r.isRefresh, r.context.deadline == nil else { return false }
        let tiers = r.tiersLeftToQuery
        let entry = r.finalEntry
        return !tiers.isEmpty && r.cache.readExecutor(forKey: entry.key, kind: entry.kind, from: tiers) != nil
    }

    /// Reads the final entry of `r` from the tiers left to ask in the calling task (or waits for
    /// the read of the same key in flight) and keeps a hit in the memory tier as a pipeline
    /// would; counted as a running load meanwhile.
    func readDirectly(_ r: LoadPlan, _ loadObservers: [any ImageLoadObserver]) async -> DirectRead {
        counters.withLock { $0.directReads += 1 }
        defer { counters.withLock { $0.directReads -= 1 } }
        let key = r.pipelineKey(exclusive: r.isShareable ? 0 : makeID())
        let outcome: DirectRead
        switch registry.withLock({ $0.beginRead(key) }) {
        case .join:
            return .miss(asked: false)
        case .wait:
            outcome = await withCheckedContinuation { waiter in
                if !registry.withLock({ $0.wait(for: key, waiter) }) { waiter.resume(returning: .miss(asked: false)) }
            }
        case .read:
            var found = await read(r, loadObservers)
            let waiting = registry.withLock { $0.endRead(key) }
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

    /// The read itself: the query (reported to `loadObservers` and the manager's observers), then
    /// the memory store of a hit.
    private func read(_ r: LoadPlan, _ loadObservers: [any ImageLoadObserver]) async -> DirectRead {
        let entry = r.finalEntry
        let report: LoadPlan.Report = { self.emit($0(), to: loadObservers) }
        let start = MonotonicClock.now()
        guard let hit = await r.query(entry.key, entry.kind, r.tiersLeftToQuery, report: report) else {
            return .miss(asked: true)
        }
        var result = LoadResult(source: ImageSource(tier: hit.tier), url: r.url,
                                metrics: ImageLoadMetrics(diskQuery: MonotonicClock.duration(since: start)))
        switch hit.value {
        case .image(let image): result.image = image
        case .variant(let encoded): result.encoded = encoded
        case .original: return .miss(asked: true)  // not the kind asked for: no cache answers so
        }
        await r.storeInMemory(image: result.image, imageTier: hit.tier, encoded: result.encoded,
                              encodedTier: hit.tier, metadata: hit.metadata, report: report)
        return .hit(result)
    }
}
