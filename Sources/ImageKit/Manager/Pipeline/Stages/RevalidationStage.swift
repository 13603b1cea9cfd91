/// A refreshed load's cached copy (``ImageOptions/refreshCached``): handed to the loads at once,
/// its validators sent with the download, and kept when the server says it is current.
struct RevalidationStage: Sendable {
    /// The cached copy the loads were handed, and what revalidates it.
    struct Cached: Sendable {
        /// What the cache query found, with its encoded variant when the load wants bytes.
        var found: Found
        /// What the loads were handed.
        var result: LoadResult
        /// The stored entity tag and last-modified date, when there are any.
        var validators: DownloadRequest.Validators?
    }

    let job: ImageLoadJob

    /// Hands `hit` (encoded when the load wants bytes) to every load waiting, and to those
    /// joining later; nil when encoding it failed (the pipeline failed).
    func deliver(_ hit: Found, _ metrics: inout ImageLoadMetrics) async -> Cached? {
        let plan = job.plan
        let metadata = hit.metadata == nil ? await storedMetadata() : hit.metadata
        let validators = metadata.flatMap(Self.validators)
        let done: Found
        do {
            done = try await EncodeStage(job: job).run(hit, &metrics)
        } catch {
            job.fail(ImageKitError(wrapping: error))
            return nil
        }
        let result = LoadResult(image: done.image, encoded: done.encoded, source: done.source, url: plan.url,
                                originalData: done.originalData, metrics: metrics)
        job.deliverCached(result)
        return Cached(found: done, result: result, validators: validators)
    }

    /// The server said the cached copy is current: keeps the bitmap decoded from the original
    /// bytes on disk (as a plain disk hit would) and ends every load with the copy.
    func keepCurrent(_ cached: Cached) async {
        let found = cached.found
        if found.originalData != nil, let image = found.image, job.plan.store.includesDisk {
            await StoreStage(job: job).store(bitmap: image, encoded: nil, original: nil,
                                             metadata: found.metadata ?? DiskCacheMetadata())
        }
        job.finishAll(.notModified(cached.result))
    }

    /// The metadata stored with the URL's original bytes, the encoded variant or the decoded
    /// image (expired or not), for revalidating what was found in memory.
    private func storedMetadata() async -> DiskCacheMetadata? {
        let plan = job.plan
        var entries: [(String, ImageCacheEntryKind)] = [(plan.baseKey, .original)]
        if let variantKey = plan.variantKey { entries.append((variantKey, .variant)) }
        entries.append((plan.key, .image))
        for (key, kind) in entries {
            if let metadata = await plan.cache.metadata(forKey: key, kind: kind, from: .all) { return metadata }
        }
        return nil
    }

    private static func validators(_ metadata: DiskCacheMetadata) -> DownloadRequest.Validators? {
        guard metadata.etag != nil || metadata.lastModified != nil else { return nil }
        return DownloadRequest.Validators(entityTag: metadata.etag, lastModified: metadata.lastModified)
    }
}
