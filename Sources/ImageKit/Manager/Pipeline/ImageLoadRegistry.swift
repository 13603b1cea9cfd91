/// The pipelines loads may join and the direct disk reads loads may wait on, by key, as a
/// value that only decides (as ``ImageLoadJobStateMachine`` does): the manager keeps it under
/// one lock, so a load finds either a pipeline, a read in flight, or neither, never a stale mix.
///
/// A direct read is an `async` load reading its entry from the disk tier in its own task
/// instead of a pipeline's; loads of the same key arriving meanwhile wait for its answer
/// rather than reading again.
///
/// Generic over the pipeline and over what a waiting load leaves behind (its continuation in
/// the manager), so the tests use their own.
struct ImageLoadRegistry<Key: Hashable, Job: AnyObject, Waiter> {
    /// The pipelines in flight.
    var jobs: [Key: Job] = [:]
    /// The direct reads in flight, each with the loads waiting for its answer.
    private var reads: [Key: [Waiter]] = [:]

    /// What a load that may read directly does.
    enum ReadAction: Equatable {
        /// Nothing is in flight for the key: the load reads, and must call ``endRead(_:)``.
        case read
        /// A read is in flight: the load waits for it (``wait(for:_:)``).
        case wait
        /// A pipeline is in flight: the load joins it.
        case join
    }

    /// Records a direct read of `key` unless a read or a pipeline for it is in flight.
    mutating func beginRead(_ key: Key) -> ReadAction {
        if jobs[key] != nil { return .join }
        if reads[key] != nil { return .wait }
        reads[key] = []
        return .read
    }

    /// Leaves `waiter` with the read of `key`; false when that read has ended meanwhile (the
    /// load then goes on as though it had found nothing in flight).
    mutating func wait(for key: Key, _ waiter: Waiter) -> Bool {
        guard reads[key] != nil else { return false }
        reads[key]?.append(waiter)
        return true
    }

    /// Ends the read of `key`; returns the loads waiting for its answer.
    mutating func endRead(_ key: Key) -> [Waiter] {
        reads.removeValue(forKey: key) ?? []
    }

    /// Forgets `job` when it is still the pipeline recorded for `key`.
    mutating func jobEnded(_ job: Job, key: Key) {
        if jobs[key] === job { jobs[key] = nil }
    }
}

extension ImageLoadRegistry: Sendable where Key: Sendable, Job: Sendable, Waiter: Sendable {}
