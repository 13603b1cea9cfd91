import Foundation
@testable import ImageKit
import ImageKitTestSupport
import TestServers
import XCTest

/// Downloads decoded as they arrive (``ImageManagerConfiguration/streamsDecoding``): the same
/// image as a whole-body decode, the body kept only to store it, partial images, coalescing,
/// cancellation and failures mid-stream, and the paths that still take the whole body.
final class StreamingLoadTests: ManagerTestCase {
    /// A 1024x768 baseline JPEG, a 640x480 progressive one, a PNG, a GIF and a lossy WebP.
    static let files: [(name: String, bytes: [UInt8])] = [
        ("baseline.jpg", makeJPEG(SyntheticPhoto.rgba(width: 1024, height: 768), width: 1024, height: 768)),
        ("progressive.jpg", makeJPEG(SyntheticPhoto.rgba(width: 640, height: 480), width: 640, height: 480,
                                     progressive: true)),
        ("image.png", ManagerFixture.png(width: 300, height: 200, seed: 3)),
        ("anim.gif", ManagerFixture.animation),
        ("image.webp", makeWebP(SyntheticPhoto.rgba(width: 320, height: 240), width: 320, height: 240, quality: 80)),
    ]

    /// `bytes` under nginx's root, served by the Python server `piece` bytes at a time (`query`
    /// adds hold/cut/key items).
    private func trickle(_ bytes: [UInt8], named name: String, piece: Int = 8192, ms: Int = 2,
                         query: String = "") throws -> URL {
        let f = try fixture
        let (_, path) = try f.copy(bytes, named: name)
        let file = f.nginx.directory.appendingPathComponent("www").appendingPathComponent(path).path
        return f.script.url("/trickle?path=\(file)&piece=\(piece)&ms=\(ms)\(query)")
    }

    /// Waits until the body started arriving (progress is reported) and has had time to reach
    /// the server's hold (progress reports are throttled, so the last one may trail it).
    private static func waitUntilHeld(_ progress: Collector<DownloadProgress>) async throws {
        await DownloadTesting.waitUntil("the body started arriving") { !progress.all.isEmpty }
        try await Task.sleep(for: .milliseconds(300))
    }

    /// A context that keeps no original bytes (and so no body).
    private static let noOriginals = ImageContext(originalStoreCacheType: [])

    func testAStreamedLoadEqualsAWholeBodyLoadForEveryFormat() async throws {
        let streaming = try makeManager()
        let whole = try makeManager { $0.streamsDecoding = false }
        for (name, bytes) in Self.files {
            XCTAssertTrue(try Self.decoderStreams(bytes), "\(name): the C decoder consumes the body as it arrives")
            let url = try trickle(bytes, named: name)
            for context in [Self.noOriginals, ImageContext(thumbnailPixelSize: PixelSize(width: 96, height: 96))] {
                let streamed = try await ManagerTesting.image(streaming, url, options: .fromLoaderOnly, context: context)
                let reference = try await ManagerTesting.image(whole, url, options: .fromLoaderOnly, context: context)
                XCTAssertNotNil(streamed.metrics.streamQueuePeakBytes, "\(name) streamed")
                XCTAssertNil(reference.metrics.streamQueuePeakBytes, "\(name) decoded whole")
                XCTAssertEqual([streamed.image.width, streamed.image.height],
                               [reference.image.width, reference.image.height], name)
                XCTAssertEqual(streamed.image.packedPixels(), reference.image.packedPixels(), "\(name): same pixels")
                XCTAssertEqual(streamed.image.sourceFormat, reference.image.sourceFormat, name)
            }
        }
        await ManagerTesting.assertIdle(streaming)
        await ManagerTesting.assertIdle(whole)
    }

    func testOriginalsAreStoredWhenConfigured() async throws {
        let cache = try makeCache()
        let m = try makeManager(cache: cache)
        let bytes = Self.files[0].bytes
        let url = try trickle(bytes, named: "kept.jpg")
        let result = try await ManagerTesting.image(m, url, options: .waitStoreCache)
        XCTAssertNotNil(result.metrics.streamQueuePeakBytes)
        XCTAssertEqual(result.originalData.map(Array.init), bytes, "the kept body is the body")
        let stored = try await cache.originalData(forKey: url.absoluteString)
        XCTAssertEqual(stored.map(Array.init), bytes, "the stored original is the body")
        await ManagerTesting.assertIdle(m)
    }

