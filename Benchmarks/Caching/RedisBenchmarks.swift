import Dispatch
import Foundation
import ImageKit
import ImageKitRedis
import Synchronization
import TestServers
import XCTest

/// The shared Redis tier (ImageKitRedis) against the local disk tier and the cold path, its
/// throughput with two threads, and what a stalled or dead node costs. redis-server and nginx
/// run on 127.0.0.1, started here and stopped at the end.
///
/// XCTest's `measure` is not used: it fails a block whose runs differ by more than 10 %, which
/// network round trips on a shared 2-core VM always do. Each figure is a median over many calls.
final class RedisBenchmarks: BenchmarkCase {
    private let format = OutputFormat.fixed(.jpeg())
    private let thumbnail = ImageContext(thumbnailPixelSize: PixelSize(square: 256))

    /// Runs `body` in a task and waits for it.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do { let value = try await body(); result.withLock { $0 = .success(value) } } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    private func redis(_ arguments: [String] = []) throws -> RedisServer {
        let server = try RedisServer(arguments: arguments)
        addTeardownBlock { server.stop() }
        return server
    }

    private func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-bench-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    private func tier(_ servers: [RedisServer], timeout: Duration = .milliseconds(50),
                      coolDown: Duration = .seconds(2)) throws -> RedisByteTier {
        var configuration = RedisTierConfiguration(nodes: servers.map { RedisEndpoint(host: "127.0.0.1", port: $0.port) })
        configuration.namespace = "bench:"
        configuration.timeout = timeout
        configuration.connectTimeout = timeout
        configuration.circuitCoolDown = coolDown
        return try RedisByteTier(configuration: configuration)
    }

    /// Milliseconds `body` takes.
    private static func clock(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    /// Milliseconds per call of `query`, over `count` calls that must all hit.
    private static func msPerHit(_ count: Int, _ query: @escaping @Sendable () async throws -> ImageCacheHit?) throws -> Double {
        try blocking {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<count {
                let hit = try await query()
                precondition(hit != nil)
            }
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(count)
        }
    }

    /// A shared-tier hit of a 256 px JPEG variant (`ByteTierImageCache.entry`: GETRANGE, envelope
    /// check, header read) against a local disk-tier hit of the same variant, and against the cold
    /// path the shared tier saves: download from nginx, decode to 256 px, encode, store (a manager
    /// load of a fresh URL). Target: shared hit ≤ 0.2 × the cold path.
    func testSharedHitAgainstLocalDiskAndColdPath() throws {
        let nginx = try NginxServer(files: ["photo.jpg": BenchInputs.jpeg100KB.bytes])
        addTeardownBlock { nginx.stop() }
        let server = try redis()
        let shared = ByteTierImageCache(tier: try tier([server]))
        let local = try ImageCache(namespace: "bench", directory: temporaryDirectory())
        var downloads = DownloaderConfiguration()
        downloads.destinationPolicy = DestinationPolicy(allowsLoopback: true)
        let manager = ImageManager(cache: local, downloader: try Downloader(configuration: downloads))
        let serial = Atomic<Int>(0)
        let format = self.format, context = thumbnail
        let coldLoad: @Sendable () async throws -> EncodedImage = {
            let url = nginx.url("/photo.jpg?n=\(serial.wrappingAdd(1, ordering: .relaxed).newValue)")
            let result = try await manager.encodedImage(for: url, as: format, options: .waitStoreCache, context: context)
            precondition(result.source == .loader)
            return result.encoded
        }
        let variant = try Self.blocking(coldLoad)
        try Self.blocking { try await shared.store(.variant(variant), forKey: "v", to: .all, metadata: DiskCacheMetadata()) }
        try Self.blocking { try await local.store(.variant(variant), forKey: "v", to: .disk, metadata: DiskCacheMetadata()) }

        var sharedMs: [Double] = [], diskMs: [Double] = [], coldMs: [Double] = []
        for round in 0..<12 {
            let s = try Self.msPerHit(50) { try await shared.entry(forKey: "v", kind: .variant, from: .all) }
            let d = try Self.msPerHit(50) { try await local.entry(forKey: "v", kind: .variant, from: .disk) }
            let c = try Self.clock { _ = try Self.blocking(coldLoad) }
            if round > 1 {  // two warm-up rounds
                sharedMs.append(s)
                diskMs.append(d)
                coldMs.append(c)
            }
        }
        let sharedMedian = BenchRecorder.median(sharedMs), cold = BenchRecorder.median(coldMs)
        BenchRecorder.record(BenchResult(
            section: "shared tier (Redis)",
            name: "shared hit, \(variant.pixelSize) JPEG variant (\(variant.data.count) B) vs cold load (download + decode + encode)",
            medianMs: sharedMedian, minMs: sharedMs.min() ?? 0, bytes: Double(variant.data.count),
            anchor: "cold manager load of the 100 KB JPEG to a 256 px JPEG", anchorMedianMs: cold,
            ratio: sharedMedian / cold, target: 0.2, targetRelation: "<=",
            notes: ["local disk hit ms": BenchRecorder.median(diskMs),
                    "shared / local disk": sharedMedian / BenchRecorder.median(diskMs)]))
    }

    /// Hits of the shared tier from two threads at once (two tasks, each its own loop), as hits
    /// per second, against one thread.
    func testSharedHitThroughputWithTwoThreads() throws {
        let server = try redis()
        let shared = ByteTierImageCache(tier: try tier([server]))
        let payload = try Self.blocking {
            let pixels = [UInt8](repeating: 128, count: 256 * 192 * 4)
            return try await ImageEncoder.encodedImage(try Image(width: 256, height: 192, premultipliedRGBA: pixels), as: .jpeg())
        }
        try Self.blocking { try await shared.store(.variant(payload), forKey: "v", to: .all, metadata: DiskCacheMetadata()) }
        let perTask = 2000
        func hitsPerSecond(tasks: Int) throws -> Double {
            let ms = try Self.clock {
                try Self.blocking {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<tasks {
                            group.addTask {
                                for _ in 0..<perTask {
                                    let hit = try await shared.entry(forKey: "v", kind: .variant, from: .all)
                                    precondition(hit != nil)
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            }
            return Double(tasks * perTask) / (ms / 1000)
        }
        _ = try hitsPerSecond(tasks: 2)  // warm-up: connections
        var one: [Double] = [], two: [Double] = []
        for _ in 0..<5 {
            one.append(try hitsPerSecond(tasks: 1))
            two.append(try hitsPerSecond(tasks: 2))
        }
        let twoMedian = BenchRecorder.median(two)
        BenchRecorder.record(BenchResult(
            section: "shared tier (Redis)", name: "shared hits, 2 threads (\(payload.data.count) B variant)",
            medianMs: 1000 / twoMedian, minMs: 1000 / (two.max() ?? twoMedian), bytes: Double(payload.data.count),
            notes: ["hits/s, 2 threads": twoMedian, "hits/s, 1 thread": BenchRecorder.median(one),
                    "2 threads / 1 thread": twoMedian / BenchRecorder.median(one)]))
    }

    /// p99 of a shared-tier lookup over three nodes while one is stalled (SIGSTOP: it accepts
    /// connections and never answers) and then dead (killed: connections refused), with a 20 ms
    /// timeout and a 100 ms circuit cool-down, so the stalled node is probed — and costs the full
    /// timeout — again and again. Target: p99 ≤ timeout + 5 ms.
    func testP99WithOneBadNodeAgainstTheTimeout() throws {
        let servers = try (0..<3).map { _ in try redis() }
        let timeoutMs = 20.0
        let tier = try tier(servers, timeout: .milliseconds(Int64(timeoutMs)), coolDown: .milliseconds(100))
        for i in 0..<300 { try Self.blocking { await tier.setData(Data(repeating: 1, count: 20_000), forKey: "k\(i)", expires: nil) } }
        func lookups() throws -> [Double] {
            try Self.blocking {
                var times: [Double] = []
                for round in 0..<6 {
                    for i in 0..<300 {
                        let start = DispatchTime.now().uptimeNanoseconds
                        _ = await tier.data(forKey: "k\(i)")
                        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                    }
                    _ = round
                }
                return times.sorted()
            }
        }
        servers[1].suspend()
        let stalled = try lookups()
        servers[1].resume()
        servers[1].crash()
        let dead = try lookups()
        let p99 = stalled[stalled.count * 99 / 100]
        BenchRecorder.record(BenchResult(
            section: "shared tier (Redis)", name: "lookup with 1 of 3 nodes stalled (timeout 20 ms, cool-down 100 ms; ratio: p99 ms)",
            medianMs: stalled[stalled.count / 2], minMs: stalled[0], ratio: p99, target: timeoutMs + 5, targetRelation: "<=",
            notes: ["p99 ms stalled": p99, "max ms stalled": stalled.last ?? 0,
                    "p99 ms dead": dead[dead.count * 99 / 100], "max ms dead": dead.last ?? 0,
                    "circuit openings": Double(tier.statistics.circuitOpenings)]))
    }
}
