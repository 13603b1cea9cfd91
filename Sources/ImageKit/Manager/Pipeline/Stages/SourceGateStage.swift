/// Whether a load the cache did not end may go to its loader: not with
/// ``ImageOptions/fromCacheOnly``, nor when the manager's delegate refuses the download. A
/// refreshed load then ends with its cached copy; any other fails.
struct SourceGateStage: Sendable {
    let job: ImageLoadJob

    /// True when the load goes on to the loader; else the pipeline has ended its loads.
    func letsLoad(cached: LoadResult?) -> Bool {
        let plan = job.plan
        if plan.options.contains(.fromCacheOnly) {
            end(cached, .notInCache("\(MessageURL.describe(plan.url)) is in no cache tier searched"))
            return false
        }
        if let delegate = job.manager.configuration.delegate, !delegate.shouldDownload(plan.url) {
            end(cached, .vetoed("the manager's delegate refused to download \(MessageURL.describe(plan.url))"))
            return false
        }
        return true
    }

    /// Ends the loads with `cached`, else fails them with `error`.
    private func end(_ cached: LoadResult?, _ error: @autoclosure () -> ImageKitError) {
        if let cached { return job.finishAll(.notModified(cached)) }
        job.fail(error())
    }
}
