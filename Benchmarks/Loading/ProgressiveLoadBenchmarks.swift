import Dispatch
import Foundation
import ImageKit
import Synchronization
import TestServers
import XCTest

/// Progressive loading (decode while the bytes arrive): a cold 256 px thumbnail of a 3 MB
/// baseline JPEG and of a 2 MB progressive JPEG served at 20 MB/s (20 MiB/s, 64 KB pieces
/// paced from the first byte) by the Python test server on 127.0.0.1, through the manager with
/// nothing cached and no originals kept, against
/// (a) the same download alone (the downloader, body dropped, no decode) and (b) the manager
/// with ``ImageManagerConfiguration/streamsDecoding`` off (download, then decode), interleaved
/// in the same process; and the peak RSS each load adds, streamed against whole, each
/// measured in a fresh helper process (ImageKitTestHelper stream-load).
///
/// Not nginx's `limit_rate 20m`: nginx lets a request send a second's worth of bytes at once
/// (its rate check has a granularity of one second), so a 2 MB body arrived in 3.5 ms and a
/// 3 MB one at 30 MB/s.
final class ProgressiveLoadBenchmarks: BenchmarkCase {
    static let inputs: [(name: String, kind: String, input: BenchInputs.Input)] = [
        ("baseline.jpg", "baseline", BenchInputs.jpeg24MP),
        ("progressive.jpg", "progressive", BenchInputs.jpeg17MPProgressive),
    ]
    static let servers = SharedServer(start: { try ScriptServer() }, stop: { $0.stop() })
    /// 20 MB/s, as nginx counts a megabyte in `limit_rate 20m`.
    static let rate = 20 * 1024 * 1024

    override class func tearDown() {
        servers.stop()
        super.tearDown()
    }

    /// Each sample's times: streamed load, download alone, download-then-decode load.
    private final class Tally: Sendable {
        let serial = Atomic<Int>(0)
        let samples = Mutex<[[Double]]>([])
    }

    func testColdThumbnailOf3MBBaselineJPEGAt20MBps() throws { try compare(Self.inputs[0]) }

    func testColdThumbnailOf2MBProgressiveJPEGAt20MBps() throws { try compare(Self.inputs[1]) }

