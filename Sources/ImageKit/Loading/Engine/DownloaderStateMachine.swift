/// The downloader's bookkeeping as a value: callers (*waiters*, one per token), the
/// *transfers* they share, the pending queue and the concurrency limits.
///
/// Every event is a mutating method that changes the state and returns what must happen
/// next as an action. ``DownloaderCore`` calls these methods with its lock held and carries
/// the actions out (calls completions, hands transfers to the engine, cancels tasks and
/// transfers) after releasing it. Nothing in here calls out — no C, no callbacks, no
/// clock — so each transition can be checked on its own.
///
/// A waiter goes `created` → `submitted` (or `preparing` while the request modifier runs) →
/// `attached` to a transfer, and leaves when it completes or is cancelled. Waiters whose
/// requests resolve equal share one transfer. A transfer waits in the queue (at the highest
/// priority of its waiters) until a slot is free, then runs in the engine until the engine
/// completes it; when the last waiter leaves a running transfer it is aborted. While the
/// machine is suspended, queued transfers stay queued; resuming starts what the limits allow.
struct DownloaderStateMachine: Sendable {
    typealias Completion = @Sendable (Result<DownloadResult, ImageKitError>) -> Void
    typealias Progress = @Sendable (DownloadProgress) -> Void
    /// Receives a streamed body's bytes as they arrive, on the engine thread: it must copy
    /// them and return at once.
    typealias Chunks = @Sendable (UnsafeRawBufferPointer) -> Void

    /// How a caller that streams wants its body: each piece to `chunks`, and the whole body in
    /// the result as well when `keepsBody`.
    struct Stream: Sendable {
        let chunks: Chunks
        let keepsBody: Bool
    }

    /// What a transfer asks for: fixed for its life and shared by reference, so the copies
    /// of transfers and starts the bookkeeping makes stay cheap.
    final class Target: Sendable {
        /// The request as the first waiter made it (after the request modifier).
        let request: DownloadRequest
        /// What goes on the wire; equal values share a transfer.
        let resolved: ResolvedRequest
        /// Whether the body streams to the waiters' chunk handlers as it arrives.
        let streams: Bool
        /// Whether the body is gathered for the completion (always, when it does not stream).
        let keepsBody: Bool

        init(request: DownloadRequest, resolved: ResolvedRequest, stream: Stream?) {
            self.request = request
            self.resolved = resolved
            streams = stream != nil
            keepsBody = stream?.keepsBody ?? true
        }
    }

    /// A transfer given a slot, waiting to be handed to the engine.
    struct Start: Sendable {
        /// The transfer's id.
        let transfer: UInt64
        /// What to start.
        let target: Target
    }

    /// The settings the scheduling follows.
    struct Limits: Sendable {
        /// Most transfers running at once.
        var maxConcurrent: Int
        /// Most transfers running at once to one `host:port`, or nil for no limit beyond the total.
        var maxPerHost: Int?
        /// Order within a priority.
        var order: DownloaderConfiguration.ExecutionOrder
    }

    /// What `submit` asks the core to do.
    enum SubmitAction: Sendable {
        /// Refused (cancelled before it was submitted, or shut down): complete the caller.
        case complete(Completion, ImageKitError)
        /// Resolve the request and `attach` it.
        case attach
        /// Run the request modifier (tell `modifierStarted` its task), then `modifierFinished`.
        case runModifier
    }

    /// What `modifierStarted` asks the core to do with the modifier's task.
    enum ModifierAction: Sendable {
        /// Let it run.
        case none
        /// The waiter left meanwhile: cancel the task.
        case cancelTask
    }

    /// What `cancel` asks the core to do.
    enum CancelAction: Sendable {
        /// Nothing (unknown waiter, already completed, or not yet submitted).
        case none
        /// Complete the caller with ``ImageKitError/cancelled``; cancel its modifier task and
        /// abort the engine transfer it was the last waiter of, when given.
        case complete(Completion, cancelTask: Task<Void, Never>?, abortTransfer: UInt64?)
    }

    /// What `fail` asks the core to do.
    enum FailAction: Sendable {
        /// Nothing (the waiter was cancelled or already attached).
        case none
        /// Complete the caller with the error.
        case complete(Completion, ImageKitError)
    }