    func testTheBodyIsNotKeptWithoutOriginals() async throws {
        let f = try fixture
        let bytes = Self.files[0].bytes
        // Held at half the body: what the downloader holds for it then.
        func bodyBytesWhileHeld(_ m: ImageManager, context: ImageContext) async throws -> (Int, ImageResult) {
            let key = unique("held")
            let url = try trickle(bytes, named: "held.jpg", query: "&hold=\(bytes.count / 2)&key=\(key)")
            let progress = Collector<DownloadProgress>()
            let (_, completions) = ManagerTesting.start(m, url, context: context) { progress.append($0) }
            try await Self.waitUntilHeld(progress)
            let held = m.builtInDownloader.statistics.bodyBytes
            try f.script.open(key)
            await DownloadTesting.waitUntil("the load completes") { completions.all.count == 1 }
            return (held, try completions.all[0].get())
        }
        let streaming = try makeManager()
        let (streamedHeld, streamed) = try await bodyBytesWhileHeld(streaming, context: Self.noOriginals)
        XCTAssertEqual(streamedHeld, 0, "no body buffer while a thumbnail load without originals streams")
        XCTAssertNil(streamed.originalData, "nothing kept the body")
        let whole = try makeManager { $0.streamsDecoding = false }
        let (wholeHeld, reference) = try await bodyBytesWhileHeld(whole, context: Self.noOriginals)
        XCTAssertGreaterThanOrEqual(wholeHeld, bytes.count, "the whole-body path holds a buffer for the body")
        XCTAssertEqual(streamed.image.packedPixels(), reference.image.packedPixels())
        await ManagerTesting.assertIdle(streaming)
        await ManagerTesting.assertIdle(whole)
    }

    /// Whether the C core's incremental decoder consumes `bytes` as they arrive once half of them
    /// are in (JPEG, PNG and WebP stills and a GIF's first frame; other formats are gathered and
    /// decoded at the end).
    private static func decoderStreams(_ bytes: [UInt8]) throws -> Bool {
        let decoder = try IncrementalImageDecoder(options: DecodeOptions())
        try decoder.feed(Data(bytes.prefix(bytes.count / 2)))
        return decoder.isStreaming
    }

    func testProgressiveLoadHandsPartialImagesBeforeTheFinalOneAndCachesOnlyTheFinal() async throws {
        let cache = try makeCache()
        let m = try makeManager(cache: cache)
        for (name, bytes) in [Self.files[0], Self.files[2]] {
            let url = try trickle(bytes, named: name, piece: 4096, ms: 10)
            let order = Collector<String>()
            let partials = Collector<Image>()
            var context = Self.noOriginals
            context.progressiveInterval = .milliseconds(20)
            context.partialImageHandler = { image in
                partials.append(image)
                order.append("partial")
            }
            let (_, completions) = ManagerTesting.start(m, url, options: .progressiveLoad, context: context)
            await DownloadTesting.waitUntil("the load completes") { completions.all.count == 1 }
            order.append("final")
            let final = try completions.all[0].get()
            XCTAssertEqual(order.all.last, "final", "\(name): no partial image after the final one")
            for partial in partials.all {
                XCTAssertEqual([partial.width, partial.height], [final.image.width, final.image.height],
                               "\(name): a partial image is at the output size")
                XCTAssertFalse(partial === final.image)
            }
            // The JPEG and the PNG both stream (their decoders give partial images).
            XCTAssertGreaterThanOrEqual(partials.all.count, 1, "\(name): a slowly served file shows partial images")
            let key = try XCTUnwrap(m.cacheKey(for: url, context: context))
            guard case .image(let cached)? = cache.memoryValue(forKey: key, kind: .image) else {
                return XCTFail("\(name): the final image is in the memory tier")
            }
            XCTAssertTrue(cached === final.image, "\(name): the memory tier holds the final image, no partial one")
        }
        await ManagerTesting.assertIdle(m)
    }

    func testTheEventSequenceEndsWithTheFinalImage() async throws {
        let m = try makeManager()
        let bytes = Self.files[2].bytes
        let url = try trickle(bytes, named: "events.png", piece: 2048, ms: 5)
        var context = Self.noOriginals
        context.progressiveInterval = .milliseconds(10)
        var progress = 0
        var partials = 0
        var final: ImageResult?
        for try await event in m.images(for: url, options: .progressiveLoad, context: context) {
            XCTAssertNil(final, "nothing follows the final image")
            switch event {
            case .progress: progress += 1
            case .partial: partials += 1
            case .cached: XCTFail("no cached image without refreshCached")
            case .final(let result): final = result
            }
        }
        let result = try XCTUnwrap(final)
        XCTAssertEqual([result.image.width, result.image.height], [300, 200])
        XCTAssertGreaterThanOrEqual(progress, 1)
        XCTAssertGreaterThanOrEqual(partials, 1, "a streamed PNG shows partial images")
        await ManagerTesting.assertIdle(m)
    }

