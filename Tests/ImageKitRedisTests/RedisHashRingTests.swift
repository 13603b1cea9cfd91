import ImageKit
import ImageKitRedis
import XCTest

/// The hash ring, endpoints and configuration checks: no server needed.
final class RedisHashRingTests: XCTestCase {
    private let keys = (0..<20_000).map { "key-\($0)" }

    private func nodes(_ count: Int) -> [RedisEndpoint] {
        (0..<count).map { RedisEndpoint(host: "10.0.0.\($0 + 1)", port: 6379) }
    }

    func testKeysSpreadOverEveryNode() {
        let ring = RedisHashRing(nodes: nodes(3))
        var counts: [RedisEndpoint: Int] = [:]
        for key in keys { counts[ring.node(for: key), default: 0] += 1 }
        XCTAssertEqual(counts.count, 3)
        for (node, count) in counts {
            XCTAssertGreaterThan(count, keys.count / 5, "\(node) holds too few keys: \(count)")
            XCTAssertLessThan(count, keys.count / 2, "\(node) holds too many keys: \(count)")
        }
    }

    func testANodeJoiningTakesOnlyItsShare() {
        let before = RedisHashRing(nodes: nodes(3))
        let after = RedisHashRing(nodes: nodes(4))
        let newcomer = nodes(4)[3]
        var moved = 0
        for key in keys where before.node(for: key) != after.node(for: key) {
            XCTAssertEqual(after.node(for: key), newcomer, "\(key) moved between two old nodes")
            moved += 1
        }
        let share = Double(moved) / Double(keys.count)
        XCTAssertGreaterThan(share, 0.15)
        XCTAssertLessThan(share, 0.35, "about a quarter of the keys should move, not \(share)")
    }

    func testANodeLeavingMovesOnlyItsKeys() {
        let all = nodes(4)
        let before = RedisHashRing(nodes: all)
        let after = RedisHashRing(nodes: [all[0], all[1], all[3]])
        for key in keys where before.node(for: key) != all[2] {
            XCTAssertEqual(before.node(for: key), after.node(for: key), "\(key) moved though its node stayed")
        }
    }

    func testTheRingDependsOnTheNodesNotTheirOrder() {
        let a = RedisHashRing(nodes: nodes(3))
        let b = RedisHashRing(nodes: nodes(3).reversed())
        for key in keys.prefix(2000) { XCTAssertEqual(a.node(for: key), b.node(for: key)) }
    }

    func testEndpointURLs() throws {
        XCTAssertEqual(try RedisEndpoint(url: "redis://10.1.2.3:7000"), RedisEndpoint(host: "10.1.2.3", port: 7000))
        XCTAssertEqual(try RedisEndpoint(url: "redis://cache.internal"), RedisEndpoint(host: "cache.internal", port: 6379))
        XCTAssertEqual(try RedisEndpoint(url: "redis://[::1]:6380/"), RedisEndpoint(host: "::1", port: 6380))
        for bad in ["http://x:1", "redis://", "redis://h:0", "redis://h:99999", "redis://u:p@h:1", "redis://h:1/2"] {
            XCTAssertThrowsError(try RedisEndpoint(url: bad), bad) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, ImageKitError.invalidArgument("").code)
            }
        }
    }

    func testConfigurationIsChecked() {
        XCTAssertThrowsError(try RedisByteTier(configuration: RedisTierConfiguration(nodes: [])))
        var twice = RedisTierConfiguration(nodes: nodes(1) + nodes(1))
        XCTAssertThrowsError(try twice.validate())
        twice.nodes = nodes(1)
        XCTAssertNoThrow(try twice.validate())
        twice.maxValueBytes = 0
        XCTAssertThrowsError(try twice.validate())
    }

    func testKeysAreNamespacedHashes() throws {
        var configuration = RedisTierConfiguration(nodes: nodes(2))
        configuration.namespace = "fleet-a:"
        let tier = try RedisByteTier(configuration: configuration)
        let key = tier.redisKey(for: "https://example.com/a.jpg?w=256")
        XCTAssertTrue(key.hasPrefix("fleet-a:"))
        XCTAssertEqual(key.count, "fleet-a:".count + 32)
        XCTAssertTrue(key.dropFirst(8).allSatisfy { $0.isHexDigit })
        XCTAssertEqual(key, tier.redisKey(for: "https://example.com/a.jpg?w=256"))
        XCTAssertNotEqual(key, tier.redisKey(for: "https://example.com/b.jpg?w=256"))
    }
}
