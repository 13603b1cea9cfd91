import Foundation
import ImageKit
import XCTest

/// One load on two cores: what a second thread buys a lone large job (latency) and what it
/// costs two jobs at once (throughput), with the process CPU time per job beside the wall time
/// (see WallAndCPU), samples interleaved, anchor in the same process. The jobs: a 24 MP JPEG
/// full decode and its 256 px thumbnail (``DecodeOptions/usesHelperThread``), a resize of the
/// decoded 24 MP image to 1600 px (``ImageResizer/usesHelperThread``) and a disk-tier read of
/// that image (``DiskCacheConfiguration/decodeThreads`` 2 against 1).
final class TwoCoreBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private static let samples = 11
    /// For the manager's 2-load throughput row, whose target is a difference of a percent: at 11
    /// samples its median moved by ±2 % from run to run with the policy off on both sides; the A/A
    /// row beside it shows the noise of each run at this count.
    private static let throughputSamples = 21

    /// Wall and process CPU milliseconds per job of `loads` calls of `job`, spread over
    /// `threads` threads started together.
    private static func sample(threads: Int, loads: Int, _ job: @escaping @Sendable () throws -> Void) -> (wall: Double, cpu: Double) {
        let cpu0 = BenchRecorder.processCPUMilliseconds()
        let wall = BenchRecorder.clock(1) {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                for _ in 0..<loads / threads { try? job() }
            }
        }
        let n = Double(loads / threads * threads)
        return (wall / n, (BenchRecorder.processCPUMilliseconds() - cpu0) / n)
    }

    /// Records `with` (the helper, or a second thread) against `without` (the anchor), lone
    /// (one job at a time; target, where the job has a two-core path: a fifth off the latency)
    /// or two at once with the helper forced on both (no target: what forcing it costs a busy
    /// service; ImageManager offers it only to a lone decode, see the policy rows).
    private func compare(section: String, name: String, megapixels: Double, twoAtOnce: Bool, loneTarget: Double? = 0.8,
                         with: @escaping @Sendable () throws -> Void, without: @escaping @Sendable () throws -> Void) throws {
        let threads = twoAtOnce ? 2 : 1, loads = twoAtOnce ? 4 : 2
        _ = Self.sample(threads: threads, loads: loads, with)
        _ = Self.sample(threads: threads, loads: loads, without)
        try WallAndCPU.record(section: section,
                              name: "\(name), \(twoAtOnce ? "2 at once" : "lone") (ms per job)", megapixels: megapixels,
                              samples: Self.samples, anchor: ("one thread per job", "one thread"),
                              ours: ("helper", { Self.sample(threads: threads, loads: loads, with) }),
                              theirs: { Self.sample(threads: threads, loads: loads, without) },
                              target: twoAtOnce ? nil : loneTarget)
    }

    private func decodes(thumbnail: PixelSize?, twoAtOnce: Bool) throws {
        let input = BenchInputs.jpeg24MP
        let bytes = input.bytes
        let with = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: thumbnail, usesHelperThread: true))
        let without = ImageDecoder(options: DecodeOptions(thumbnailPixelSize: thumbnail))
        let one = try without.decode(bytes), two = try with.decode(bytes)
        XCTAssertTrue(one.packedPixels() == two.packedPixels())
        // A 1/8-scale decode has no two-core path: without restart markers the part below a
        // split must still be entropy-decoded to be skipped, and entropy decoding is most of it.
        try compare(section: thumbnail == nil ? "decode" : "thumbnail 256 px",
                    name: "\(input.name) \(thumbnail == nil ? "full decode" : "256 px thumbnail"), helper thread",
                    megapixels: input.megapixels, twoAtOnce: twoAtOnce, loneTarget: thumbnail == nil ? 0.8 : nil,
                    with: { _ = try with.decode(bytes) }, without: { _ = try without.decode(bytes) })
    }

    /// Full decodes of the 24 MP JPEG through ImageManager, default helper-thread policy against
    /// the policy off: lone loads get the JPEG split, two at once must lose no throughput.
    /// `noiseOnly`: the same loads with the policy off on both sides (A/A), printed beside the
    /// throughput row so its ratio can be read against the noise of the same run.
    private func managerDecodes(twoAtOnce: Bool, noiseOnly: Bool = false) throws {
        let input = BenchInputs.jpeg24MP
        let policy = noiseOnly ? "policy off on both sides (A/A: the row's noise)" : "default helper-thread policy"
        try HelperThreadPolicy.compare(self, input, context: ImageContext(queryCacheType: [], storeCacheType: [], originalStoreCacheType: []),
                                       name: "\(input.name) full decode, \(twoAtOnce ? "2 loads at once" : "lone loads"), \(policy) (ms per load)",
                                       threads: twoAtOnce ? 2 : 1, loads: twoAtOnce ? 8 : 2,
                                       samples: twoAtOnce ? Self.throughputSamples : Self.samples,
                                       target: noiseOnly ? nil : twoAtOnce ? 1.0 : 0.8, noiseOnly: noiseOnly)
    }

    func testManagerJPEG24MPFullDecodeLone() throws { try managerDecodes(twoAtOnce: false) }
    func testManagerJPEG24MPFullDecodeTwoAtOnce() throws { try managerDecodes(twoAtOnce: true) }
    func testManagerJPEG24MPFullDecodeTwoAtOnceNoise() throws { try managerDecodes(twoAtOnce: true, noiseOnly: true) }

    func testJPEG24MPFullDecodeLone() throws { try decodes(thumbnail: nil, twoAtOnce: false) }
    func testJPEG24MPFullDecodeTwoAtOnce() throws { try decodes(thumbnail: nil, twoAtOnce: true) }
    func testJPEG24MPThumbnailLone() throws { try decodes(thumbnail: PixelSize(square: 256), twoAtOnce: false) }
    func testJPEG24MPThumbnailTwoAtOnce() throws { try decodes(thumbnail: PixelSize(square: 256), twoAtOnce: true) }

    /// The decoded 24 MP JPEG, once per process.
    private static let photo24MP: Image = {
        try! ImageDecoder().decode(BenchInputs.jpeg24MP.bytes)
    }()

    private func resizes(to box: PixelSize, twoAtOnce: Bool) throws {
        let src = Self.photo24MP
        let with = ImageResizer(size: box, usesHelperThread: true), without = ImageResizer(size: box)
        XCTAssertTrue(try with.resize(src).packedPixels() == without.resize(src).packedPixels())
        try compare(section: "resize", name: "decoded 24 MP JPEG to \(box.width) px (ic_resize), helper thread",
                    megapixels: 24, twoAtOnce: twoAtOnce,
                    with: { _ = try with.resize(src) }, without: { _ = try without.resize(src) })
    }

    func testResize24MPTo1600Lone() throws { try resizes(to: PixelSize(square: 1600), twoAtOnce: false) }
    func testResize24MPTo1600TwoAtOnce() throws { try resizes(to: PixelSize(square: 1600), twoAtOnce: true) }
    func testResize24MPTo256Lone() throws { try resizes(to: PixelSize(square: 256), twoAtOnce: false) }

    /// A disk cache holding the decoded 24 MP image under "photo", page cache warm.
    private func cache(decodeThreads: Int) throws -> DiskCache {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-bench-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        let cache = try DiskCache(directory: url, configuration: DiskCacheConfiguration(sweepInterval: nil,
                                                                                         decodeThreads: decodeThreads))
        let image = Self.photo24MP
        try ManagerBenchmarks.blocking { try await cache.store(image, forKey: "photo") }
        try Self.read(cache)
        return cache
    }

    private static func read(_ cache: DiskCache) throws {
        try ManagerBenchmarks.blocking {
            let image = try await cache.image(forKey: "photo")
            precondition(image?.width == 6000)
        }
    }

    private func diskReads(twoAtOnce: Bool) throws {
        let with = try cache(decodeThreads: 2), without = try cache(decodeThreads: 1)
        try compare(section: "disk cache", name: "disk-tier read of the decoded 24 MP JPEG, decodeThreads 2 against 1",
                    megapixels: 24, twoAtOnce: twoAtOnce,
                    with: { try Self.read(with) }, without: { try Self.read(without) })
    }

    func testDiskRead24MPLone() throws { try diskReads(twoAtOnce: false) }
    func testDiskRead24MPTwoAtOnce() throws { try diskReads(twoAtOnce: true) }
}
