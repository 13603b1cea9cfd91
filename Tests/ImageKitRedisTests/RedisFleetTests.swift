import Foundation
import ImageKit
@testable import ImageKitRedis
import TestServers
import XCTest

/// Several managers (nodes of a fleet) over shared Redis nodes that die, stall and come back.
final class RedisFleetTests: RedisTestCase {
    private let format = OutputFormat.fixed(.png())

    func testASecondManagerIsServedFromRedisAndTheOriginSeesOneLoadPerURL() async throws {
        let server = try startRedis()
        let origin = try origin(count: 3)
        let nodeA = try manager(over: try RedisByteTier(configuration: configuration([server])), name: "a")
        let tierB = try RedisByteTier(configuration: configuration([server]))
        let nodeB = try manager(over: tierB, name: "b")
        var made: [EncodedImage] = []
        for i in 0..<3 {
            let result = try await nodeA.encodedImage(for: origin.url("/\(i).jpg"), as: format, options: .waitStoreCache)
            XCTAssertEqual(result.source, .loader)
            made.append(result.encoded)
        }
        for i in 0..<3 {
            let result = try await nodeB.encodedImage(for: origin.url("/\(i).jpg"), as: format)
            XCTAssertEqual(result.source, .disk, "from the shared tier")
            XCTAssertEqual(result.encoded, made[i], "the same bytes, not loaded and encoded again")
            XCTAssertEqual(requests(origin, "/\(i).jpg"), 1, "the origin saw one load of /\(i).jpg")
        }
        XCTAssertEqual(tierB.statistics.hits, 3)
        let again = try await nodeB.encodedImage(for: origin.url("/0.jpg"), as: format)
        XCTAssertEqual(again.source, .memory, "promoted to B's local tiers")
    }

    func testANodeKilledMidRunCostsMissesOnlyAndHitsResumeWhenItIsBack() async throws {
        let servers = try (0..<3).map { _ in try startRedis() }
        var settings = configuration(servers)
        settings.failuresToOpenCircuit = 1
        settings.circuitCoolDown = .milliseconds(300)
        let count = 24
        let origin = try origin(count: count)
        let urls = (0..<count).map { origin.url("/\($0).jpg") }
        let writer = try manager(over: try RedisByteTier(configuration: settings), name: "writer")
        for url in urls { _ = try await writer.encodedImage(for: url, as: format, options: .waitStoreCache) }

        let victim = servers[1]
        let tier = try RedisByteTier(configuration: settings)
        let variantKeys = try urls.map { try XCTUnwrap(writer.cacheKey(for: $0, as: format)) }
        let onVictim = variantKeys.indices.filter { tier.node(forKey: variantKeys[$0]).port == victim.port }
        XCTAssertGreaterThan(onVictim.count, 0, "some variants live on the node that dies")
        XCTAssertLessThan(onVictim.count, count)
        // The node dies halfway, or before its last key if all its keys come earlier (the ring
        // depends on the ports), so that loads after the crash ask it.
        let crashAt = min(count / 2, try XCTUnwrap(onVictim.last))

        // Some loads, then the node dies, then the rest: every load succeeds.
        let reader = try manager(over: tier, name: "reader")
        var sources: [ImageSource] = []
        for (i, url) in urls.enumerated() {
            if i == crashAt { victim.crash() }
            let result = try await reader.encodedImage(for: url, as: format)
            sources.append(result.source)
        }
        XCTAssertEqual(sources.count, count, "no load failed")
        XCTAssertTrue(sources.contains(.disk), "the live nodes still served")
        XCTAssertGreaterThan(tier.statistics.failures, 0, "the dead node cost misses")

        // Back on the same port (empty): after the cool-down, stores and hits resume there.
        let reborn = try startRedis(port: victim.port)
        try await Task.sleep(for: .milliseconds(400))
        let fresh = try manager(over: tier, name: "fresh")
        for url in urls { _ = try await fresh.encodedImage(for: url, as: format, options: .waitStoreCache) }
        let late = try manager(over: try RedisByteTier(configuration: settings), name: "late")
        for url in urls {
            let result = try await late.encodedImage(for: url, as: format)
            XCTAssertEqual(result.source, .disk, "\(url) from the shared tier, the revived node included")
        }
        guard case .integer(let keys) = try raw(reborn, "DBSIZE") else { return XCTFail("DBSIZE") }
        XCTAssertGreaterThan(keys, 0, "the revived node holds entries again")
        XCTAssertEqual(tier.statistics.openNodes, [])
    }

    /// A node restarted between two operations leaves the tier a stale connection: the next
    /// operation reconnects instead of failing (no miss, no failure, no open circuit).
    func testARestartedNodeIsReconnectedWithoutAFailure() async throws {
        let server = try startRedis()
        var settings = configuration([server])
        settings.failuresToOpenCircuit = 1
        let tier = try RedisByteTier(configuration: settings)
        try await tier.setData(Data([1, 2, 3]), forKey: "before", expires: nil)
        let before = try await tier.data(forKey: "before")
        XCTAssertEqual(before, Data([1, 2, 3]))

        server.crash()
        _ = try startRedis(port: server.port)
        try await tier.setData(Data([4, 5]), forKey: "after", expires: nil)
        let after = try await tier.data(forKey: "after")
        XCTAssertEqual(after, Data([4, 5]), "stored and read on the new server")
        XCTAssertEqual(tier.statistics.failures, 0)
        XCTAssertEqual(tier.statistics.openNodes, [])
    }

