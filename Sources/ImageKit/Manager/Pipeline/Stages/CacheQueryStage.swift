#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A pipeline's look in the cache: the memory tier, synchronously, then (when the cache does
/// not answer its memory tier synchronously, the memory tier too) the final entry
/// (``FinalEntryRead``, unless the load ran it already), the decoded image of a load asking
/// for bytes, and the original bytes, which it decodes.
struct CacheQueryStage: Sendable {
    /// What the stage found, and how long the tiers' queries took (nil: none was made).
    struct Outcome: Sendable {
        var found: Found?
        var duration: Duration?
    }

    let job: ImageLoadJob
    /// The first read, as the load that started the pipeline left it.
    let finalEntry: FinalEntryRead

    func run() async -> Outcome {
        let plan = job.plan
        if let hit = memoryHit() { return Outcome(found: hit) }
        let tiers = plan.tiersLeftToQuery
        guard !tiers.isEmpty else { return Outcome() }
        let start = MonotonicClock.now()
        var found: Found?
        var read = finalEntry
        if !read.ran {
            found = Self.found(await read.run(plan) { job.emit($0()) }, plan.finalEntry.kind)
        }
        if found == nil, plan.variantKey != nil { found = await cachedImage(tiers) }
        if found == nil { found = await originalData(tiers) }
        return Outcome(found: found, duration: MonotonicClock.duration(since: start))
    }

    /// The variant (for loads asking for bytes), else the decoded image, in the memory tier,
    /// as the cache answers synchronously.
    private func memoryHit() -> Found? {
        let plan = job.plan
        guard plan.query.includesMemory else { return nil }
        if let variantKey = plan.variantKey,
           case .variant(let encoded)? = plan.cache.memoryValue(forKey: variantKey, kind: .variant) {
            return Found(encoded: encoded, encodedTier: .memory)
        }
        guard case .image(let image)? = plan.cache.memoryValue(forKey: plan.key, kind: .image) else { return nil }
        return Found(image: image, imageTier: .memory)
    }

    /// What a hit of the final entry (of `kind`) gives the pipeline: the variant or the image,
    /// with where it was found; nil for a miss or an entry of another kind.
    private static func found(_ hit: ImageCacheHit?, _ kind: ImageCacheEntryKind) -> Found? {
        guard let hit else { return nil }
        switch (hit.value, kind) {
        case (.variant(let encoded), .variant): return Found(encoded: encoded, encodedTier: hit.tier,
                                                              metadata: hit.metadata)
        case (.image(let image), .image): return Found(image: image, imageTier: hit.tier, metadata: hit.metadata)
        default: return nil
        }
    }

    /// The decoded image stored in `tiers` for the key, unless expired.
    private func cachedImage(_ tiers: ImageCacheType) async -> Found? {
        let plan = job.plan
        guard let hit = await plan.query(plan.key, .image, tiers, report: { job.emit($0()) }),
              case .image(let image) = hit.value else { return nil }
        return Found(image: image, imageTier: hit.tier, metadata: hit.metadata)
    }

    /// The image decoded (and transformed) from the original bytes stored in `tiers` for the
    /// URL, unless there are none, they expired, or they no longer decode.
    private func originalData(_ tiers: ImageCacheType) async -> Found? {
        let plan = job.plan
        guard let hit = await plan.query(plan.baseKey, .original, tiers, report: { job.emit($0()) }),
              case .original(let data) = hit.value else {
            return nil
        }
        // Decoding holds the bytes and a bitmap: it takes a turn like a download.
        let limiter = job.manager.limiter
        guard (try? await limiter.acquire(priority: plan.priority)) != nil else { return nil }
        defer { limiter.release() }
        guard let processed = try? await DecodeStage(job: job).process(data) else { return nil }
        return Found(image: processed.image, imageTier: hit.tier, metadata: hit.metadata, originalData: data,
                     decode: processed.decode, transform: processed.transform)
    }
}
