/// Which loads wait on an ``ImageLoadJob`` and what stage the job is in, as a value that only
/// decides: each event changes the state and returns what the job must then do, which the
/// job does after releasing its lock (AsyncHTTPClient's pattern). No task, thread or socket
/// is touched here, so every transition is tested on its own.
///
/// Stages: `idle` (created, its task not yet recorded) → `running` → `finished` (the result,
/// or a failure, was handed out) — or `cancelled`, when the last waiting load left before
/// the result. Loads may join while the job is idle or running.
///
/// Generic over the waiter (an ``ImageTask`` in the job), the cached result a refreshed load
/// is handed first, and the handle of the job's task, so the tests use their own.
struct ImageLoadJobStateMachine<Waiter: AnyObject, Cached, Handle> {
    /// Where the job is.
    enum Stage: Equatable {
        case idle
        case running
        case finished
        case cancelled
    }

    /// The answer to a load asking to join.
    enum AttachAction {
        /// The job has its result or was cancelled: the load must start another.
        case rejected
        /// Joined; for a refreshed load, the cached result already handed to the others.
        case joined(cached: Cached?)
    }

    /// What the job does after a load left.
    enum DetachAction {
        /// Others still wait, or the result exists: nothing.
        case none
        /// It was the last load: set the decoder's cancel flag and cancel the task, if it
        /// was recorded yet (else ``started(_:)`` answers ``StartAction/cancel``).
        case stop(Handle?)
    }

    /// What the job does once its task exists.
    enum StartAction {
        case none
        /// Every load left before the task was recorded: cancel it.
        case cancel
    }

    private(set) var stage = Stage.idle
    /// The loads waiting, in the order they joined.
    private(set) var waiters: [Waiter] = []
    private var handle: Handle?
    /// The cached result a refreshed job handed out first.
    private var cached: Cached?

    /// Whether loads may still join.
    var isAccepting: Bool { stage == .idle || stage == .running }

    /// A load asks to join.
    mutating func attach(_ waiter: Waiter) -> AttachAction {
        guard isAccepting else { return .rejected }
        waiters.append(waiter)
        return .joined(cached: cached)
    }

    /// A load leaves (cancelled, or past its deadline).
    mutating func detach(_ waiter: Waiter) -> DetachAction {
        waiters.removeAll { $0 === waiter }
        guard waiters.isEmpty, isAccepting else { return .none }
        stage = .cancelled
        defer { handle = nil }
        return .stop(handle)
    }

    /// The job's task was created (it may already have run to its end).
    mutating func started(_ task: Handle) -> StartAction {
        switch stage {
        case .idle:
            stage = .running
            handle = task
            return .none
        case .cancelled:
            return .cancel
        case .finished:
            // The task ran to its end before it was recorded: nothing left to stop.
            return .none
        case .running:
            preconditionFailure("an image load job's task is recorded once")
        }
    }

    /// A refreshed job found the cached result: returns the loads to hand it to now (those
    /// joining later get it from ``attach(_:)``).
    mutating func foundCached(_ result: Cached) -> [Waiter] {
        cached = result
        return waiters
    }

    /// The job ends with its result or a failure: returns the loads to hand it to; none may
    /// join from now on. After a cancellation, no load is left to tell.
    mutating func finish() -> [Waiter] {
        guard isAccepting else { return [] }
        stage = .finished
        handle = nil
        defer { waiters = [] }
        return waiters
    }
}

extension ImageLoadJobStateMachine: Sendable where Waiter: Sendable, Cached: Sendable, Handle: Sendable {}
extension ImageLoadJobStateMachine.AttachAction: Sendable where Cached: Sendable {}
extension ImageLoadJobStateMachine.DetachAction: Sendable where Handle: Sendable {}
extension ImageLoadJobStateMachine.StartAction: Sendable {}