    private func compare(_ entry: (name: String, kind: String, input: BenchInputs.Input)) throws {
        let server = try Self.servers.get()
        var downloads = DownloaderConfiguration()
        downloads.destinationPolicy = DestinationPolicy(allowsLoopback: true)  // the server is on 127.0.0.1
        let downloader = try Downloader(configuration: downloads)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent(entry.name)
        try Data(entry.input.bytes).write(to: file)
        let path = "/trickle?path=\(file.path)&piece=65536&rate=\(Self.rate)"
        let cache = try ImageCache(namespace: "bench", directory: dir)
        let streaming = ImageManager(cache: cache, downloader: downloader)
        var wholeConfiguration = ImageManagerConfiguration()
        wholeConfiguration.streamsDecoding = false
        let whole = ImageManager(cache: cache, downloader: downloader, configuration: wholeConfiguration)
        // Nothing cached or stored: every load is cold, and no original is kept.
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 256), queryCacheType: [],
                                   storeCacheType: [], originalStoreCacheType: [])
        let tally = Tally()
        let fresh: @Sendable () -> URL = {
            server.url("\(path)&n=\(tally.serial.wrappingAdd(1, ordering: .relaxed).newValue)")
        }
        let timed: @Sendable (() async throws -> Void) async throws -> Double = { body in
            let start = DispatchTime.now().uptimeNanoseconds
            try await body()
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        }
        let load: @Sendable (ImageManager) async throws -> Double = { manager in
            try await timed {
                let result = try await manager.image(for: fresh(), options: .fromLoaderOnly, context: context)
                precondition(result.source == .loader && max(result.image.width, result.image.height) == 256)
            }
        }
        let downloadAlone: @Sendable () async throws -> Double = {
            try await timed {
                _ = try await downloader.download(DownloadRequest(url: fresh()), keepingBody: false) { _ in }
            }
        }
        let rounds = 3
        let batch: @Sendable () async throws -> Void = {
            for i in 0..<rounds {
                var times = [0.0, 0.0, 0.0]
                // The order turns each round, so drift of the shared machine hits all three alike.
                for step in 0..<3 {
                    switch (step + i) % 3 {
                    case 0: times[0] = try await load(streaming)
                    case 1: times[1] = try await downloadAlone()
                    default: times[2] = try await load(whole)
                    }
                }
                tally.samples.withLock { $0.append(times) }
            }
        }
        try ManagerBenchmarks.blocking(batch)  // warm-up: connections, decoder paths
        tally.samples.withLock { $0 = [] }
        _ = try BenchRecorder.time(self, ours: { try ManagerBenchmarks.blocking(batch) })
        let samples = tally.samples.withLock { $0 }
        let streamed = samples.map { $0[0] }
        let downloadMs = BenchRecorder.median(samples.map { $0[1] })
        let wholeMs = BenchRecorder.median(samples.map { $0[2] })
        let median = BenchRecorder.median(streamed)
        let kb = entry.input.bytes.count / 1024
        let what = "cold 256 px thumbnail, \(kb) KB \(entry.kind) JPEG at 20 MB/s, no originals"
        BenchRecorder.record(BenchResult(
            section: "progressive load", name: "\(what): streamed vs download alone",
            medianMs: median, minMs: streamed.min() ?? 0, bytes: Double(entry.input.bytes.count),
            anchor: "download alone", anchorMedianMs: downloadMs, ratio: median / downloadMs, target: 1.15,
            targetRelation: "<=", notes: ["download-then-decode ms": wholeMs]))
        BenchRecorder.record(BenchResult(
            section: "progressive load", name: "\(what): streamed vs download-then-decode",
            medianMs: median, minMs: streamed.min() ?? 0, bytes: Double(entry.input.bytes.count),
            anchor: "streamsDecoding off", anchorMedianMs: wholeMs, ratio: median / wholeMs, target: 0.8,
            targetRelation: "<=", notes: ["download alone ms": downloadMs]))
        let streamedKiB = try peakGrowth(server.url(path), streams: true)
        let wholeKiB = try peakGrowth(server.url(path), streams: false)
        // A baseline JPEG's rows stream through, so the load holds a fraction of the body. A
        // progressive 1/8 thumbnail is complete once its DC scans are in, and libjpeg's usual
        // progression refines the DC after most AC scans: the bytes up to that refinement are held
        // until it arrives (ic_incremental.h), nearly the whole of this file. Streaming must then
        // cost no more memory than downloading first, and saves only the tail.
        BenchRecorder.record(BenchResult(
            section: "progressive load", name: "\(what): peak RSS of the load, streamed vs download-then-decode",
            medianMs: median, minMs: streamed.min() ?? 0, anchor: "streamsDecoding off",
            ratio: wholeKiB > 0 ? streamedKiB / wholeKiB : nil, target: entry.kind == "baseline" ? 0.5 : 1.0,
            targetRelation: "<=",
            notes: ["streamed peak MB": streamedKiB / 1024, "download-then-decode peak MB": wholeKiB / 1024,
                    "body MB": Double(entry.input.bytes.count) / 1_048_576]))
    }

    /// The median, over three fresh helper processes, of how far one load raised the peak RSS
    /// (KiB), with large allocations mapped fresh so freed memory cannot hide a load's buffers.
    private func peakGrowth(_ url: URL, streams: Bool) throws -> Double {
        let helper = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("ImageKitTestHelper")
        var growth: [Double] = []
        for _ in 0..<3 {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-rss-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let process = Process()
            process.executableURL = helper
            process.arguments = ["stream-load", url.absoluteString, streams ? "1" : "0", dir.path]
            var environment = ProcessInfo.processInfo.environment
            environment["GLIBC_TUNABLES"] = "glibc.malloc.mmap_threshold=131072"
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, out)
            guard let range = out.range(of: "load-hwm-kib "),
                  let kib = Double(out[range.upperBound...].prefix { $0.isNumber || $0 == "-" }) else {
                XCTFail("the helper printed \"\(out)\"")
                return .nan
            }
            growth.append(kib)
        }
        return BenchRecorder.median(growth)
    }
}
