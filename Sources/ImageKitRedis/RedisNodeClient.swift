import Dispatch
import ImageKit
import Synchronization

/// One node's pool of connections, its circuit breaker and its threads.
///
/// hiredis blocks, so every operation runs on this node's own dispatch queue, never on the Swift
/// cooperative pool: the async caller suspends on a continuation until the queue answers. At most
/// ``RedisTierConfiguration/connectionsPerNode`` operations run at once; the connections they
/// used are kept for the next ones unless they broke.
final class RedisNodeClient: Sendable {
    /// The node.
    let endpoint: RedisEndpoint
    /// Its circuit.
    let breaker: RedisCircuitBreaker
    private let configuration: RedisTierConfiguration
    private let queue: DispatchQueue
    private let slots: DispatchSemaphore
    private let idle = Mutex<[RedisConnection]>([])

    /// A client of `endpoint` configured by `configuration`.
    init(endpoint: RedisEndpoint, configuration: RedisTierConfiguration) {
        self.endpoint = endpoint
        self.configuration = configuration
        breaker = RedisCircuitBreaker(threshold: configuration.failuresToOpenCircuit,
                                      coolDown: configuration.circuitCoolDown)
        queue = DispatchQueue(label: "imagekit.redis.\(endpoint)", attributes: .concurrent)
        slots = DispatchSemaphore(value: configuration.connectionsPerNode)
    }

    /// Connections open and idle now.
    var idleConnections: Int { idle.withLock { $0.count } }

    /// Runs `body` with a connection of this node, on the node's queue, within the configured
    /// timeout (`body` is given what is left of it).
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
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, ImageKitError>, Never>) in
            queue.async {
                do throws(ImageKitError) {
                    continuation.resume(returning: .success(try self.perform(body, deadline: deadline)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Runs `body` on this thread (one of the node's queue) before `deadline`.
    private func perform<T>(_ body: (RedisConnection, Duration) throws(ImageKitError) -> T,
                            deadline: ContinuousClock.Instant) throws(ImageKitError) -> T {
        guard slots.wait(timeout: .now() + Self.nanoseconds(deadline - .now)) == .success else {
            breaker.recordFailure()
            throw .timedOut("Redis \(endpoint): all \(configuration.connectionsPerNode) connections stayed busy for \(configuration.timeout)")
        }
        defer { slots.signal() }
        let connection: RedisConnection
        if let reused = idle.withLock({ $0.popLast() }) {
            connection = reused
        } else {
            do {
                connection = try RedisConnection(to: endpoint, timeout: min(configuration.connectTimeout, deadline - .now),
                                                 configuration: configuration)
            } catch {
                breaker.recordFailure()
                throw error
            }
        }
        let left = deadline - .now
        guard left > .zero else {
            idle.withLock { $0.append(connection) }
            breaker.recordFailure()
            throw .timedOut("Redis \(endpoint): no time left for the command after connecting (\(configuration.timeout))")
        }
        do {
            let value = try body(connection, left)
            finish(connection)
            return value
        } catch {
            finish(connection)
            throw error
        }
    }

    /// Keeps `connection` for reuse and records a success, or drops it and records a failure.
    private func finish(_ connection: RedisConnection) {
        if connection.isBroken {
            breaker.recordFailure()
        } else {
            idle.withLock { $0.append(connection) }
            breaker.recordSuccess()
        }
    }

    /// `duration` in whole nanoseconds for Dispatch (0 when negative).
    private static func nanoseconds(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }
}