    func testTheEventSequenceEndsWithTheError() async throws {
        let m = try makeManager()
        let bytes = Self.files[0].bytes
        let url = try trickle(bytes, named: "cut.jpg", query: "&cut=\(bytes.count / 2)")
        do {
            for try await _ in m.images(for: url, context: Self.noOriginals) {}
            XCTFail("a cut body fails the sequence")
        } catch let error as ImageKitError {
            XCTAssertEqual(error.code, .network)
        }
        await ManagerTesting.assertIdle(m)
    }

    func testALoadJoiningMidStreamGetsTheWholeImage() async throws {
        let f = try fixture
        let m = try makeManager()
        let bytes = Self.files[0].bytes
        let key = unique("join")
        let url = try trickle(bytes, named: "join.jpg", query: "&hold=\(bytes.count / 2)&key=\(key)")
        let progress = Collector<DownloadProgress>()
        let (_, first) = ManagerTesting.start(m, url, context: Self.noOriginals) { progress.append($0) }
        try await Self.waitUntilHeld(progress)
        let (_, second) = ManagerTesting.start(m, url, context: Self.noOriginals)
        try f.script.open(key)
        await DownloadTesting.waitUntil("both loads complete") { first.all.count == 1 && second.all.count == 1 }
        let a = try first.all[0].get(), b = try second.all[0].get()
        XCTAssertTrue(a.image === b.image, "the joiner gets the same final image")
        XCTAssertEqual(b.metrics.sharedBy, 2)
        XCTAssertEqual(try f.script.stats(key).count, 1, "one download")
        let whole = try makeManager { $0.streamsDecoding = false }
        let reference = try await ManagerTesting.image(whole, try trickle(bytes, named: "ref.jpg"),
                                                       context: Self.noOriginals)
        XCTAssertEqual(b.image.packedPixels(), reference.image.packedPixels())
        await ManagerTesting.assertIdle(m)
    }

    func testCancellingMidStreamStopsTheDownloadAndTheDecode() async throws {
        let f = try fixture
        let m = try makeManager()
        let bytes = Self.files[0].bytes
        let key = unique("cancel")
        let url = try trickle(bytes, named: "cancel.jpg", query: "&hold=\(bytes.count / 2)&key=\(key)")
        let progress = Collector<DownloadProgress>()
        let (task, completions) = ManagerTesting.start(m, url, context: Self.noOriginals) { progress.append($0) }
        try await Self.waitUntilHeld(progress)
        task.cancel()
        await ManagerTesting.assertIdle(m)
        try f.script.open(key)
        try await DownloadTesting.waitUntil("the server sees the client go") { try f.script.stats(key).aborted }
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertTrue(completions.all.isEmpty, "a cancelled load never completes")
        XCTAssertTrue(task.isCancelled)
    }

    func testAFailureMidStreamFailsTheLoadAndCachesNothing() async throws {
        let cache = try makeCache()
        let m = try makeManager(cache: cache)
        let bytes = Self.files[0].bytes
        let url = try trickle(bytes, named: "cut.jpg", query: "&cut=\(bytes.count / 2)")
        let error = await ManagerTesting.error(m, url, context: Self.noOriginals)
        XCTAssertEqual(error?.code, .network, "a body cut short fails as the download fails")
        let key = try XCTUnwrap(m.cacheKey(for: url, context: Self.noOriginals))
        XCTAssertNil(cache.memoryValue(forKey: key, kind: .image))
        await ManagerTesting.assertIdle(m)
    }

    func testAResponseModifierOrDecryptorTakesTheWholeBodyPath() async throws {
        let bytes = Self.files[2].bytes
        let url = try trickle(bytes, named: "hooked.png")
        let modified = try makeManager(downloader: { $0.responseModifier = { $0 } })
        let decrypted = try makeManager(downloader: { $0.decryptor = { data, _ in data } })
        let plain = try makeManager()
        let reference = try await ManagerTesting.image(plain, url, context: Self.noOriginals)
        for m in [modified, decrypted] {
            XCTAssertFalse(m.builtInDownloader.streamsBodies)
            let result = try await ManagerTesting.image(m, url, context: Self.noOriginals)
            XCTAssertNil(result.metrics.streamQueuePeakBytes, "the hooks need the whole body: decoded whole")
            XCTAssertEqual(result.image.packedPixels(), reference.image.packedPixels())
            await ManagerTesting.assertIdle(m)
        }
    }