    func testAStalledNodeTimesOutOpensItsCircuitAndRecovers() async throws {
        let server = try startRedis()
        var settings = configuration([server])
        settings.timeout = .milliseconds(100)
        settings.failuresToOpenCircuit = 2
        settings.circuitCoolDown = .milliseconds(500)
        let tier = try RedisByteTier(configuration: settings)
        await tier.setData(Data([1, 2, 3]), forKey: "k", expires: nil)

        server.suspend()
        for attempt in 0..<2 {
            let start = ContinuousClock.now
            let value = await tier.data(forKey: "k")
            let elapsed = ContinuousClock.now - start
            XCTAssertNil(value, "attempt \(attempt): a stalled node is a miss")
            XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(90), "attempt \(attempt) waited for the timeout")
            XCTAssertLessThan(elapsed, .milliseconds(400), "attempt \(attempt) took \(elapsed)")
        }
        XCTAssertEqual(tier.statistics.openNodes.map(\.port), [server.port], "the circuit opened")
        let start = ContinuousClock.now
        let skipped = await tier.data(forKey: "k")
        XCTAssertNil(skipped)
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(50), "an open circuit answers at once")
        XCTAssertEqual(tier.statistics.skippedOpenCircuit, 1)

        server.resume()
        try await Task.sleep(for: .milliseconds(600))
        let recovered = await tier.data(forKey: "k")
        XCTAssertEqual(recovered, Data([1, 2, 3]), "after the cool-down a probe closes the circuit")
        XCTAssertEqual(tier.statistics.openNodes, [])
        XCTAssertEqual(tier.statistics.circuitOpenings, 1)
    }

    func testADeadNodeCostsAtMostTheTimeout() async throws {
        let live = try startRedis()
        let dead = try startRedis()
        var settings = configuration([live, dead])
        settings.timeout = .milliseconds(50)
        settings.circuitCoolDown = .milliseconds(100)
        dead.crash()
        let tier = try RedisByteTier(configuration: settings)
        var worst = Duration.zero
        for i in 0..<200 {
            let start = ContinuousClock.now
            _ = await tier.data(forKey: "k\(i)")
            worst = max(worst, ContinuousClock.now - start)
        }
        XCTAssertLessThan(worst, .milliseconds(150), "a refused connection costs a miss, never more than the timeout")
        XCTAssertGreaterThan(tier.statistics.failures, 0)
    }

    func testAStalledNodeDoesNotBlockTheCooperativePool() async throws {
        let server = try startRedis()
        var settings = configuration([server])
        settings.timeout = .milliseconds(300)
        settings.failuresToOpenCircuit = 100  // every lookup waits its full timeout
        let tier = try RedisByteTier(configuration: settings)
        await tier.setData(Data([1]), forKey: "k", expires: nil)
        server.suspend()
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask { _ = await tier.data(forKey: "k") }
            }
            // While 16 lookups wait on the node's threads, tasks on the cooperative pool run on.
            let tick = ContinuousClock.now
            for _ in 0..<10 { try await Task.sleep(for: .milliseconds(1)) }
            XCTAssertLessThan(ContinuousClock.now - tick, .milliseconds(150), "the cooperative pool stayed free")
            try await group.waitForAll()
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(290), "the lookups did wait")
        XCTAssertEqual(tier.statistics.failures, 16)
        server.resume()
    }

    func testManyKeysInOnePipelinedRoundTripPerNode() async throws {
        let servers = try (0..<3).map { _ in try startRedis() }
        var settings = configuration(servers)
        settings.failuresToOpenCircuit = 1
        let tier = try RedisByteTier(configuration: settings)
        let keys = (0..<60).map { "key-\($0)" }
        for key in keys { await tier.setData(Data(key.utf8), forKey: key, expires: nil) }
        let before = try servers.map(connectionsReceived)

        let found = await tier.data(forKeys: keys + ["absent"])
        XCTAssertEqual(found.count, 60)
        for key in keys { XCTAssertEqual(found[key], Data(key.utf8)) }
        XCTAssertEqual(try servers.map(connectionsReceived), before.map { $0 + 1 },
                       "each node answered on the connection it already had (+1: this INFO)")
        XCTAssertEqual(tier.statistics.hits, 60)
        XCTAssertEqual(tier.statistics.misses, 1)

        servers[2].crash()
        let partial = await tier.data(forKeys: keys)
        let live = Set(keys.filter { tier.node(forKey: $0).port != servers[2].port })
        XCTAssertEqual(Set(partial.keys), live, "the dead node's keys are misses, the others hits")
        XCTAssertLessThan(live.count, 60)
        XCTAssertEqual(tier.statistics.failures, 60 - live.count)
    }
}
