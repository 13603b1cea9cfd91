import Dispatch
import Foundation
import ImageKit
import Synchronization
import TestServers
import XCTest

/// The image manager's own cost: a warm memory-cache load through the whole `async` API, and
/// a cold load of a 100 KB JPEG from nginx on 127.0.0.1 (download, 256 px thumbnail, memory
/// and disk store) against the same three steps measured alone, in the same run.
final class ManagerBenchmarks: BenchmarkCase {
    static let servers = SharedServer(start: { try NginxServer(files: ["photo.jpg": BenchInputs.jpeg100KB.bytes]) },
                                      stop: { $0.stop() })

    override class func tearDown() {
        servers.stop()
        super.tearDown()
    }

    /// An empty cache in a temporary folder removed after the test.
    func temporaryCache() throws -> ImageCache {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-bench-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return try ImageCache(namespace: "bench", directory: dir)
    }

    /// The first error a batch threw, kept for the waiting thread.
    private final class Outcome: Sendable {
        let error = Mutex<(any Error)?>(nil)
    }

    /// Numbers for fresh URLs, and each sample's load times: the manager's, and the parts'
    /// (download, decode, store) alone.
    private final class Tally: Sendable {
        let serial = Atomic<Int>(0)
        let samples = Mutex<[(ours: [Double], parts: [[Double]])]>([])
    }

    /// Runs `body` in a task and waits for it: `measure` blocks are synchronous.
    static func blocking(_ body: @escaping @Sendable () async throws -> Void) throws {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await body() } catch { outcome.error.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = outcome.error.withLock({ $0 }) { throw error }
    }

    /// `try await manager.image(for:)` answered from the memory tier: URL check, blocklist,
    /// key, memory lookup and the result, per call. Target: median ≤ 5 µs.
    func testWarmMemoryCacheLoad() throws {
        let cache = try temporaryCache()
        let manager = ImageManager(cache: cache, downloader: try Downloader())
        let url = URL(string: "http://127.0.0.1:9/warm/photo.jpg")!
        let image = try Image(width: 64, height: 48, premultipliedRGBA: [UInt8](repeating: 255, count: 64 * 48 * 4))
        cache.memoryCache.set(image, forKey: url.absoluteString)
        try recordWarmLoads("warm memory-cache load, image(for:) async (µs; target 5)") {
            try await manager.image(for: url).source
        }
    }

    /// Times `load` (which must answer from memory) 20,000 times per sample and records µs per
    /// load against a 5 µs target.
    func recordWarmLoads(_ name: String,
                                 _ load: @escaping @Sendable () async throws -> ImageSource) throws {
        let loads = 20_000
        let batch: @Sendable () async throws -> Void = {
            for _ in 0..<loads {
                let tier = try await load()
                precondition(tier == .memory)
            }
        }
        try Self.blocking(batch)  // warm-up
        let (samples, _) = try BenchRecorder.time(self, ours: { try Self.blocking(batch) })
        let perLoad = samples.map { $0 / Double(loads) }
        let median = BenchRecorder.median(perLoad)
        BenchRecorder.record(BenchResult(
            section: "manager", name: name, medianMs: median, minMs: perLoad.min() ?? 0, ratio: median * 1000,
            target: 5, targetRelation: "<=", notes: ["µs per load": median * 1000]))
    }