    /// A JPEG over the pixel limit fails on its header while the server still holds the rest
    /// of the body: the decode's failure stops the download (a whole-body decode would wait for
    /// the last byte), and the load reports the limit, not a cancellation.
    func testADecodeFailureStopsTheDownload() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager {
            $0.decodeLimits = DecodeLimits(maxPixels: 1000)
            $0.observers = [recorder]
        }
        let bytes = Self.files[0].bytes
        let key = unique("refused")
        let url = try trickle(bytes, named: "refused.jpg", query: "&hold=\(bytes.count / 2)&key=\(key)")
        let error = await ManagerTesting.error(m, url, context: Self.noOriginals)
        XCTAssertEqual(error?.code, .limitExceeded, "\(String(describing: error))")
        try await DownloadTesting.waitUntil("the server sees the client go") { try f.script.stats(key).aborted }
        try f.script.open(key)
        await ManagerTesting.assertIdle(m)
        XCTAssertTrue(recorder.names.contains("decode failed \(ImageKitError.Code.limitExceeded.rawValue)"),
                      "the failure is reported as the decode's: \(recorder.names)")
    }

    func testFileURLsAreDecodedWhole() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("local.png")
        try Data(Self.files[2].bytes).write(to: file)
        let m = try makeManager { $0.allowsLocalFiles = true }
        let result = try await ManagerTesting.image(m, file)
        XCTAssertNil(result.metrics.streamQueuePeakBytes, "the file loader does not stream")
        XCTAssertEqual([result.image.width, result.image.height], [300, 200])
    }

    func testStreamingDownloadsShareATransferOnlyBeforeItsBodyStarts() async throws {
        let f = try fixture
        var configuration = DownloaderConfiguration()
        configuration.destinationPolicy = DownloadTesting.loopback
        let downloader = try Downloader(configuration: configuration)
        let bytes = Self.files[0].bytes
        let key = unique("share")
        // The answer waits before its headers until both early downloads wait on one transfer,
        // then stops at half the body until the late download has a transfer of its own.
        let url = try trickle(bytes, named: "share.jpg", query: "&start=1&hold=\(bytes.count / 2)&key=\(key)")
        let early = (0..<2).map { _ in Collector<[UInt8]>() }
        let loads = early.map { pieces in
            Task { try await downloader.download(DownloadRequest(url: url), keepingBody: false) { pieces.append(Array($0)) } }
        }
        await DownloadTesting.waitUntil("both early downloads wait on one transfer") {
            let s = downloader.statistics
            return s.waiters == 2 && s.transfers == 1
        }
        try f.script.open(key + "-start")
        await DownloadTesting.waitUntil("the body started") { early.allSatisfy { !$0.all.isEmpty } }
        let late = Collector<[UInt8]>()
        let lateLoad = Task {
            try await downloader.download(DownloadRequest(url: url), keepingBody: true) { late.append(Array($0)) }
        }
        try await DownloadTesting.waitUntil("the late download has a transfer of its own") { try f.script.stats(key).count == 2 }
        try f.script.open(key)
        for load in loads { _ = try await load.value }
        let lateResult = try await lateLoad.value
        for pieces in early { XCTAssertEqual(pieces.all.flatMap { $0 }, bytes, "both early downloads got every byte") }
        XCTAssertEqual(late.all.flatMap { $0 }, bytes)
        XCTAssertEqual(Array(lateResult.data), bytes)
        XCTAssertEqual(try f.script.stats(key).count, 2, "the two early downloads shared one transfer")
    }

    func testTheDownloaderStreamsTheBodyAndKeepsItOnlyWhenAsked() async throws {
        var configuration = DownloaderConfiguration()
        configuration.destinationPolicy = DownloadTesting.loopback
        let downloader = try Downloader(configuration: configuration)
        let bytes = Self.files[0].bytes
        let url = try trickle(bytes, named: "pieces.jpg", piece: 3000)
        for keep in [false, true] {
            let pieces = Collector<[UInt8]>()
            let result = try await downloader.download(DownloadRequest(url: url), keepingBody: keep) { piece in
                pieces.append(Array(piece))
            }
            XCTAssertEqual(pieces.all.flatMap { $0 }, bytes, "every byte, in order")
            XCTAssertGreaterThan(pieces.all.count, 1, "the body came in pieces")
            XCTAssertEqual(Array(result.data), keep ? bytes : [], "the body kept only when asked")
        }
        await DownloadTesting.waitUntil("the kept body is released") { downloader.statistics.bodies == 0 }
    }
}
