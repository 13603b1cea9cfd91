/// A snapshot of what an ``ImageManager`` has in flight, for tests and metrics.
public struct ImageManagerStatistics: Sendable, Hashable {
    /// Loads neither completed nor cancelled.
    public var runningTasks: Int
    /// Pipelines (query, download, decode, transform, store) still working; coalesced loads share one.
    public var jobs: Int
    /// Swift tasks the manager started (pipelines, deadline timers, original-data reads) that have not ended.
    public var backgroundTasks: Int
    /// URLs on the failed-URL blocklist (expired entries are dropped when next looked up).
    public var blocklistedURLs: Int
    /// Pipelines holding a turn to download and decode (at most
    /// ``ImageManagerConfiguration/maxActivePipelines``).
    public var activePipelines: Int
    /// Pipelines waiting for a turn, holding no bytes.
    public var waitingPipelines: Int

    /// Whether nothing is running and nothing is left behind.
    public var isIdle: Bool { runningTasks == 0 && jobs == 0 && backgroundTasks == 0 }
}
