import Dispatch
import ImageKit

/// One node's pool of connections, its circuit breaker and its threads.
///
/// A connection's calls block (until their deadline at most), so every operation runs on one of
/// this node's own serial dispatch queues
/// ("lanes", ``RedisTierConfiguration/connectionsPerNode`` of them), never on the Swift
/// cooperative pool: the async caller suspends on a continuation until its lane answers. Serial
/// queues run on overcommitting threads of their own; a concurrent queue would share the global
/// pool the Swift executor uses on Linux (as many threads as cores), and a stalled node would
/// stall every task. An operation goes to the lane with the fewest operations waiting; the
/// connections are kept for the next operations unless they broke.
final class RedisNodeClient: Sendable {
    /// The node.
    let endpoint: RedisEndpoint
    /// Its circuit.
    let breaker: RedisCircuitBreaker
    private let configuration: RedisTierConfiguration
    private let lanes: [DispatchQueue]
    /// Operations queued or running per lane.
    private let pending: Locked<[Int]>
    private let idle = Locked<[RedisConnection]>([])

    /// A client of `endpoint` configured by `configuration`.
    init(endpoint: RedisEndpoint, configuration: RedisTierConfiguration) {
        self.endpoint = endpoint
        self.configuration = configuration
        breaker = RedisCircuitBreaker(threshold: configuration.failuresToOpenCircuit,
                                      coolDown: configuration.circuitCoolDown)
        lanes = (0..<configuration.connectionsPerNode).map { DispatchQueue(label: "imagekit.redis.\(endpoint).\($0)") }
        pending = Locked([Int](repeating: 0, count: configuration.connectionsPerNode))
    }

    /// Runs `body` with a connection of this node, on one of the node's lanes, within the
    /// configured timeout (`body` is given what is left of it).
    ///
    /// - Throws: ``ImageKitError/overloaded(_:)`` when the node's circuit is open (at once);
    ///   ``ImageKitError/timedOut(_:)``, ``ImageKitError/connectFailed(_:)`` or
    ///   ``ImageKitError/network(_:)`` when the node did not answer in time; `body`'s error.
    func run<T: Sendable>(_ body: @escaping @Sendable (RedisConnection, Duration) throws(ImageKitError) -> T)
        async throws(ImageKitError) -> T {
        guard breaker.allowsRequest() else {
            throw .overloaded("Redis \(endpoint) is skipped: its circuit is open after failures")
        }
        let deadline = ContinuousClock.now + configuration.timeout
        let lane = pending.withLock { counts in
            let lane = counts.indices.min { counts[$0] < counts[$1] }!
            counts[lane] += 1
            return lane
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, ImageKitError>, Never>) in
            lanes[lane].async {
                defer { self.pending.withLock { $0[lane] -= 1 } }
                do throws(ImageKitError) {
                    continuation.resume(returning: .success(try self.perform(body, deadline: deadline)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Runs `body` on this thread (a lane's) before `deadline`.
    ///
    /// A kept connection may have gone stale — the node restarted, or dropped it — and then
    /// breaks on first use: the other kept connections, opened to the same server, are dropped
    /// too, and the operation gets one new connection before a failure counts against the node
    /// (the tier's operations are reads, SETs and DELs, all safe to send again).
    private func perform<T>(_ body: (RedisConnection, Duration) throws(ImageKitError) -> T,
                            deadline: ContinuousClock.Instant) throws(ImageKitError) -> T {
        guard deadline > .now else {
            breaker.recordFailure()
            throw .timedOut("Redis \(endpoint): the operation waited its whole timeout (\(configuration.timeout)) for a free connection")
        }
        if let reused = idle.withLock({ $0.popLast() }) {
            do {
                return try attempt(body, on: reused, deadline: deadline, breakageCounts: false)
            } catch {
                guard reused.isBroken else { throw error }
                idle.withLock { $0.removeAll() }
                guard deadline > .now else {
                    breaker.recordFailure()
                    throw error
                }
            }
        }
        let connection: RedisConnection
        do {
            connection = try RedisConnection(to: endpoint, timeout: min(configuration.connectTimeout, deadline - .now),
                                             configuration: configuration)
        } catch {
            breaker.recordFailure()
            throw error
        }
        return try attempt(body, on: connection, deadline: deadline, breakageCounts: true)
    }

    /// Runs `body` on `connection` with what is left before `deadline`, then keeps the connection
    /// (a success) or drops it if it broke (a failure, when `breakageCounts`).
    private func attempt<T>(_ body: (RedisConnection, Duration) throws(ImageKitError) -> T, on connection: RedisConnection,
                            deadline: ContinuousClock.Instant, breakageCounts: Bool) throws(ImageKitError) -> T {
        let left = deadline - .now
        guard left > .zero else {
            idle.withLock { $0.append(connection) }
            breaker.recordFailure()
            throw .timedOut("Redis \(endpoint): no time left for the command after connecting (\(configuration.timeout))")
        }
        do {
            let value = try body(connection, left)
            finish(connection, breakageCounts: breakageCounts)
            return value
        } catch {
            finish(connection, breakageCounts: breakageCounts)
            throw error
        }
    }

    /// Keeps `connection` for reuse and records a success, or drops it (recording a failure when
    /// `breakageCounts`).
    private func finish(_ connection: RedisConnection, breakageCounts: Bool) {
        if connection.isBroken {
            if breakageCounts { breaker.recordFailure() }
        } else {
            idle.withLock { $0.append(connection) }
            breaker.recordSuccess()
        }
    }
}
