/// What a ``RedisByteTier`` has done since it was made.
public struct RedisTierStatistics: Sendable, Equatable {
    /// Reads that found a value.
    public var hits = 0
    /// Reads that found nothing (or a value too long to be one of ours).
    public var misses = 0
    /// Reads, stores and checks that failed because a node did not answer in time, refused the
    /// command (`OOM` under `noeviction`), or was skipped with its circuit open: each cost a miss
    /// or a store not made, never an error.
    public var failures = 0
    /// Of ``failures``, the operations skipped at once because their node's circuit was open.
    public var skippedOpenCircuit = 0
    /// Values stored.
    public var stores = 0
    /// Values not stored because they were longer than ``RedisTierConfiguration/maxValueBytes``.
    public var oversized = 0
    /// Times a node's circuit opened.
    public var circuitOpenings = 0
    /// The nodes whose circuit is open now.
    public var openNodes: [RedisEndpoint] = []

    /// Empty statistics.
    public init() {}
}
