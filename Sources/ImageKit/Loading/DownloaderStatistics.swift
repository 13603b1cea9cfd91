/// A snapshot of a ``Downloader``'s bookkeeping, for tests, metrics and leak checks.
/// When nothing is in flight every figure except the engine's totals is zero.
public struct DownloaderStatistics: Sendable, Hashable {
    /// Callers (tokens) whose download has not completed.
    public var waiters: Int
    /// Transfers queued, running, or being aborted.
    public var transfers: Int
    /// Transfers waiting for a free slot.
    public var queuedTransfers: Int
    /// Transfers holding a slot.
    public var runningTransfers: Int
    /// Request-modifier tasks still running.
    public var pendingRequestModifiers: Int
    /// Transfer contexts retained for the C engine's callbacks.
    public var transferContexts: Int
    /// Transfers the C engine accepted since it started.
    public var engineStarted: Int
    /// Transfers the C engine completed since it started.
    public var engineCompleted: Int
    /// Transfers submitted to the C engine and not yet picked up by its thread.
    public var engineQueued: Int
    /// Transfers in the C engine's curl multi handle.
    public var engineActive: Int
    /// curl easy handles alive.
    public var engineEasyHandles: Int
    /// Download bodies alive: being received, or handed to callers and not yet released (a
    /// body lives as long as the `Data` of its ``DownloadResult`` or any copy of it).
    public var bodies: Int
    /// The bytes those bodies hold.
    public var bodyBytes: Int

    /// A snapshot with every figure given.
    init(waiters: Int, transfers: Int, queuedTransfers: Int, runningTransfers: Int,
                pendingRequestModifiers: Int, transferContexts: Int, engineStarted: Int,
                engineCompleted: Int, engineQueued: Int, engineActive: Int, engineEasyHandles: Int,
                bodies: Int, bodyBytes: Int) {
        self.waiters = waiters
        self.transfers = transfers
        self.queuedTransfers = queuedTransfers
        self.runningTransfers = runningTransfers
        self.pendingRequestModifiers = pendingRequestModifiers
        self.transferContexts = transferContexts
        self.engineStarted = engineStarted
        self.engineCompleted = engineCompleted
        self.engineQueued = engineQueued
        self.engineActive = engineActive
        self.engineEasyHandles = engineEasyHandles
        self.bodies = bodies
        self.bodyBytes = bodyBytes
    }

    /// Whether nothing is in flight: no waiter, transfer, task, context or easy handle.
    public var isIdle: Bool {
        waiters == 0 && transfers == 0 && queuedTransfers == 0 && runningTransfers == 0
            && pendingRequestModifiers == 0 && transferContexts == 0 && engineQueued == 0
            && engineActive == 0 && engineEasyHandles == 0
    }
}
