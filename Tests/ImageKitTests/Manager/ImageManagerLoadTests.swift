import Foundation
import ImageKit
import TestServers
import XCTest

/// The load's flow: URL checks, the tiers in order, coalescing, the two call styles,
/// refresh, the blocklist, the delegate, the options processor and the events.
final class ImageManagerLoadTests: ManagerTestCase {
    func testNetworkThenMemoryThenDisk() async throws {
        let f = try fixture
        let cache = try makeCache()
        let m = try makeManager(cache: cache)
        let (url, path) = try f.copy(ManagerFixture.photo, named: "photo.jpg")
        let first = try await ManagerTesting.image(m, url)
        XCTAssertEqual(first.source, .loader)
        XCTAssertEqual([first.image.width, first.image.height], [640, 480])
        XCTAssertEqual(first.originalData.map(Array.init), ManagerFixture.photo)
        XCTAssertNotNil(first.metrics.download)
        XCTAssertNotNil(first.metrics.decode)
        let second = try await ManagerTesting.image(m, url)
        XCTAssertEqual(second.source, .memory)
        XCTAssertTrue(second.image === first.image, "a memory hit hands back the same image")
        await ManagerTesting.assertIdle(m)  // the disk write is done
        cache.memoryCache.removeAll()
        let third = try await ManagerTesting.image(m, url)
        XCTAssertEqual(third.source, .disk)
        XCTAssertEqual(third.image.packedPixels(), first.image.packedPixels())
        let logged = await f.requests(path, atLeast: 1).count
        XCTAssertEqual(logged, 1)
        await ManagerTesting.assertIdle(m)
    }

    func testInvalidURLs() async throws {
        let m = try makeManager()
        for url in [nil, URL(string: "ftp://127.0.0.1/a.png"), URL(string: "http://"), URL(string: "/relative/a.png"),
                    URL(fileURLWithPath: "/etc/hostname"), URL(string: "http://user@/a.png"), URL(string: "https:///a.png"),
                    URL(string: "http:a.png"), URL(string: "mailto:someone@127.0.0.1")] {
            let e = await ManagerTesting.error(m, url)
            guard e?.code == .invalidURL else { return XCTFail("\(String(describing: url)): \(String(describing: e))") }
            XCTAssertEqual(e?.code, .invalidURL)
            let (_, completions) = ManagerTesting.start(m, url)
            await DownloadTesting.waitUntil("the completion") { completions.all.count == 1 }
            guard case .failure(let e)? = completions.all.first, e.code == .invalidURL else { return XCTFail("\(completions.all)") }
        }
        XCTAssertNil(m.cacheKey(for: nil))
        await ManagerTesting.assertIdle(m)
    }

