import Foundation
import ImageKit
import ImageKitTestSupport
import ImageKitRedis
import TestServers
import XCTest

// ARTICLE-FLEET-BEGIN
/// One instance of the fleet: its own memory and disk cache, then the shared Redis nodes.
func makeFleetManager(cacheDirectory: URL, redisNodes: [String]) throws -> (ImageManager, RedisByteTier) {
    var redis = RedisTierConfiguration(nodes: try redisNodes.map { try RedisEndpoint(url: $0) })
    redis.namespace = "thumbs:"              // keys are "thumbs:" + 32 hex digits of SHA-256
    redis.timeout = .milliseconds(50)        // a slow or dead node costs a miss after this
    redis.maxValueBytes = 2 << 20            // bigger values are not shared
    redis.defaultTimeToLive = .seconds(86_400)
    let shared = try RedisByteTier(configuration: redis)
    let caches = ImageCachesManager(
        caches: [try ImageCache(namespace: "thumbs", directory: cacheDirectory),  // memory → disk
                 ByteTierImageCache(tier: shared)],                               // → Redis
        storePolicy: .concurrent)  // a load is written to every tier; a Redis hit is copied to the local ones
    return (ImageManager(cache: caches, downloader: try Downloader()), shared)
}
// ARTICLE-FLEET-END

/// Runs the RunningAFleet article's example against real Redis nodes and checks the article shows it.
final class FleetArticleExampleTests: RedisTestCase {
    func testExampleRuns() async throws {
        let nodes = try (0..<2).map { _ in try startRedis() }
        let (first, firstTier) = try makeFleetManager(cacheDirectory: try temporaryDirectory("fleet-a"),
                                                      redisNodes: nodes.map(\.url))
        let shutdownFirst = ManagerShutdown(first)
        addTeardownBlock { await shutdownFirst.run() }
        let (second, secondTier) = try makeFleetManager(cacheDirectory: try temporaryDirectory("fleet-b"),
                                                        redisNodes: nodes.map(\.url))
        let shutdownSecond = ManagerShutdown(second)
        addTeardownBlock { await shutdownSecond.run() }
        XCTAssertEqual(firstTier.configuration.nodes.count, 2)

        let pixels = [UInt8](repeating: 200, count: 8 * 8 * 4)
        let encoded = try await ImageEncoder.encodedImage(try Image(width: 8, height: 8, premultipliedRGBA: pixels),
                                                          as: .png())
        try await first.cache.store(.variant(encoded), forKey: "v", to: .all, metadata: DiskCacheMetadata())
        let hit = try await second.cache.entry(forKey: "v", kind: .variant, from: .disk)
        XCTAssertEqual(hit?.value.variant, encoded, "the second instance finds it in Redis")
        XCTAssertEqual(secondTier.statistics.hits, 1)
    }

    func testArticleShowsThisCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let example = source.components(separatedBy: "// ARTICLE-FLEET-BEGIN\n")[1]
            .components(separatedBy: "// ARTICLE-FLEET-END")[0]
        let path = "Sources/ImageKit/ImageKit.docc/RunningAFleet.md"
        let article = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        XCTAssertTrue(article.contains("```swift\n" + example + "```"),
                      "\(path)'s fleet example differs from FleetArticleExampleTests.swift")
    }
}