    /// `try await manager.encodedImage(for:as:context:)` answered from the memory tier, as a
    /// thumbnail service calls it on every warm request (a thumbnail context, a negotiated
    /// format): URL check, blocklist, keys, memory lookup and the result. Target: median ≤ 5 µs.
    func testWarmEncodedVariantLoad() throws {
        let cache = try temporaryCache()
        let manager = ImageManager(cache: cache, downloader: try Downloader())
        let url = URL(string: "http://127.0.0.1:9/warm/photo-017.jpg")!
        let format = OutputFormat.negotiate(accept: nil)
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 256))
        let image = try Image(width: 64, height: 48, premultipliedRGBA: [UInt8](repeating: 255, count: 64 * 48 * 4))
        let encoded = try EncodedImage(data: try ImageEncoder.encode(image, as: .jpeg(quality: 80)))
        cache.memoryCache.set(encoded, forKey: manager.cacheKey(for: url, as: format, context: context)!)
        try recordWarmLoads("warm memory-cache variant, encodedImage(for:as:) async (µs; target 5)") {
            try await manager.encodedImage(for: url, as: format, context: context).source
        }
    }

    /// `try await manager.image(for:)` of a 256 px thumbnail that only the disk tier holds (the
    /// memory tier emptied before each load), against the disk tier's `image(forKey:)` alone
    /// on the same entry. Loads alternate with reads alone, so drift hits both alike.
    /// Target: ≤ 1.1 × the read alone.
    func testWarmDiskCacheLoad() throws {
        let cache = try temporaryCache()
        let manager = ImageManager(cache: cache, downloader: try Downloader())
        let url = URL(string: "http://127.0.0.1:9/warm/photo.jpg")!
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 256))
        let thumbnail = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256)))
            .decode(BenchInputs.jpeg100KB.bytes)
        guard let key = manager.cacheKey(for: url, context: context) else { throw ImageKitError.invalidURL("no key") }
        try Self.blocking { try await cache.store(thumbnail, forKey: key, to: .disk) }
        let tally = Tally()
        let pairs = 200
        let batch: @Sendable () async throws -> Void = {
            var ours: [Double] = [], alone: [Double] = [], oursCPU: [Double] = [], aloneCPU: [Double] = []
            for i in 0..<pairs {
                for step in i % 2 == 0 ? [0, 1] : [1, 0] {
                    _ = cache.memoryCache.remove(forKey: key)
                    let cpu = BenchRecorder.processCPUMilliseconds()
                    let start = DispatchTime.now().uptimeNanoseconds
                    if step == 0 {
                        let result = try await manager.image(for: url, context: context)
                        precondition(result.source == .disk && result.image.width == 256)
                    } else {
                        let image = try await cache.diskCache.image(forKey: key)
                        precondition(image?.width == 256)
                    }
                    let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
                    let cpuMs = BenchRecorder.processCPUMilliseconds() - cpu
                    if step == 0 { ours.append(ms); oursCPU.append(cpuMs) } else { alone.append(ms); aloneCPU.append(cpuMs) }
                }
            }
            // Parts: the read alone, then the CPU time (every thread) of a load and of a read alone.
            tally.samples.withLock { $0.append((ours, [alone, oursCPU, aloneCPU])) }
        }
        try Self.blocking(batch)  // warm-up: page cache, buffer pool, disk index
        tally.samples.withLock { $0 = [] }
        _ = try BenchRecorder.time(self, ours: { try Self.blocking(batch) })
        let samples = tally.samples.withLock { $0 }
        let ours = samples.flatMap(\.ours)
        let median = BenchRecorder.median(ours)
        let anchor = BenchRecorder.median(samples.flatMap { $0.parts[0] })
        BenchRecorder.record(BenchResult(
            section: "manager", name: "warm disk-tier load, 256 px thumbnail, image(for:) async",
            medianMs: median, minMs: ours.min() ?? 0, anchor: "disk tier image(forKey:) alone",
            anchorMedianMs: anchor, ratio: median / anchor, target: 1.1, targetRelation: "<=",
            notes: ["CPU ms/load": BenchRecorder.median(samples.flatMap { $0.parts[1] }),
                    "CPU ms/read alone": BenchRecorder.median(samples.flatMap { $0.parts[2] })]))
    }

    /// A cold `image(for:)` of a 100 KB JPEG from nginx with a 256 px thumbnail, waiting for the
    /// memory and disk store (bitmap and original bytes), against the download, the thumbnail
    /// decode and the store each measured alone on the same file. Target: ≤ 1.2 × their sum.
    ///
    /// Each sample alternates the two, load by load, so the drift of a shared machine hits both
    /// alike; the figures are medians over every load.
    func testColdLoadAgainstItsParts() throws {
        let input = BenchInputs.jpeg100KB
        let nginx = try Self.servers.get()
        let cache = try temporaryCache()
        var downloads = DownloaderConfiguration()
        downloads.destinationPolicy = DestinationPolicy(allowsLoopback: true)  // nginx on 127.0.0.1
        let downloader = try Downloader(configuration: downloads)
        let manager = ImageManager(cache: cache, downloader: downloader)
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 256))
        let decoder = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256)))
        let tally = Tally()
        /// A URL no cache tier and no transfer in flight has seen (nginx ignores the query).
        let fresh: @Sendable () -> URL = {
            nginx.url("/photo.jpg?n=\(tally.serial.wrappingAdd(1, ordering: .relaxed).newValue)")
        }
        let managerLoad: @Sendable () async throws -> Double = {
            let start = DispatchTime.now().uptimeNanoseconds
            let result = try await manager.image(for: fresh(), options: .waitStoreCache, context: context)
            precondition(result.source == .loader && result.image.width == 256)
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        }
        let partsAlone: @Sendable () async throws -> [Double] = {
            let url = fresh()
            var start = DispatchTime.now().uptimeNanoseconds
            func lap() -> Double {
                let now = DispatchTime.now().uptimeNanoseconds
                defer { start = now }
                return Double(now - start) / 1e6
            }
            let data = try await downloader.download(DownloadRequest(url: url)).data
            let download = lap()
            let thumbnail = try decoder.decode(data)
            let decode = lap()
            try await cache.store(thumbnail, forKey: url.absoluteString)
            try await cache.storeOriginalData(data, forKey: url.absoluteString)
            let store = lap()
            precondition(thumbnail.width == 256)
            return [download, decode, store]
        }
        let pairs = 30
        let batch: @Sendable () async throws -> Void = {
            var ours: [Double] = [], parts: [[Double]] = []
            for i in 0..<pairs {
                if i % 2 == 0 {
                    ours.append(try await managerLoad())
                    parts.append(try await partsAlone())
                } else {
                    parts.append(try await partsAlone())
                    ours.append(try await managerLoad())
                }
            }
            tally.samples.withLock { $0.append((ours, parts)) }
        }
        try Self.blocking(batch)  // warm-up: connections, buffer pool, disk index
        tally.samples.withLock { $0 = [] }
        _ = try BenchRecorder.time(self, ours: { try Self.blocking(batch) })
        let samples = tally.samples.withLock { $0 }
        let ours = samples.flatMap(\.ours)
        let parts = samples.flatMap(\.parts)
        let download = BenchRecorder.median(parts.map { $0[0] })
        let decode = BenchRecorder.median(parts.map { $0[1] })
        let store = BenchRecorder.median(parts.map { $0[2] })
        let sum = download + decode + store
        let median = BenchRecorder.median(ours)
        BenchRecorder.record(BenchResult(
            section: "manager", name: "cold load, \(input.bytes.count / 1024) KB JPEG from nginx, 256 px thumbnail, stored",
            medianMs: median, minMs: ours.min() ?? 0, bytes: Double(input.bytes.count),
            anchor: "download + decode + store alone", anchorMedianMs: sum, ratio: median / sum, target: 1.2,
            targetRelation: "<=", notes: ["download ms": download, "decode ms": decode, "store ms": store,
                                          "parts in sequence ms": BenchRecorder.median(parts.map { $0.reduce(0, +) })]))
    }
}