    /// What `attach` asks the core to do.
    enum AttachAction: Sendable {
        /// Nothing (joined a transfer, queued, or started one that a launch run already
        /// pending will take).
        case none
        /// Queue a launch run: transfers wait in the backlog and no run is pending.
        case queueLaunchRun
    }

    /// What `transferStarted` asks the core to do.
    enum StartedAction: Sendable {
        /// Nothing.
        case none
        /// Every waiter left while the transfer was being started: abort it in the engine.
        case abort(engineID: UInt64)
    }

    /// What `progress` asks the core to do.
    enum ProgressAction: Sendable {
        /// Nothing (the transfer is gone).
        case none
        /// Report progress of `target` to these handlers (one per waiter that has one).
        case report(Target, [Progress])
    }

    /// A transfer that ended, as `transferCompleted` reports it.
    struct Finished: Sendable {
        /// What the transfer asked for.
        let target: Target
        /// Waiters on it when it ended (those that cancelled have left it).
        let sharedBy: Int
        /// Why its head was rejected, if it was.
        let rejection: ImageKitError?
        /// The waiters' completions, to call with the result.
        let completions: [Completion]
        /// The freed slot started transfers and no launch run is pending: queue one.
        let queueLaunchRun: Bool
    }

    /// What `transferCompleted` asks the core to do.
    enum CompletedAction: Sendable {
        /// Nothing (unknown transfer).
        case none
        /// Report the result to the observers and the waiters.
        case finish(Finished)
    }

    /// What `finishShutdown` asks the core to do.
    struct ShutdownAction: Sendable {
        /// Every waiter left, to complete with ``ImageKitError/cancelled``.
        let completions: [Completion]
        /// Request-modifier tasks to cancel.
        let modifierTasks: [Task<Void, Never>]
    }

    /// One caller once it submitted its request.
    private struct Caller: Sendable {
        var priority: ImagePriority
        var progress: Progress?
        var stream: Stream?
        var completion: Completion
    }

    private enum Waiter: Sendable {
        /// Has a token, not yet submitted.
        case created
        /// Cancelled before it was submitted.
        case cancelledEarly
        /// Submitted, not yet on a transfer.
        case submitted(Caller)
        /// The request modifier is running (its task, once known).
        case preparing(Caller, Task<Void, Never>?)
        /// Waiting on a transfer.
        case attached(Caller, transfer: UInt64)

        /// The caller, once submitted.
        var caller: Caller? {
            switch self {
            case .created, .cancelledEarly: nil
            case .submitted(let c), .preparing(let c, _), .attached(let c, _): c
            }
        }
    }

    private struct Transfer: Sendable {
        enum Phase: Sendable {
            /// In the queue under sequence number `seq`.
            case queued(seq: UInt64)
            /// Holding a slot: in the launch backlog, then handed to the engine (`engineID`
            /// once ic_fetch_start returned it).
            case running(engineID: UInt64?, cancelRequested: Bool)
        }

        let target: Target
        var waiters: [UInt64]
        var priority: ImagePriority
        var phase: Phase
        /// Why the head was rejected (content type, validator), if it was.
        var rejection: ImageKitError?
        /// The first piece of a streamed body went to the waiters: a streaming waiter joining
        /// now would miss it.
        var bodyStarted = false

        /// Whether `caller` gets everything it asks for by joining: a streaming caller only
        /// before the body starts and when the body is kept if it wants it; any other only
        /// when the body is kept.
        func accepts(_ caller: Caller) -> Bool {
            guard let stream = caller.stream else { return target.keepsBody }
            return target.streams && !bodyStarted && (target.keepsBody || !stream.keepsBody)
        }
    }

