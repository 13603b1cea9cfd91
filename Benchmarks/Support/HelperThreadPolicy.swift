import Foundation
import ImageKit
import XCTest

/// Loads through ``ImageManager`` with its default helper-thread policy (a decode that starts
/// while the other decode workers are idle gets a helper thread:
/// ``ImageManagerConfiguration/decodeHelperThreadWhenIdle``) against a manager with the policy
/// off, in the same process, samples interleaved, wall and CPU time per load: what a service
/// sees of the helper thread, lone loads (latency) and two at once (throughput).
enum HelperThreadPolicy {
    /// A manager loading local copies of the input (no cache tier asked).
    private static func manager(helperThreadWhenIdle: Bool, directory: URL) throws -> ImageManager {
        var configuration = ImageManagerConfiguration()
        configuration.allowsLocalFiles = true
        configuration.decodeThreads = 2
        configuration.decodeHelperThreadWhenIdle = helperThreadWhenIdle
        let cache = try ImageCache(namespace: "bench",
                                   directory: directory.appendingPathComponent("cache-\(helperThreadWhenIdle)"))
        return ImageManager(cache: cache, downloader: try Downloader(), configuration: configuration)
    }

    /// Wall and process CPU milliseconds per load of `loads` loads through `manager` with
    /// `context`, `threads` at once, each stream of loads on its own file (distinct keys: no two
    /// loads share a decode).
    private static func sample(_ manager: ImageManager, _ files: [URL], context: ImageContext, threads: Int,
                               loads: Int) throws -> (wall: Double, cpu: Double) {
        let cpu0 = BenchRecorder.processCPUMilliseconds()
        let perStream = loads / threads
        let wall = try BenchRecorder.clock(1) {
            try ManagerBenchmarks.blocking {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for file in files.prefix(threads) {
                        group.addTask {
                            for _ in 0..<perStream {
                                let result = try await manager.image(for: file, options: [.fromLoaderOnly, .cacheMemoryOnly],
                                                                     context: context)
                                precondition(result.source == .loader)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        let n = Double(perStream * threads)
        return (wall / n, (BenchRecorder.processCPUMilliseconds() - cpu0) / n)
    }

    /// Records loads of `input` with `context` through a manager with the default policy against
    /// one with it off (the anchor): `loads` loads a sample, `threads` at once. Two at once run
    /// 8 loads a sample (4 a stream), so a sample is mostly the steady state of a busy service:
    /// only the first decode of a sample starts while the other worker is idle. `noiseOnly`:
    /// both managers with the policy off (an A/A row: how far the ratio moves with nothing to
    /// tell apart, the resolution of the rows beside it).
    static func compare(_ test: XCTestCase, _ input: BenchInputs.Input, context: ImageContext, name: String,
                        threads: Int, loads: Int, samples: Int, target: Double?, noiseOnly: Bool = false) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let files = try (0..<2).map { i -> URL in
            let url = dir.appendingPathComponent("photo-\(i).img")  // formats are sniffed from the bytes
            try Data(input.bytes).write(to: url)
            return url
        }
        let with = try manager(helperThreadWhenIdle: !noiseOnly, directory: dir)
        let without = try manager(helperThreadWhenIdle: false, directory: dir)
        _ = try sample(with, files, context: context, threads: threads, loads: loads)
        _ = try sample(without, files, context: context, threads: threads, loads: loads)
        try WallAndCPU.record(section: "manager", name: name, megapixels: input.megapixels, samples: samples,
                              anchor: ("decodeHelperThreadWhenIdle = false", "policy off"),
                              ours: (noiseOnly ? "policy off (A/A)" : "default", {
                                  try sample(with, files, context: context, threads: threads, loads: loads)
                              }), theirs: {
                                  try sample(without, files, context: context, threads: threads, loads: loads)
                              }, target: target)
    }
}
