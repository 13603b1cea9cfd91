#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Ends a pipeline with its result: keeps it in the memory tier, hands it to the loads that
/// do not wait for the disk, writes the disk tier, then hands it to the loads that do
/// (``ImageOptions/waitStoreCache``).
struct StoreStage: Sendable {
    let job: ImageLoadJob

    /// Stores `found` and hands it, with `metrics`, to every load waiting.
    func complete(_ found: Found, metrics: ImageLoadMetrics) async {
        let plan = job.plan
        await plan.storeInMemory(image: found.image, imageTier: found.imageTier, encoded: found.encoded,
                                 encodedTier: found.encodedTier, metadata: found.metadata ?? DiskCacheMetadata()) {
            job.emit($0())
        }
        // Decoded here (downloaded, or from the original-data store): the bitmap is new to disk.
        let bitmap = plan.store.includesDisk && (found.originalData != nil || found.downloaded) ? found.image : nil
        let encoded = plan.encodedStore.includesDisk && found.encodedTier.isEmpty ? found.encoded : nil
        var original: Data?
        if found.downloaded, plan.storesOriginalData, let data = found.originalData, let image = found.image {
            original = plan.context.cacheSerializer.map { $0(image, data, plan.url) } ?? data
        }
        let waiters = job.takeWaiters()
        var result = LoadResult(image: found.image, encoded: found.encoded, source: found.source, url: plan.url,
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
    func store(bitmap image: Image?, encoded: EncodedImage?, original: Data?,
               metadata: DiskCacheMetadata, for tasks: [ImageTask]? = nil) async -> Duration {
        let plan = job.plan
        let start = MonotonicClock.now()
        var failure: ImageKitError?
        if let image {
            do { try await plan.cache.store(.image(image), forKey: plan.key, to: .disk, metadata: metadata) } catch {
                failure = ImageKitError(wrapping: error)
            }
        }
        if let encoded, let variantKey = plan.variantKey {
            do {
                try await plan.cache.store(.variant(encoded), forKey: variantKey, to: .disk, metadata: metadata)
            } catch {
                failure = failure ?? ImageKitError(wrapping: error)
            }
        }
        if let original {
            do {
                try await plan.cache.store(.original(original), forKey: plan.baseKey, to: .disk, metadata: metadata)
            } catch {
                failure = failure ?? ImageKitError(wrapping: error)
            }
        }
        let duration = MonotonicClock.duration(since: start)
        job.emit(.stored(url: plan.url, key: plan.variantKey ?? plan.key, tiers: .disk, duration: duration,
                         error: failure), to: tasks)
        return duration
    }
}