    let limits: Limits
    private var nextID: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]
    private var transfers: [UInt64: Transfer] = [:]
    /// Transfers new waiters may join (not those being aborted).
    private var byKey: [ResolvedRequest: UInt64] = [:]
    private var queue = PendingQueue()
    private var runningPerHost: [String: Int] = [:]
    private var isShutDown = false
    /// Set by a draining shutdown: new waiters are refused, transfers in flight go on.
    private var refusesNew = false
    /// While set, no queued transfer starts; those running go on.
    private(set) var isSuspended = false
    /// Transfers given a slot and not yet taken by a launch run, in the order they started.
    private var launchBacklog: [Start] = []
    /// A launch run is queued or running; it takes what the backlog receives meanwhile.
    private var launchRunPending = false

    /// Transfers waiting for a slot.
    private(set) var queuedTransfers = 0
    /// Transfers holding a slot.
    private(set) var runningTransfers = 0
    /// Request-modifier tasks running.
    private(set) var modifierTasks = 0
    /// Transfer contexts alive (retained for the engine's callbacks).
    private(set) var transferContexts = 0

    /// Callers whose download has not completed.
    var waiterCount: Int { waiters.count }
    /// Transfers queued, running or being aborted.
    var transferCount: Int { transfers.count }

    init(limits: Limits) {
        self.limits = limits
    }

    // MARK: - Callers

    /// A new waiter for a token.
    mutating func makeWaiter() -> UInt64 {
        let id = makeID()
        waiters[id] = .created
        return id
    }

    /// Waiter `id` submits its request.
    mutating func submit(_ id: UInt64, priority: ImagePriority, progress: Progress?, stream: Stream? = nil,
                         completion: @escaping Completion, hasModifier: Bool) -> SubmitAction {
        guard case .created? = waiters[id], !isShutDown, !refusesNew else {
            waiters[id] = nil
            return .complete(completion, .cancelled)
        }
        let caller = Caller(priority: priority, progress: progress, stream: stream, completion: completion)
        if hasModifier {
            waiters[id] = .preparing(caller, nil)
            modifierTasks += 1
            return .runModifier
        }
        waiters[id] = .submitted(caller)
        return .attach
    }

    /// The request modifier of waiter `id` runs as `task`.
    mutating func modifierStarted(_ id: UInt64, task: Task<Void, Never>) -> ModifierAction {
        guard case .preparing(let caller, nil)? = waiters[id] else { return .cancelTask }
        waiters[id] = .preparing(caller, task)
        return .none
    }

    /// A request modifier returned (the core then attaches or fails its waiter).
    mutating func modifierFinished() {
        modifierTasks -= 1
    }

    /// Waiter `id` cannot go on (its request did not resolve, or the modifier dropped it).
    mutating func fail(_ id: UInt64, _ error: ImageKitError) -> FailAction {
        switch waiters[id] {
        case .submitted(let caller)?, .preparing(let caller, _)?:
            waiters[id] = nil
            return .complete(caller.completion, error)
        case .created?, .cancelledEarly?, .attached?, nil:
            return .none
        }
    }

    /// Puts waiter `id` on a transfer for `request` (as `resolved`), joining one in flight
    /// with an equal resolved request when it gets all it asks for from it (see
    /// `Transfer.accepts`: a streaming waiter cannot join once the body has started, nor a
    /// waiter wanting the body a transfer that keeps none), and starts what the limits allow.
    /// A transfer started beside one it could not join takes its place for later joiners.
    mutating func attach(_ id: UInt64, request: DownloadRequest, resolved: ResolvedRequest) -> AttachAction {
        let caller: Caller
        switch waiters[id] {
        case .submitted(let c)?, .preparing(let c, _)?: caller = c
        case .created?, .cancelledEarly?, .attached?, nil: return .none
        }
        let transfer: UInt64
        if let existing = byKey[resolved], transfers[existing]!.accepts(caller) {
            transfer = existing
            transfers[transfer]!.waiters.append(id)
        } else {
            transfer = makeID()
            transfers[transfer] = Transfer(target: Target(request: request, resolved: resolved, stream: caller.stream),
                                           waiters: [id], priority: caller.priority, phase: .queued(seq: 0))
            byKey[resolved] = transfer
            enqueue(transfer)
            queuedTransfers += 1
        }
        waiters[id] = .attached(caller, transfer: transfer)
        updatePriority(transfer)
        return schedule() ? .queueLaunchRun : .none
    }

    /// Waiter `id` cancels: it completes now; its transfer goes on for the other waiters, or
    /// leaves the queue, or (running) is aborted when none is left.
    mutating func cancel(_ id: UInt64) -> CancelAction {
        switch waiters[id] {
        case nil, .cancelledEarly?:
            return .none
        case .created?:
            waiters[id] = .cancelledEarly
            return .none
        case .submitted(let caller)?:
            waiters[id] = nil
            return .complete(caller.completion, cancelTask: nil, abortTransfer: nil)
        case .preparing(let caller, let task)?:
            waiters[id] = nil
            return .complete(caller.completion, cancelTask: task, abortTransfer: nil)
        case .attached(let caller, let transfer)?:
            waiters[id] = nil
            return .complete(caller.completion, cancelTask: nil, abortTransfer: detach(id, from: transfer))
        }
    }

    /// Every waiter cancels (those not yet submitted when they submit), as ``cancel(_:)``
    /// does for each: the actions to carry out, one per waiter with something to complete.
    mutating func cancelAll() -> [CancelAction] {
        waiters.keys.sorted().compactMap { id in
            let action = cancel(id)
            if case .none = action { return nil }
            return action
        }
    }

    /// Suspends (no queued transfer starts) or resumes (queued transfers start as the
    /// limits allow); asks for a launch run when resuming started transfers.
    mutating func setSuspended(_ suspended: Bool) -> AttachAction {
        isSuspended = suspended
        return !suspended && schedule() ? .queueLaunchRun : .none
    }

    /// A draining shutdown began: later submissions are refused.
    mutating func refuseNew() {
        refusesNew = true
    }

    /// A shutdown began: later submissions are refused and nothing more starts (the core
    /// then stops the engine, which completes the running transfers as cancelled).
    mutating func beginShutdown() {
        isShutDown = true
    }

    /// After the engine stopped: every waiter left completes as cancelled, and the queue and
    /// the launch backlog empty (their transfers never reached the engine, so it will not
    /// complete them).
    mutating func finishShutdown() -> ShutdownAction {
        var completions: [Completion] = []
        var tasks: [Task<Void, Never>] = []
        for waiter in waiters.values {
            if let caller = waiter.caller { completions.append(caller.completion) }
            if case .preparing(_, let task?) = waiter { tasks.append(task) }
        }
        waiters.removeAll()
        for start in launchBacklog {
            transfers[start.transfer] = nil
            releaseSlot(host: start.target.resolved.authority)
        }
        launchBacklog = []
        transfers = transfers.filter { if case .running = $0.value.phase { true } else { false } }
        byKey.removeAll()
        queue = PendingQueue()
        queuedTransfers = 0
        return ShutdownAction(completions: completions, modifierTasks: tasks)
    }

    // MARK: - Engine

    /// A launch run asks for the transfers to hand to the engine, in order. An empty answer
    /// (nothing left, or shutting down) ends the run: the next transfer to start asks for a
    /// new one.
    mutating func takeLaunches() -> [Start] {
        guard !launchBacklog.isEmpty, !isShutDown else {
            launchRunPending = false
            return []
        }
        let starts = launchBacklog
        launchBacklog = []
        return starts
    }

    /// The engine accepted transfer `id` under `engineID`.
    mutating func transferStarted(_ id: UInt64, engineID: UInt64) -> StartedAction {
        guard case .running(_, let cancelRequested)? = transfers[id]?.phase else { return .none }
        transfers[id]!.phase = .running(engineID: engineID, cancelRequested: cancelRequested)
        return cancelRequested ? .abort(engineID: engineID) : .none
    }

    /// What transfer `id` asks for, while it is known.
    func target(of id: UInt64) -> Target? {
        transfers[id]?.target
    }

    /// The head of transfer `id` was rejected for `reason` (the engine then aborts it).
    mutating func headRejected(_ id: UInt64, _ reason: ImageKitError) {
        transfers[id]?.rejection = reason
    }

    /// Transfer `id` received a piece of its streamed body: the chunk handlers of its waiters
    /// (from now on no streaming waiter joins it).
    mutating func bodyPiece(of id: UInt64) -> [Chunks] {
        guard transfers[id] != nil else { return [] }
        transfers[id]!.bodyStarted = true
        return transfers[id]!.waiters.compactMap { waiters[$0]?.caller?.stream?.chunks }
    }

    /// Transfer `id` received more of its body.
    func progress(of id: UInt64) -> ProgressAction {
        guard let t = transfers[id] else { return .none }
        return .report(t.target, t.waiters.compactMap { waiters[$0]?.caller?.progress })
    }

    /// Transfer `id` ended (the engine completed it, or never accepted it): its slot is
    /// free, its waiters leave with its result, and queued transfers start in its place.
    mutating func transferCompleted(_ id: UInt64) -> CompletedAction {
        guard let t = transfers.removeValue(forKey: id) else { return .none }
        if byKey[t.target.resolved] == id { byKey[t.target.resolved] = nil }
        releaseSlot(host: t.target.resolved.authority)
        let completions = t.waiters.compactMap { waiters.removeValue(forKey: $0)?.caller?.completion }
        return .finish(Finished(target: t.target, sharedBy: t.waiters.count, rejection: t.rejection,
                                completions: completions, queueLaunchRun: schedule()))
    }

    /// A transfer context was made for the engine.
    mutating func contextCreated() {
        transferContexts += 1
    }

    /// The engine let go of a transfer context.
    mutating func contextReleased() {
        transferContexts -= 1
    }

    // MARK: - Scheduling

    private mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    /// Queues transfer `id` (again) at its current priority.
    private mutating func enqueue(_ id: UInt64) {
        let seq = makeID()
        transfers[id]!.phase = .queued(seq: seq)
        queue.push(PendingQueue.Entry(id: id, seq: seq), priority: transfers[id]!.priority)
    }

    /// A running transfer to `host` ended or was dropped.
    private mutating func releaseSlot(host: String) {
        runningTransfers -= 1
        if let n = runningPerHost[host] { runningPerHost[host] = n > 1 ? n - 1 : nil }
    }

    /// Gives transfer `id` the highest priority of its waiters, moving it in the queue.
    private mutating func updatePriority(_ id: UInt64) {
        guard let t = transfers[id] else { return }
        let top = t.waiters.compactMap { waiters[$0]?.caller?.priority }.max() ?? t.priority
        guard top != t.priority else { return }
        transfers[id]!.priority = top
        if case .queued = t.phase { enqueue(id) }
    }

    /// Removes `waiter` from transfer `id`. When it was the last one, the transfer leaves
    /// the queue, or (running) is marked for aborting and its engine id returned, if known.
    private mutating func detach(_ waiter: UInt64, from id: UInt64) -> UInt64? {
        guard var t = transfers[id] else { return nil }
        t.waiters.removeAll { $0 == waiter }
        guard t.waiters.isEmpty else {
            transfers[id] = t
            updatePriority(id)
            return nil
        }
        if byKey[t.target.resolved] == id { byKey[t.target.resolved] = nil }
        switch t.phase {
        case .queued:
            transfers[id] = nil
            queuedTransfers -= 1
            return nil
        case .running(let engineID, _):
            t.phase = .running(engineID: engineID, cancelRequested: true)
            transfers[id] = t
            return engineID
        }
    }

    /// Takes transfers off the queue while slots are free, marks them running and puts them
    /// in the launch backlog; true when a launch run must be queued for them.
    private mutating func schedule() -> Bool {
        guard !isShutDown, !isSuspended else { return false }
        // The queue is taken out while it is read, so its closures may read `transfers`.
        var queue = PendingQueue()
        swap(&queue, &self.queue)
        defer { swap(&queue, &self.queue) }
        var started = false
        while runningTransfers < limits.maxConcurrent, queuedTransfers > 0 {
            let next = queue.pop(order: limits.order, isLive: { entry in
                if case .queued(let seq)? = transfers[entry.id]?.phase { return seq == entry.seq }
                return false
            }, canStart: { id in
                guard let perHost = limits.maxPerHost, let host = transfers[id]?.target.resolved.authority else {
                    return true
                }
                return runningPerHost[host, default: 0] < perHost
            })
            guard let id = next, let t = transfers[id] else { break }
            transfers[id]!.phase = .running(engineID: nil, cancelRequested: false)
            queuedTransfers -= 1
            runningTransfers += 1
            runningPerHost[t.target.resolved.authority, default: 0] += 1
            launchBacklog.append(Start(transfer: id, target: t.target))
            started = true
        }
        guard started, !launchRunPending else { return false }
        launchRunPending = true
        return true
    }
}
