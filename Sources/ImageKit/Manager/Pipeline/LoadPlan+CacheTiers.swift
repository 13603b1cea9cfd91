/// The cache queries and memory stores a load makes, shared by the pipeline's stages
/// (``ImageLoadJob``) and the inline disk read of an `async` load (``DiskReadStage``).
extension LoadPlan {
    /// Builds an event about the load, only when somebody observes it.
    typealias Report = (() -> ImageManagerEvent) -> Void

    /// The tiers a pipeline asks through ``ImageCaching/entry(forKey:kind:from:)``: all the
    /// load queries, less the memory tier when the cache answered it synchronously already.
    var tiersLeftToQuery: ImageCacheType {
        cache.answersMemoryQueriesSynchronously ? query.excludingMemory : query
    }

    /// The entry a hit in `tiersLeftToQuery` ends the load with: the variant for a load asking
    /// for bytes, else the decoded image.
    var finalEntry: (key: String, kind: ImageCacheEntryKind) {
        variantKey.map { ($0, .variant) } ?? (key, .image)
    }

    /// Asks `tiers` for the entry of `kind` under `key` and reports the query (a failed query
    /// is a miss).
    func query(_ key: String, _ kind: ImageCacheEntryKind, _ tiers: ImageCacheType,
               report: Report) async -> ImageCacheHit? {
        let start = MonotonicClock.now()
        let hit = try? await cache.entry(forKey: key, kind: kind, from: tiers)
        let duration = MonotonicClock.duration(since: start)
        if kind == .original {
            report { .originalDataQuery(url: self.url, key: key, hit: hit != nil, duration: duration) }
        } else {
            report { .cacheQuery(url: self.url, key: key, tier: hit?.tier ?? tiers, hit: hit != nil,
                                 duration: duration) }
        }
        return hit
    }

    /// Keeps in the memory tier what the load's stores put there and it was not found in: the
    /// image (found in `imageTier`, `[]` when made now) and the variant (likewise); reports
    /// the store when there was one.
    func storeInMemory(image: Image?, imageTier: ImageCacheType, encoded: EncodedImage?,
                       encodedTier: ImageCacheType, metadata: DiskCacheMetadata, report: Report) async {
        let start = MonotonicClock.now()
        var stored = false
        var failure: ImageKitError?
        if store.includesMemory, let image, imageTier != .memory {
            do { try await cache.store(.image(image), forKey: key, to: .memory, metadata: metadata) } catch {
                failure = ImageKitError(wrapping: error)
            }
            stored = true
        }
        if encodedStore.includesMemory, let encoded, encodedTier != .memory, let variantKey {
            do { try await cache.store(.variant(encoded), forKey: variantKey, to: .memory, metadata: metadata) } catch {
                failure = failure ?? ImageKitError(wrapping: error)
            }
            stored = true
        }
        guard stored else { return }
        let duration = MonotonicClock.duration(since: start)
        report { .stored(url: self.url, key: self.variantKey ?? self.key, tiers: .memory, duration: duration,
                         error: failure) }
    }
}
