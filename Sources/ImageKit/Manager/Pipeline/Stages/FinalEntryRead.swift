/// The first stage of every load the memory tier did not answer: the read of its final entry
/// (the variant of a load asking for bytes, else the decoded image) from the tiers left to ask.
/// A hit there ends the load.
///
/// An `async` load runs it inline, in its own task, before any pipeline exists
/// (``DiskReadStage``); a pipeline runs it first (``CacheQueryStage``) unless the load that
/// started the pipeline ran it already and missed. The stage remembers whether it ran, and
/// travels with the load into the pipeline, so the entry is asked for once.
struct FinalEntryRead: Sendable {
    /// Whether the final entry was asked for (and, since the load went on, missed).
    private(set) var ran = false

    /// Asks `plan`'s tiers left to query for its final entry, reporting the query to `report`.
    mutating func run(_ plan: LoadPlan, report: LoadPlan.Report) async -> ImageCacheHit? {
        ran = true
        let entry = plan.finalEntry
        return await plan.query(entry.key, entry.kind, plan.tiersLeftToQuery, report: report)
    }

    /// The executor of the cache's threads when this read may hit there, else nil: for a load
    /// that is not refreshed (a refreshed load downloads after its hit) with tiers left to ask.
    /// A pipeline's task starts there (a lone disk hit costs a hop there and one back); an
    /// `async` load asks only whether there is one (``DiskReadStage/applies(to:)``).
    static func executor(_ plan: LoadPlan, finalEntryOnly: Bool) -> (any TaskExecutor)? {
        guard !plan.isRefresh else { return nil }
        let tiers = plan.tiersLeftToQuery
        guard !tiers.isEmpty else { return nil }
        let entry = plan.finalEntry
        if let executor = plan.cache.readExecutor(forKey: entry.key, kind: entry.kind, from: tiers) {
            return executor
        }
        guard !finalEntryOnly, entry.kind == .variant else { return nil }
        return plan.cache.readExecutor(forKey: plan.key, kind: .image, from: tiers)
    }
}
