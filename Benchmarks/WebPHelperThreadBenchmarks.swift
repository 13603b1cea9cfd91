import Foundation
import ImageKit
import XCTest

/// A lossy WebP 256 px thumbnail with libwebp's helper thread (``DecodeOptions/usesHelperThread``)
/// against the same decode on one thread, in the same process, samples interleaved: the latency
/// of a lone load, and the throughput of two loads at once (a busy 2-core service), each with the
/// process CPU time per load beside the wall time, so latency is never bought with CPU unseen —
/// for the decoder forced either way, and through ``ImageManager`` with its default policy (a
/// helper thread only while the other workers are idle) against the policy turned off.
final class WebPHelperThreadBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private static let samples = 15
    /// For the 23.6 MP and 16.8 MP inputs, whose loads take 3 to 6 times the 12 MP one's.
    private static let largeSamples = 9

    private func decoder(helper: Bool) -> ImageDecoder {
        ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 256), usesHelperThread: helper))
    }

    /// Records helper-thread figures against one-thread figures (the anchor), `loads` decodes a
    /// sample over `threads` threads, with the ratio of wall times per load.
    private func compare(_ input: BenchInputs.Input = BenchInputs.webpLossy, name: String, threads: Int, loads: Int,
                         target: Double?) throws {
        let with = decoder(helper: true), without = decoder(helper: false)
        let image = try input.bytes.withUnsafeBytes { try with.decode($0) }
        XCTAssertLessThanOrEqual(max(image.width, image.height), 256)
        _ = WallAndCPU.sample(without, input.bytes, threads: threads, loads: loads)
        try WallAndCPU.record(section: "thumbnail 256 px", name: "\(input.name) \(name)", megapixels: input.megapixels,
                              samples: Self.samples, anchor: ("one thread per decode", "one thread"), ours: ("helper", {
                                  WallAndCPU.sample(with, input.bytes, threads: threads, loads: loads)
                              }), theirs: { WallAndCPU.sample(without, input.bytes, threads: threads, loads: loads) },
                              target: target)
    }

    /// Loads through a manager with the default helper-thread policy against one with it off.
    private func compareManagers(_ input: BenchInputs.Input = BenchInputs.webpLossy, name: String, threads: Int,
                                 loads: Int, target: Double) throws {
        try HelperThreadPolicy.compare(self, input, context: ImageContext(thumbnailPixelSize: PixelSize(square: 256)),
                                       name: "\(input.name) 256 px thumbnail, \(name) (ms per load)", threads: threads,
                                       loads: loads, samples: input.megapixels > 13 ? Self.largeSamples : Self.samples,
                                       target: target)
    }

    /// One load at a time through the manager: its decode runs alone and gets the helper thread.
    func testManagerLoneLoadLatency() throws {
        try compareManagers(name: "lone loads, default helper-thread policy", threads: 1, loads: 2, target: 0.8)
    }

    /// Two loads at once through the manager: the policy must not cost throughput.
    func testManagerTwoLoadThroughput() throws {
        try compareManagers(name: "2 loads at once, default helper-thread policy", threads: 2, loads: 8, target: 1.0)
    }

    /// The 23.6 MP lossy WebP, one load at a time through the manager.
    func testManagerLoneLoadLatency24MP() throws {
        try compareManagers(BenchInputs.webpLossy24MP, name: "lone loads, default helper-thread policy", threads: 1,
                            loads: 2, target: 0.8)
    }

    /// The 23.6 MP lossy WebP, two loads at once through the manager.
    func testManagerTwoLoadThroughput24MP() throws {
        try compareManagers(BenchInputs.webpLossy24MP, name: "2 loads at once, default helper-thread policy",
                            threads: 2, loads: 8, target: 1.0)
    }

    /// The 16.8 MP WebP (lossless with alpha), one load at a time through the manager.
    func testManagerLoneLoadLatency17MPLossless() throws {
        try compareManagers(BenchInputs.webpLossless17MP, name: "lone loads, default helper-thread policy",
                            threads: 1, loads: 2, target: 1.0)
    }

    /// The 16.8 MP WebP (lossless with alpha), two loads at once through the manager.
    func testManagerTwoLoadThroughput17MPLossless() throws {
        try compareManagers(BenchInputs.webpLossless17MP, name: "2 loads at once, default helper-thread policy",
                            threads: 2, loads: 8, target: 1.0)
    }

    /// A lone load: the helper thread should take a fifth off its latency.
    func testLoneLoadLatency() throws {
        try compare(name: "helper thread, lone load (ms per load)", threads: 1, loads: 2, target: 0.8)
    }

    /// Two loads at once on two cores, each forced to take a helper thread: what forcing it
    /// costs a busy service (no target: the manager offers the helper only to a lone decode, and
    /// its policy rows above carry the throughput target).
    func testTwoLoadThroughput() throws {
        try compare(name: "helper thread forced, 2 loads at once (ms per load)", threads: 2, loads: 4, target: nil)
    }
}
