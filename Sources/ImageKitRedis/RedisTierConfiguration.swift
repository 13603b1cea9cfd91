import ImageKit

/// How a ``RedisByteTier`` talks to its nodes and what it stores.
///
/// The defaults suit a fleet in one data centre: a shared hit takes well under a millisecond, so
/// an operation that has not finished after ``timeout`` is a miss (or a store that did not happen).
public struct RedisTierConfiguration: Sendable {
    /// The Redis nodes; keys are spread over them by consistent hashing.
    public var nodes: [RedisEndpoint]
    /// Put before every hashed key (`namespace` + 32 hex digits), so several fleets or
    /// applications can share nodes; ``RedisByteTier/removeAllData()`` removes only these keys.
    public var namespace: String = "imagekit:"
    /// Values longer than this many bytes are not stored, and a longer reply reads as a miss
    /// (default 4 MiB).
    public var maxValueBytes: Int = 4 << 20
    /// How long an entry stays when its metadata has no expiry (default 7 days); nil: until
    /// Redis evicts it.
    public var defaultTimeToLive: Duration? = .seconds(7 * 24 * 3600)
    /// The most any one operation may take, from the call to its answer: waiting for a free
    /// connection, connecting, sending the command and reading all of its reply (a deadline, so
    /// a node that drips its reply is cut off at it too; default 50 ms).
    public var timeout: Duration = .milliseconds(50)
    /// The most connecting to a node may take, within ``timeout`` (default 50 ms).
    public var connectTimeout: Duration = .milliseconds(50)
    /// Connections kept open per node, and the most operations running on one node at once
    /// (default 8).
    public var connectionsPerNode: Int = 8
    /// Points per node on the hash ring (default 160): more spread keys more evenly.
    public var virtualNodesPerNode: Int = 160
    /// Failed operations in a row after which a node's circuit opens (default 2).
    public var failuresToOpenCircuit: Int = 2
    /// How long an open circuit skips its node before one operation tries it again (default 2 s).
    public var circuitCoolDown: Duration = .seconds(2)
    /// The ACL user name for `AUTH` (Redis 6 and later); nil: the default user.
    public var username: String?
    /// The password for `AUTH`; nil: no `AUTH`.
    public var password: String?
    /// The logical database (`SELECT`); 0 by default.
    public var database: Int = 0

    /// A configuration for `nodes` with the defaults above.
    public init(nodes: [RedisEndpoint]) {
        self.nodes = nodes
    }

    /// Checks the values.
    ///
    /// - Throws: ``ImageKitError/invalidArgument(_:)`` naming the first value out of range.
    public func validate() throws(ImageKitError) {
        if nodes.isEmpty { throw .invalidArgument("a Redis tier needs at least one node") }
        if Set(nodes).count != nodes.count { throw .invalidArgument("a Redis node is listed twice") }
        if maxValueBytes <= 0 { throw .invalidArgument("maxValueBytes must be positive (\(maxValueBytes))") }
        if timeout <= .zero || connectTimeout <= .zero {
            throw .invalidArgument("timeout and connectTimeout must be positive")
        }
        if let ttl = defaultTimeToLive, ttl < .milliseconds(1) {
            throw .invalidArgument("defaultTimeToLive must be at least 1 ms")
        }
        if connectionsPerNode <= 0 { throw .invalidArgument("connectionsPerNode must be positive") }
        if virtualNodesPerNode <= 0 { throw .invalidArgument("virtualNodesPerNode must be positive") }
        if failuresToOpenCircuit <= 0 { throw .invalidArgument("failuresToOpenCircuit must be positive") }
        if circuitCoolDown < .zero { throw .invalidArgument("circuitCoolDown must not be negative") }
        if database < 0 { throw .invalidArgument("database must not be negative") }
    }
}
