import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// Many loads through one manager: random images, sizes, options and cancellations, with
/// corrupt bodies, bombs, resets and missing files among them. Every load completes exactly
/// once (or not at all once cancelled), every image a URL yields is the same whichever tier
/// it came from, corrupt input never yields an image it should not, and memory stays flat.
///
/// `make test` runs 2,000 loads; `make soak` runs `IMAGEKIT_SOAK_LOADS` (20,000) in a release
/// build, where RSS must stay flat, then again under ASan, whose LeakSanitizer checks for
/// leaks when the process exits.
final class ManagerSoakTests: ManagerTestCase {
    /// What a URL must give.
    private enum Expect {
        /// An image of this size (before thumbnailing).
        case image(width: Int, height: Int)
        /// An error, never an image (a bomb, garbage, an empty body, a missing file, a reset).
        case failure
        /// Damaged but maybe decodable (a truncated or bit-flipped file): either outcome.
        case either
    }

    private struct Source {
        var url: URL
        var expect: Expect
    }

    /// One load of the soak and what it saw.
    private struct Load {
        var source: Int
        var size: Int?
        var options: ImageOptions
        var task: ImageTask?
        var awaited: Task<ImageResult, any Error>?
        var completions = Collector<Result<ImageResult, ImageKitError>>()
    }

    func testSoak() async throws {
        let total = Int(ProcessInfo.processInfo.environment["IMAGEKIT_SOAK_LOADS"] ?? "") ?? 2_000
        let sources = try makeSources()
        // Small tiers, so both evict all along.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-soak-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        let cache = try ImageCache(namespace: "soak", directory: folder,
                                   memory: MemoryCacheConfiguration(costLimit: 12 << 20),
                                   disk: DiskCacheConfiguration(maxSize: 6 << 20))
        let m = try makeManager(cache: cache, downloader: { $0.maxConcurrentDownloads = 6 })
        let choices: [ImageOptions] = [[], [], [], .refreshCached, .fromCacheOnly, .fromLoaderOnly, .waitStoreCache,
                                       .cacheMemoryOnly, .retryFailed,
                                       .decodeFirstFrameOnly, [.retryFailed, .scaleDownLargeImages]]
        let sizes: [Int?] = [nil, nil, 32, 64, 100, 256]
        var rng = Scrambler(seed: 0x50AC)
        var hashes: [String: Int] = [:]
        var outcome = (images: 0, failures: 0, cancelled: 0)
        var rss: [Int] = []   // at each tenth of the loads