    func testFileURLsLoadOnlyWhenAllowed() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("tile.png")
        try Data(ManagerFixture.tile(3)).write(to: file)
        let refused = try makeManager()
        guard await ManagerTesting.error(refused, file)?.code == .invalidURL else { return XCTFail() }
        let m = try makeManager { $0.allowsLocalFiles = true }
        let r = try await ManagerTesting.image(m, file)
        XCTAssertEqual([r.image.width, r.image.height], [27, 16])
        guard await ManagerTesting.error(m, dir.appendingPathComponent("missing.png"))?.code == .io else {
            return XCTFail()
        }
        await ManagerTesting.assertIdle(refused)
        await ManagerTesting.assertIdle(m)
    }

    func testCompletionHandlerStyleCompletesOnceOnTheCallbackQueue() async throws {
        let f = try fixture
        let queue = DispatchQueue(label: "test.callbacks")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "mine")
        let m = try makeManager { $0.callbackQueue = queue }
        let onQueue = Collector<Bool>()
        let progress = Collector<Int64>()
        let completions = Collector<Result<ImageResult, ImageKitError>>()
        let task = m.loadImage(with: f.nginx.url("/large.jpg"), progress: { p in
            onQueue.append(DispatchQueue.getSpecific(key: key) == "mine")
            progress.append(p.receivedBytes)
        }) { result in
            onQueue.append(DispatchQueue.getSpecific(key: key) == "mine")
            completions.append(result)
        }
        await DownloadTesting.waitUntil("the completion") { completions.all.count == 1 }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(queue)
        XCTAssertEqual(completions.all.count, 1)
        XCTAssertNotNil(try completions.all[0].get())
        XCTAssertTrue(task.isFinished)
        XCTAssertFalse(task.isCancelled)
        XCTAssertFalse(progress.all.isEmpty)
        XCTAssertEqual(progress.all, progress.all.sorted())
        XCTAssertTrue(onQueue.all.allSatisfy { $0 })
        // A memory hit also completes on the queue, once.
        let (_, again) = ManagerTesting.start(m, f.nginx.url("/large.jpg"))
        await DownloadTesting.waitUntil("the completion") { again.all.count == 1 }
        XCTAssertEqual(try again.all[0].get().source, .memory)
    }

    func testAsyncLoadsReportProgressOnTheCallbackQueue() async throws {
        let f = try fixture
        let queue = DispatchQueue(label: "async-progress")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "mine")
        let m = try makeManager { $0.callbackQueue = queue }
        let onQueue = Collector<Bool>()
        let progress = Collector<DownloadProgress>()
        let result = try await m.image(for: f.nginx.url("/large.jpg")) { p in
            onQueue.append(DispatchQueue.getSpecific(key: key) == "mine")
            progress.append(p)
        }
        await ManagerTesting.drain(queue)
        XCTAssertEqual(result.source, .loader)
        let received = progress.all.map(\.receivedBytes)
        XCTAssertFalse(received.isEmpty)
        XCTAssertEqual(received, received.sorted())
        XCTAssertLessThanOrEqual(received.last ?? 0, Int64(ManagerFixture.large.count))
        XCTAssertTrue(onQueue.all.allSatisfy { $0 })
        let bytes = Collector<Int64>()
        let encoded = try await m.encodedImage(for: f.nginx.url("/large.jpg"), as: .fixed(.png()),
                                               options: .fromLoaderOnly) { bytes.append($0.receivedBytes) }
        await ManagerTesting.drain(queue)
        XCTAssertEqual(encoded.source, .loader)
        XCTAssertFalse(bytes.all.isEmpty, "the encoded call reports progress too")
        await ManagerTesting.assertIdle(m)
    }

    // MARK: - Coalescing

    func testCoalescedLoadsShareOneDownloadAndOneDecode() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager { $0.observers = [recorder] }
        let k = unique("coalesce")
        let url = f.script.url("/gate_png?key=\(k)&w=40&h=30")
        let async = (0..<3).map { _ in Task { try await m.image(for: url) } }
        let handlers = (0..<3).map { _ in ManagerTesting.start(m, url) }
        // A different size shares the download (the downloader coalesces) but decodes on its own.
        let thumb = Task { try await m.image(for: url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 20))) }
        try await DownloadTesting.waitUntil("the request reaches the server") { try f.script.stats(k).count == 1 }
        await DownloadTesting.waitUntil("every load waits") { m.statistics.runningTasks == 7 }
        XCTAssertEqual(m.statistics.jobs, 2)
        try f.script.open(k)
        var images: [Image] = []
        for t in async { images.append(try await t.value.image) }
        await DownloadTesting.waitUntil("the handlers complete") { handlers.allSatisfy { $0.completions.all.count == 1 } }
        for h in handlers { images.append(try h.completions.all[0].get().image) }
        let small = try await thumb.value
        XCTAssertEqual([small.image.width, small.image.height], [20, 15])
        XCTAssertTrue(images.allSatisfy { $0 === images[0] }, "one decode, one image")
        XCTAssertEqual(try f.script.stats(k).count, 1, "one download")
        XCTAssertEqual(recorder.names.filter { $0.hasPrefix("decoded") }.sorted(), ["decoded 20x15", "decoded 40x30"])
        XCTAssertEqual(recorder.names.filter { $0 == "download" }.count, 2, "two pipelines asked the downloader")
        await ManagerTesting.assertIdle(m)
    }

    func testSizesAreCachedApartAndShareTheOriginalBytes() async throws {
        let f = try fixture
        let m = try makeManager()
        let (url, path) = try f.copy(ManagerFixture.photo, named: "photo.jpg")
        let big = try await ManagerTesting.image(m, url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 200)))
        XCTAssertEqual([big.image.width, big.image.height], [200, 150])
        await ManagerTesting.assertIdle(m)
        let small = try await ManagerTesting.image(m, url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 64)))
        XCTAssertEqual([small.image.width, small.image.height], [64, 48])
        XCTAssertEqual(small.source, .disk, "decoded from the stored original bytes")
        XCTAssertEqual(small.originalData.map(Array.init), ManagerFixture.photo)
        let logged = await f.requests(path, atLeast: 1).count
        XCTAssertEqual(logged, 1)
        let k200 = m.cacheKey(for: url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 200)))
        let k64 = m.cacheKey(for: url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 64)))
        XCTAssertNotEqual(k200, k64)
        XCTAssertEqual(m.cacheKey(for: url), url.absoluteString)
        XCTAssertEqual(m.builtInCache.memoryCache.image(forKey: k64!)?.width, 64)
        await ManagerTesting.assertIdle(m)
    }

    // MARK: - Refresh

    func testRefreshWith304CompletesOnceWithTheCachedImage() async throws {
        let f = try fixture
        let path = "/\(unique("refresh304")).png"
        try f.write(path, ManagerFixture.tile(1))
        let m = try makeManager()
        let url = f.nginx.url(path)
        _ = try await ManagerTesting.image(m, url)
        await ManagerTesting.assertIdle(m)
        let (task, completions) = ManagerTesting.start(m, url, options: .refreshCached)
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertEqual(completions.all.count, 1)
        XCTAssertEqual(try completions.all[0].get().source, .memory)
        XCTAssertTrue(task.isFinished)
        let log = await f.requests(path, atLeast: 2)
        XCTAssertEqual(log.count, 2)
        XCTAssertTrue(log[1].contains("\" 304 "), log[1])
        // The async call returns the revalidated (here: cached) image; from disk this time.
        m.builtInCache.memoryCache.removeAll()
        let result = try await ManagerTesting.image(m, url, options: .refreshCached)
        XCTAssertEqual(result.source, .disk)
        let third = await f.requests(path, atLeast: 3)
        XCTAssertTrue(third[2].contains("\" 304 "), third[2])
        await ManagerTesting.assertIdle(m)
    }

    func testRefreshWith200CompletesTwiceAndUpdatesTheCache() async throws {
        let f = try fixture
        let path = "/\(unique("refresh200")).png"
        try f.write(path, ManagerFixture.png(width: 10, height: 10))
        let m = try makeManager()
        let url = f.nginx.url(path)
        _ = try await ManagerTesting.image(m, url)
        await ManagerTesting.assertIdle(m)
        try f.write(path, ManagerFixture.png(width: 12, height: 7))
        let (task, completions) = ManagerTesting.start(m, url, options: .refreshCached)
        await DownloadTesting.waitUntil("both completions") { completions.all.count == 2 }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        let results = try completions.all.map { try $0.get() }
        XCTAssertEqual(results.count, 2)
        XCTAssertEqual(results.map(\.source), [.memory, .loader])
        XCTAssertEqual(results.map(\.image.width), [10, 12])
        XCTAssertTrue(task.isFinished)
        XCTAssertEqual(m.builtInCache.memoryCache.image(forKey: url.absoluteString)?.width, 12)
        m.builtInCache.memoryCache.removeAll()
        let diskWidth = try await ManagerTesting.image(m, url).image.width
        XCTAssertEqual(diskWidth, 12, "the disk tier has the new image")
        // Async: the new image.
        try f.write(path, ManagerFixture.png(width: 5, height: 5, seed: 3))
        let refreshedWidth = try await ManagerTesting.image(m, url, options: .refreshCached).image.width
        XCTAssertEqual(refreshedWidth, 5)
        await ManagerTesting.assertIdle(m)
    }

    // MARK: - Failed URLs

    func testLastingFailuresAreBlocklistedUntilTheirTimeToLive() async throws {
        let f = try fixture
        let m = try makeManager { $0.failedURLTimeToLive = .milliseconds(300) }
        let path = "/\(unique("missing")).png"
        let url = f.nginx.url(path)
        guard await ManagerTesting.error(m, url)?.httpStatus == 404 else { return XCTFail() }
        XCTAssertTrue(m.isBlocklisted(url))
        let refused = await ManagerTesting.error(m, url)
        guard refused?.code == .blocklisted else { return XCTFail("\(String(describing: refused))") }
        XCTAssertEqual(refused?.code, .blocklisted)
        let first = await f.requests(path, atLeast: 1).count
        XCTAssertEqual(first, 1, "a blocklisted URL is not requested")
        await DownloadTesting.waitUntil("the entry expires", timeout: 20) { !m.isBlocklisted(url) }
        guard await ManagerTesting.error(m, url)?.httpStatus == 404 else { return XCTFail() }
        let logged = await f.requests(path, atLeast: 2).count
        XCTAssertEqual(logged, 2)
        XCTAssertTrue(m.isBlocklisted(url))
        m.removeFailedURL(url)
        XCTAssertFalse(m.isBlocklisted(url))
        // Undecodable data is lasting too.
        let note = f.nginx.url("/note.txt")
        guard await ManagerTesting.error(m, note)?.code == .unknownFormat else { return XCTFail() }
        XCTAssertTrue(m.isBlocklisted(note))
        XCTAssertEqual(m.statistics.blocklistedURLs, 1)
        m.removeAllFailedURLs()
        XCTAssertFalse(m.isBlocklisted(note))
        await ManagerTesting.assertIdle(m)
    }

    func testTransientFailuresAreNotBlocklisted() async throws {
        let m = try makeManager()
        let url = URL(string: "http://127.0.0.1:\(try Loopback.freePort())/nothing-listens.png")!
        guard await ManagerTesting.error(m, url)?.code == .connectFailed else { return XCTFail() }
        XCTAssertFalse(m.isBlocklisted(url))
        guard await ManagerTesting.error(m, url)?.code == .connectFailed else { return XCTFail() }
        await ManagerTesting.assertIdle(m)
    }

    func testDelegateDecidesDownloadsAndBlocklisting() async throws {
        struct Delegate: ImageManagerDelegate {
            func shouldDownload(_ url: URL) -> Bool { !url.path.hasPrefix("/copies/") }
            func shouldBlockFailedURL(_ url: URL, error: ImageKitError) -> Bool { false }
        }
        let f = try fixture
        let m = try makeManager { $0.delegate = Delegate() }
        let (url, path) = try f.copy(ManagerFixture.tile(4), named: "4.png")
        let vetoed = await ManagerTesting.error(m, url)
        guard vetoed?.code == .vetoed else { return XCTFail("\(String(describing: vetoed))") }
        XCTAssertEqual(vetoed?.code, .vetoed)
        XCTAssertTrue(f.requests(path).isEmpty)
        let missing = f.nginx.url("/\(unique("missing")).png")
        guard await ManagerTesting.error(m, missing)?.httpStatus == 404 else { return XCTFail() }
        XCTAssertFalse(m.isBlocklisted(missing), "the delegate blocks nothing")
        let allowed = try await ManagerTesting.image(m, f.nginx.url("/photo.jpg"))
        XCTAssertNotNil(allowed)
        await ManagerTesting.assertIdle(m)
    }

    // MARK: - Options processor and events

    func testOptionsProcessorRewritesOptionsAndContext() async throws {
        let f = try fixture
        let m = try makeManager {
            $0.optionsProcessor = { url, options, context in
                var context = context
                if url.path.hasSuffix(".jpg") { context.thumbnailPixelSize = PixelSize(square: 32) }
                return (options.union(.cacheMemoryOnly), context)
            }
        }
        let r = try await ManagerTesting.image(m, f.nginx.url("/photo.jpg"))
        XCTAssertEqual([r.image.width, r.image.height], [32, 24])
        await ManagerTesting.assertIdle(m)
        let onDisk = await m.builtInCache.totalDiskCount
        XCTAssertEqual(onDisk, 0, "cacheMemoryOnly added by the processor")
    }

    func testEventsOfAColdAndAWarmLoad() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager { $0.observers = [recorder] }
        let url = f.nginx.url("/tiles/7.png")
        _ = try await ManagerTesting.image(m, url, options: .waitStoreCache)
        XCTAssertEqual(recorder.names, [
            "query memory miss", "query disk miss", "query data miss", "download", "response 200", "decode",
            "decoded 26x17", "stored memory", "stored disk", "completed loader",
        ])
        _ = try await ManagerTesting.image(m, url)
        XCTAssertEqual(recorder.names.suffix(2), ["query memory hit", "completed memory"])
        for event in recorder.events.all {
            switch event {
            case .downloadFinished(let u, _, let metrics):
                XCTAssertEqual(u, url)
                XCTAssertEqual(metrics.bodyBytes, Int64(ManagerFixture.tile(7).count))
            case .decoded(_, let key, _, let duration):
                XCTAssertEqual(key, url.absoluteString)
                XCTAssertGreaterThan(duration, .zero)
            default: break
            }
        }
        await ManagerTesting.assertIdle(m)
    }
}
