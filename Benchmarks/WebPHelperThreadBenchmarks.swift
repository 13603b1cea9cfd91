import Foundation
import Glibc
import ImageKit
import XCTest

/// A lossy WebP 256 px thumbnail with libwebp's helper thread (``DecodeOptions/usesHelperThread``)
/// against the same decode on one thread, in the same process, samples interleaved: the latency
/// of a lone load, and the throughput of two loads at once (a busy 2-core service), each with the
/// process CPU time per load beside the wall time, so latency is never bought with CPU unseen.
final class WebPHelperThreadBenchmarks: XCTestCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private static let samples = 15

    private func decoder(helper: Bool) -> ImageDecoder {
        ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256), usesHelperThread: helper))
    }

    /// Milliseconds of CPU time the whole process has used.
    private static func processCPUMilliseconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
        return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
    }

    /// Wall and process CPU milliseconds per load of `loads` decodes of `bytes` by `decoder`,
    /// spread over `threads` threads started together.
    private static func sample(_ decoder: ImageDecoder, _ bytes: [UInt8], threads: Int,
                               loads: Int) -> (wall: Double, cpu: Double) {
        let cpu0 = processCPUMilliseconds()
        let wall = BenchRecorder.clock(1) {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                bytes.withUnsafeBytes { raw in
                    for _ in 0..<loads / threads { _ = try? decoder.decode(raw) }
                }
            }
        }
        let n = Double(loads / threads * threads)
        return (wall / n, (processCPUMilliseconds() - cpu0) / n)
    }

    /// Records helper-thread figures against one-thread figures (the anchor), `loads` decodes a
    /// sample over `threads` threads, with the ratio of wall times per load.
    private func compare(name: String, threads: Int, loads: Int, target: Double) throws {
        let input = BenchInputs.webpLossy
        let with = decoder(helper: true), without = decoder(helper: false)
        let image = try input.bytes.withUnsafeBytes { try with.decode($0) }
        XCTAssertLessThanOrEqual(max(image.width, image.height), 256)
        _ = Self.sample(without, input.bytes, threads: threads, loads: loads)
        var ours: [(wall: Double, cpu: Double)] = [], anchor: [(wall: Double, cpu: Double)] = []
        for i in 0..<Self.samples {
            // Alternate which goes first, so a drift of the shared machine hits both alike.
            if i % 2 == 0 {
                ours.append(Self.sample(with, input.bytes, threads: threads, loads: loads))
                anchor.append(Self.sample(without, input.bytes, threads: threads, loads: loads))
            } else {
                anchor.append(Self.sample(without, input.bytes, threads: threads, loads: loads))
                ours.append(Self.sample(with, input.bytes, threads: threads, loads: loads))
            }
        }
        let wall = BenchRecorder.median(ours.map(\.wall)), anchorWall = BenchRecorder.median(anchor.map(\.wall))
        BenchRecorder.record(BenchResult(
            section: "thumbnail 256 px", name: "\(input.name) \(name)", medianMs: wall,
            minMs: ours.map(\.wall).min() ?? 0, megapixels: input.megapixels,
            anchor: "one thread per decode", anchorMedianMs: anchorWall, ratio: wall / anchorWall,
            target: target, targetRelation: "<=",
            notes: ["CPU ms/load helper": BenchRecorder.median(ours.map(\.cpu)),
                    "CPU ms/load one thread": BenchRecorder.median(anchor.map(\.cpu))]))
    }

    /// A lone load: the helper thread should take a fifth off its latency.
    func testLoneLoadLatency() throws {
        try compare(name: "helper thread, lone load (ms per load)", threads: 1, loads: 2, target: 0.8)
    }

    /// Two loads at once on two cores: a helper thread per decode must not cost throughput.
    func testTwoLoadThroughput() throws {
        try compare(name: "helper thread, 2 loads at once (ms per load)", threads: 2, loads: 4, target: 1.0)
    }
}