        let batch = max(1, min(250, total / 10))
        for first in stride(from: 0, to: total, by: batch) {
            if first >= (rss.count + 1) * total / 10 { rss.append(Self.residentBytes()) }
            var loads: [Load] = []
            for i in first..<min(first + batch, total) {
                let s = Int(rng.next() % UInt64(sources.count))
                var load = Load(source: s, size: sizes[Int(rng.next() % UInt64(sizes.count))],
                                options: choices[Int(rng.next() % UInt64(choices.count))])
                let context = ImageContext(thumbnailPixelSize: load.size.map { PixelSize(square: $0) },
                                           priority: ImagePriority.allCases[Int(rng.next() % 3)])
                let url = sources[s].url, options = load.options
                if i % 3 == 2 {
                    load.awaited = Task { try await m.image(for: url, options: options, context: context) }
                } else {
                    let completions = load.completions
                    let ignore: @Sendable (DownloadProgress) -> Void = { _ in }
                    let progress = i % 7 == 0 ? ignore : nil
                    load.task = m.loadImage(with: url, options: options, context: context, progress: progress) {
                        completions.append($0)
                    }
                }
                if rng.next() % 10 == 0 { Self.cancel(load) }
                loads.append(load)
            }
            // Cancel some more once they are under way: in the cache query, download or decode.
            try await Task.sleep(for: .milliseconds(Int(rng.next() % 3)))
            for _ in 0..<(batch / 10) { Self.cancel(loads[Int(rng.next() % UInt64(loads.count))]) }

            for (n, load) in loads.enumerated() {
                guard let awaited = load.awaited else { continue }
                switch await awaited.result {
                case .success(let r):
                    outcome.images += 1
                    check(r, load, sources, &hashes, "load \(first + n)")
                case .failure(let e as ImageKitError):
                    if e == .cancelled { outcome.cancelled += 1 } else { outcome.failures += 1 }
                    check(e, load, sources, "load \(first + n)")
                case .failure(let e):
                    XCTFail("load \(first + n): \(e)")
                }
            }
            await ManagerTesting.assertIdle(m)
            await ManagerTesting.drain(m.configuration.callbackQueue)
            for (n, load) in loads.enumerated() {
                guard let task = load.task else { continue }
                let all = load.completions.all
                if task.isCancelled {
                    outcome.cancelled += 1
                    // Cancelled first: no completion, except a refreshed load's first one if it came before.
                    XCTAssertTrue(all.isEmpty || (all.count == 1 && load.options.contains(.refreshCached)),
                                  "load \(first + n): \(all.count) completions after cancel")
                    continue
                }
                XCTAssertTrue(task.isFinished, "load \(first + n)")
                XCTAssertTrue(all.count == 1 || (all.count == 2 && load.options.contains(.refreshCached)),
                              "load \(first + n): \(all.count) completions")
                for result in all {
                    switch result {
                    case .success(let r):
                        outcome.images += 1
                        check(r, load, sources, &hashes, "load \(first + n)")
                    case .failure(let e):
                        outcome.failures += 1
                        check(e, load, sources, "load \(first + n)")
                    }
                }
            }
        }
        rss.append(Self.residentBytes())
        print(String(format: "[soak] %d loads: %d images, %d failures, %d cancelled", total, outcome.images,
                     outcome.failures, outcome.cancelled))
        print("[soak] RSS (MB) after each tenth: " + rss.map { String(format: "%.1f", Double($0) / 1e6) }.joined(separator: " "))
        XCTAssertGreaterThan(outcome.images, total / 4, "most loads of good images succeed")
        XCTAssertGreaterThan(outcome.failures, total / 20, "the bad sources were loaded and failed")
        XCTAssertGreaterThan(outcome.cancelled, total / 20)
        // The caches are full after the first tenth; what grows after that is a leak or a hoard.
        // Release builds only: the sanitizer builds (debug) keep freed memory in quarantine and
        // every allocation's stack; there LeakSanitizer is the check.
        #if !DEBUG
        if let start = rss.first, let end = rss.last {
            XCTAssertLessThan(end - start, 48 << 20, "RSS grew from \(start) to \(end) bytes")
        }
        #endif
    }

    private static func cancel(_ load: Load) {
        load.task?.cancel()
        load.awaited?.cancel()
    }

    /// An image must come from a good (or maybe-decodable) source, within its size, with the
    /// same pixels as every other image of the same URL and size, whichever tier served it.
    private func check(_ r: ImageResult, _ load: Load, _ sources: [Source], _ hashes: inout [String: Int],
                       _ what: String) {
        let image = r.image
        switch sources[load.source].expect {
        case .failure:
            XCTFail("\(what): \(sources[load.source].url.path) gave a \(image.width)x\(image.height) image")
            return
        case .image(let width, let height):
            if let size = load.size {
                XCTAssertLessThanOrEqual(max(image.width, image.height), size, what)
            } else {
                XCTAssertEqual([image.width, image.height], [width, height], what)
            }
        case .either:
            break
        }
        let key = "\(load.source)/\(load.size ?? 0)"
        var hasher = Hasher()
        image.packedPixels().withUnsafeBytes { hasher.combine(bytes: $0) }
        let hash = hasher.finalize()
        if let known = hashes[key] {
            XCTAssertEqual(hash, known, "\(what): \(sources[load.source].url.path) at \(load.size ?? 0) px from \(r.source) differs")
        } else {
            hashes[key] = hash
        }
    }

    /// A good source fails only for a reason of its own: cancelled, or not in the cache when
    /// the load asked for the cache only.
    private func check(_ e: ImageKitError, _ load: Load, _ sources: [Source], _ what: String) {
        guard case .image = sources[load.source].expect else { return }
        switch e.code {
        case .cancelled: break
        case .notInCache: XCTAssertTrue(load.options.contains(.fromCacheOnly), "\(what): \(e)")
        default: XCTFail("\(what): \(sources[load.source].url.path): \(e)")
        }
    }

    /// The soak's URLs: good images of each format and several sizes, damaged copies, bombs,
    /// garbage, an empty body, a missing file and a connection reset mid-body.
    private func makeSources() throws -> [Source] {
        let f = try fixture
        let folder = "/soak-\(UUID().uuidString.prefix(8))"
        var sources: [Source] = []
        func add(_ name: String, _ bytes: [UInt8], _ expect: Expect) throws {
            try f.write("\(folder)/\(name)", bytes)
            sources.append(Source(url: f.nginx.url("\(folder)/\(name)"), expect: expect))
        }
        var rng = Scrambler(seed: 0xBAD)
        for (i, (w, h)) in [(64, 48), (320, 240), (97, 301), (800, 600), (1500, 1000)].enumerated() {
            let rgba = SyntheticPhoto.rgba(width: w, height: h, seed: UInt64(i + 1))
            let jpeg = makeJPEG(rgba, width: w, height: h, progressive: i % 2 == 1)
            try add("\(i).jpg", jpeg, .image(width: w, height: h))
            try add("\(i)-truncated.jpg", Array(jpeg.prefix(jpeg.count / 2)), .either)
            var flipped = jpeg
            for _ in 0..<12 { flipped[600 + Int(rng.next() % UInt64(jpeg.count - 600))] ^= UInt8(1 + rng.next() % 255) }
            try add("\(i)-flipped.jpg", flipped, .either)
            let alpha = SyntheticPhoto.rgba(width: w / 2 + 1, height: h / 2 + 1, seed: UInt64(i + 7), alpha: true)
            try add("\(i).webp", makeWebP(alpha, width: w / 2 + 1, height: h / 2 + 1, quality: i % 2 == 0 ? 80 : -1),
                    .image(width: w / 2 + 1, height: h / 2 + 1))
        }
        for i in 0..<4 {
            let (w, h) = (40 + i * 70, 30 + i * 50)
            let png = ManagerFixture.png(width: w, height: h, seed: i)
            try add("\(i).png", png, .image(width: w, height: h))
            var broken = png
            broken[broken.count / 2] ^= 0x40   // inside IDAT: a CRC error
            try add("\(i)-crc.png", broken, .failure)
        }
        try add("anim.gif", ManagerFixture.animation, .image(width: 8, height: 4))
        // A 65535 x 65535 canvas for an 8 x 4 frame: over every default pixel limit.
        let palette: [UInt8] = [0, 0, 0, 255, 255, 255]
        let frame = GIFWriter.Frame(width: 8, height: 4, indices: [UInt8](repeating: 1, count: 32), delayCentiseconds: 0)
        try add("bomb.gif", GIFWriter(width: 65535, height: 65535, globalPalette: palette, frames: [frame]).encode(), .failure)
        try add("bomb.jpg", Self.claimingSize(65000, 65000, ManagerFixture.photo), .failure)
        try add("garbage.jpg", (0..<5_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, .failure)
        try add("empty.png", [], .failure)
        sources.append(Source(url: f.nginx.url("\(folder)/missing.png"), expect: .failure))
        sources.append(Source(url: f.script.url("/reset?n=200000&sent=5000"), expect: .failure))
        return sources
    }

    /// `jpeg` with the frame header's height and width replaced.
    private static func claimingSize(_ width: Int, _ height: Int, _ jpeg: [UInt8]) -> [UInt8] {
        var bytes = jpeg
        guard let sof = (2..<bytes.count - 9).first(where: { bytes[$0] == 0xFF && (0xC0...0xC2).contains(bytes[$0 + 1]) })
        else { preconditionFailure("no frame header") }
        bytes[sof + 5] = UInt8(height >> 8); bytes[sof + 6] = UInt8(height & 0xFF)
        bytes[sof + 7] = UInt8(width >> 8); bytes[sof + 8] = UInt8(width & 0xFF)
        return bytes
    }

    /// This process's resident set size, from /proc/self/statm.
    private static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
