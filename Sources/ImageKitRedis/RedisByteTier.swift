import CImageCore
import ImageKit
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A ``ByteCacheTier`` on one or more Redis nodes, shared by a fleet of ImageKit instances: put
/// it behind the local caches with ``ByteTierImageCache`` and ``ImageCachesManager`` (memory →
/// disk → Redis → loader).
///
/// Keys are ``RedisTierConfiguration/namespace`` followed by 32 hex digits of the SHA-256 of the
/// cache key, spread over the nodes by a ``RedisHashRing``. Values are stored with `SET … PX`:
/// the entry's expiry, or ``RedisTierConfiguration/defaultTimeToLive``. Values longer than
/// ``RedisTierConfiguration/maxValueBytes`` are not stored, and reads ask for at most that many
/// bytes (`GETRANGE`), so a foreign value cannot make a reader allocate more.
///
/// A node that is down, slow or refusing writes never fails a load: reads and checks answer
/// "not there" and stores are skipped, once the configured timeout has passed at the latest;
/// after ``RedisTierConfiguration/failuresToOpenCircuit`` failures in a row the node is skipped
/// at once until its cool-down is over. A reply is bounded before it is buffered: one longer than
/// an operation asked for (a read: ``RedisTierConfiguration/maxValueBytes``) is refused from its
/// header, a failure of the node like a timeout. ``statistics`` counts all of it. The blocking
/// socket calls run on each node's own threads, never on the Swift cooperative pool.
///
/// ```swift
/// let redis = try RedisByteTier(configuration: RedisTierConfiguration(nodes: [
///     RedisEndpoint(host: "10.0.0.5"), RedisEndpoint(host: "10.0.0.6"),
/// ]))
/// let caches = ImageCachesManager(caches: [try ImageCache(), ByteTierImageCache(tier: redis)],
///                                 storePolicy: .concurrent)
/// ```
public final class RedisByteTier: ByteCacheTier {
    /// How the tier was configured.
    public let configuration: RedisTierConfiguration
    /// Which node holds which key.
    public let ring: RedisHashRing
    private let clients: [RedisNodeClient]
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)
    private let skipped = Atomic<Int>(0)
    private let stores = Atomic<Int>(0)
    private let oversized = Atomic<Int>(0)

    /// A tier on the nodes of `configuration`. Connects lazily: no node needs to be up yet.
    ///
    /// - Throws: ``ImageKitError/invalidArgument(_:)`` when the configuration is not valid.
    public init(configuration: RedisTierConfiguration) throws(ImageKitError) {
        try configuration.validate()
        self.configuration = configuration
        ring = RedisHashRing(nodes: configuration.nodes, virtualNodes: configuration.virtualNodesPerNode)
        clients = configuration.nodes.map { RedisNodeClient(endpoint: $0, configuration: configuration) }
    }

    /// The Redis key for the cache key `key`: the namespace and 32 hex digits of its SHA-256.
    public func redisKey(for key: String) -> String {
        var ctx = ic_sha256()
        ic_sha256_init(&ctx)
        var key = key
        key.withUTF8 { ic_sha256_update(&ctx, $0.baseAddress, $0.count) }
        var digest = [UInt8](repeating: 0, count: 32)
        ic_sha256_final(&ctx, &digest)
        let hex = "0123456789abcdef".utf8.map { $0 }
        var text = [UInt8]()
        text.reserveCapacity(32)
        for byte in digest.prefix(16) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 15)])
        }
        return configuration.namespace + String(decoding: text, as: UTF8.self)
    }

    /// The node that holds the cache key `key`.
    public func node(forKey key: String) -> RedisEndpoint {
        ring.node(for: redisKey(for: key))
    }

    /// What the tier has done so far.
    public var statistics: RedisTierStatistics {
        var s = RedisTierStatistics()
        s.hits = hits.load(ordering: .relaxed)
        s.misses = misses.load(ordering: .relaxed)
        s.failures = failures.load(ordering: .relaxed)
        s.skippedOpenCircuit = skipped.load(ordering: .relaxed)
        s.stores = stores.load(ordering: .relaxed)
        s.oversized = oversized.load(ordering: .relaxed)
        s.circuitOpenings = clients.reduce(0) { $0 + $1.breaker.openCount }
        s.openNodes = clients.filter { $0.breaker.isOpen }.map(\.endpoint)
        return s
    }

    /// The bytes under `key`, or nil: not there, longer than the maximum, or the node failed
    /// (counted in ``statistics``).
    public func data(forKey key: String) async -> Data? {
        let name = Data(redisKey(for: key).utf8)
        let limit = configuration.maxValueBytes
        let reply = await attempt(key) { connection, left throws(ImageKitError) in
            // GETRANGE's end is inclusive: one byte more than allowed tells a longer value.
            try connection.command([Data("GETRANGE".utf8), name, Data("0".utf8), Data(String(limit).utf8)],
                                   timeout: left, maxBytes: limit + 1)
        }
        guard case .string(let data)? = reply, !data.isEmpty, data.count <= limit else {
            if reply != nil { misses.wrappingAdd(1, ordering: .relaxed) }
            return nil
        }
        hits.wrappingAdd(1, ordering: .relaxed)
        return data
    }

    /// The bytes under each of `keys` that has some, in one pipelined round trip per node (the
    /// keys of one node share a connection and one write). Keys that are missing, too long, or on
    /// a node that failed are absent from the answer (counted in ``statistics``).
    public func data(forKeys keys: [String]) async -> [String: Data] {
        let limit = configuration.maxValueBytes
        var byNode: [Int: [String]] = [:]
        for key in Set(keys) {
            byNode[ring.nodeIndex(forPosition: RedisHashRing.position(of: redisKey(for: key))), default: []].append(key)
        }
        var found: [String: Data] = [:]
        await withTaskGroup(of: [String: Data].self) { group in
            for (node, nodeKeys) in byNode {
                let client = clients[node]
                let commands = nodeKeys.map { key in
                    [Data("GETRANGE".utf8), Data(redisKey(for: key).utf8), Data("0".utf8), Data(String(limit).utf8)]
                }
                group.addTask {
                    do throws(ImageKitError) {
                        let replies = try await client.run { connection, left throws(ImageKitError) in
                            try connection.pipeline(commands, timeout: left, maxBytes: limit + 1)
                        }
                        var values: [String: Data] = [:]
                        for (key, reply) in zip(nodeKeys, replies) {
                            switch reply {
                            case .string(let data) where !data.isEmpty && data.count <= limit:
                                values[key] = data
                                self.hits.wrappingAdd(1, ordering: .relaxed)
                            case .error:
                                self.failures.wrappingAdd(1, ordering: .relaxed)
                            default:
                                self.misses.wrappingAdd(1, ordering: .relaxed)
                            }
                        }
                        return values
                    } catch {
                        self.countFailure(error, operations: nodeKeys.count)
                        return [:]
                    }
                }
            }
            for await values in group { found.merge(values) { first, _ in first } }
        }
        return found
    }

    /// Stores `data` under `key` until `expires` (or for the default time to live). Nothing is
    /// stored when `data` is longer than the maximum or `expires` has passed; a node that fails
    /// or refuses (`OOM` under `noeviction`) leaves it unstored, counted in ``statistics``.
    public func setData(_ data: Data, forKey key: String, expires: Date?) async {
        guard data.count <= configuration.maxValueBytes else {
            oversized.wrappingAdd(1, ordering: .relaxed)
            return
        }
        var arguments = [Data("SET".utf8), Data(redisKey(for: key).utf8), data]
        if let expires {
            let milliseconds = Int64((expires.timeIntervalSinceNow * 1000).rounded(.up))
            guard milliseconds > 0 else { return }
            arguments += [Data("PX".utf8), Data(String(milliseconds).utf8)]
        } else if let ttl = configuration.defaultTimeToLive {
            let milliseconds = ttl.components.seconds * 1000 + ttl.components.attoseconds / 1_000_000_000_000_000
            arguments += [Data("PX".utf8), Data(String(milliseconds).utf8)]
        }
        let sending = arguments
        let reply = await attempt(key) { connection, left throws(ImageKitError) in
            try connection.command(sending, timeout: left, maxBytes: 1024)
        }
        if reply != nil { stores.wrappingAdd(1, ordering: .relaxed) }
    }

    /// Removes what is stored under `key`.
    ///
    /// - Throws: ``ImageKitError`` when the key's node did not answer or refused.
    public func removeData(forKey key: String) async throws(ImageKitError) {
        let name = Data(redisKey(for: key).utf8)
        _ = try await client(for: key).run { connection, left throws(ImageKitError) in
            try Self.checked(connection.command([Data("DEL".utf8), name], timeout: left, maxBytes: 1024), connection)
        }
    }

    /// Whether something is stored under `key` (false when its node failed).
    public func containsData(forKey key: String) async -> Bool {
        let name = Data(redisKey(for: key).utf8)
        let reply = await attempt(key) { connection, left throws(ImageKitError) in
            try connection.command([Data("EXISTS".utf8), name], timeout: left, maxBytes: 1024)
        }
        return reply == .integer(1)
    }

    /// Removes every key of this tier's namespace from every node (`SCAN … MATCH`, then `DEL`).
    ///
    /// - Throws: the first node's error, once every node was tried.
    public func removeAllData() async throws(ImageKitError) {
        let pattern = Data((Self.globEscaped(configuration.namespace) + "*").utf8)
        var firstError: ImageKitError?
        for client in clients {
            do throws(ImageKitError) {
                var cursor = Data("0".utf8)
                repeat {
                    let current = cursor
                    let page = try await client.run { connection, left throws(ImageKitError) in
                        try Self.checked(connection.command([Data("SCAN".utf8), current, Data("MATCH".utf8), pattern,
                                                             Data("COUNT".utf8), Data("500".utf8)],
                                                            timeout: left, maxBytes: 1024), connection)
                    }
                    guard case .array(let parts) = page, parts.count == 2, case .string(let next) = parts[0],
                          case .array(let keys) = parts[1]
                    else { throw .invalidResponse("Redis \(client.endpoint) answered SCAN with \(page)") }
                    let names = keys.compactMap { if case .string(let name) = $0 { name } else { nil } }
                    if !names.isEmpty {
                        _ = try await client.run { connection, left throws(ImageKitError) in
                            try Self.checked(connection.command([Data("DEL".utf8)] + names, timeout: left,
                                                                maxBytes: 1024), connection)
                        }
                    }
                    cursor = next
                } while cursor != Data("0".utf8)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    /// The client of the node holding `key`.
    private func client(for key: String) -> RedisNodeClient {
        clients[ring.nodeIndex(forPosition: RedisHashRing.position(of: redisKey(for: key)))]
    }

    /// Runs `body` on `key`'s node; nil (counted as a failure) when the node failed or answered
    /// with an error.
    private func attempt(_ key: String,
                         _ body: @escaping @Sendable (RedisConnection, Duration) throws(ImageKitError) -> RedisReply)
        async -> RedisReply? {
        do throws(ImageKitError) {
            let reply = try await client(for: key).run(body)
            if case .error = reply {
                failures.wrappingAdd(1, ordering: .relaxed)
                return nil
            }
            return reply
        } catch {
            countFailure(error, operations: 1)
            return nil
        }
    }

    /// Counts `operations` failed with `error` (and skipped, when their node's circuit was open).
    private func countFailure(_ error: ImageKitError, operations: Int) {
        failures.wrappingAdd(operations, ordering: .relaxed)
        if error.code == ImageKitError.overloaded("").code { skipped.wrappingAdd(operations, ordering: .relaxed) }
    }

    /// `reply`, unless it is an error reply.
    private static func checked(_ reply: RedisReply, _ connection: RedisConnection) throws(ImageKitError) -> RedisReply {
        if case .error(let message) = reply { throw .io("Redis \(connection.endpoint): \(message)") }
        return reply
    }

    /// `text` with the glob characters of `SCAN … MATCH` escaped.
    private static func globEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "*?[]\\".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
