import Foundation
import ImageKit
import XCTest

/// One test per ``ImageOptions`` flag, each failing without the flag (refreshCached is covered
/// by the refresh tests in ImageManagerLoadTests).
final class ImageManagerOptionsTests: ManagerTestCase {
    func testRetryFailed() async throws {
        let f = try fixture
        let m = try makeManager()
        let path = "/\(unique("retry")).png"
        let url = f.nginx.url(path)
        _ = await ManagerTesting.error(m, url)
        guard await ManagerTesting.error(m, url)?.code == .blocklisted else { return XCTFail() }
        try f.write(path, ManagerFixture.tile(2))
        let r = try await ManagerTesting.image(m, url, options: .retryFailed)
        XCTAssertEqual(r.source, .loader)
        let logged = await f.requests(path, atLeast: 2).count
        XCTAssertEqual(logged, 2)
        await ManagerTesting.assertIdle(m)
    }

    /// With one download slot held, loads queued low, normal, high start high, normal, low.
    func testLowAndHighPriority() async throws {
        final class Starts: DownloaderObserver {
            let paths = Collector<String>()
            func receive(_ event: DownloadEvent) {
                if case .started(let request) = event { paths.append(request.url.path) }
            }
        }
        let f = try fixture
        let starts = Starts()
        let m = try makeManager(downloader: {
            $0.maxConcurrentDownloads = 1
            $0.observers = [starts]
        })
        let k = unique("slot")
        let blocker = Task { try await m.image(for: f.script.url("/gate_png?key=\(k)")) }
        try await DownloadTesting.waitUntil("the slot is taken") { try f.script.stats(k).count == 1 }
        let low = ManagerTesting.start(m, f.nginx.url("/tiles/20.png"), context: ImageContext(priority: .low))
        let normal = ManagerTesting.start(m, f.nginx.url("/tiles/21.png"))
        let high = ManagerTesting.start(m, f.nginx.url("/tiles/22.png"), context: ImageContext(priority: .high))
        await DownloadTesting.waitUntil("all three wait for the slot") { m.builtInDownloader.statistics.queuedTransfers == 3 }
        try f.script.open(k)
        _ = try await blocker.value
        await DownloadTesting.waitUntil("all complete") {
            [low, normal, high].allSatisfy { $0.completions.all.count == 1 }
        }
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.builtInDownloader.configuration.callbackQueue)
        XCTAssertEqual(Array(starts.paths.all.dropFirst()), ["/tiles/22.png", "/tiles/21.png", "/tiles/20.png"])
    }

    func testFromCacheOnly() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/tiles/23.png")
        let e = await ManagerTesting.error(m, url, options: .fromCacheOnly)
        guard e?.code == .notInCache else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(e?.code, .notInCache)
        XCTAssertTrue(f.requests("/tiles/23.png").isEmpty)
        XCTAssertFalse(m.isBlocklisted(url))
        _ = try await ManagerTesting.image(m, url)
        let cached = try await ManagerTesting.image(m, url, options: .fromCacheOnly).source
        XCTAssertEqual(cached, .memory)
        await ManagerTesting.assertIdle(m)
    }

    func testFromLoaderOnly() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/tiles/24.png")
        _ = try await ManagerTesting.image(m, url)
        let again = try await ManagerTesting.image(m, url, options: .fromLoaderOnly)
        XCTAssertEqual(again.source, .loader)
        let logged = await f.requests("/tiles/24.png", atLeast: 2).count
        XCTAssertEqual(logged, 2)
        await ManagerTesting.assertIdle(m)
    }

    func testCacheMemoryOnly() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/tiles/25.png")
        _ = try await ManagerTesting.image(m, url, options: [.cacheMemoryOnly, .waitStoreCache])
        await ManagerTesting.assertIdle(m)
        XCTAssertNotNil(m.builtInCache.memoryCache.image(forKey: url.absoluteString))
        let onDisk = await m.builtInCache.totalDiskCount
        XCTAssertEqual(onDisk, 0, "neither the bitmap nor the original bytes")
        _ = try await ManagerTesting.image(m, f.nginx.url("/tiles/26.png"))
        await ManagerTesting.assertIdle(m)
        let withoutOption = await m.builtInCache.totalDiskCount
        XCTAssertEqual(withoutOption, 2, "the bitmap and the original bytes")
    }

    func testScaleDownLargeImages() async throws {
        let f = try fixture
        let m = try makeManager { $0.scaleDownLimitBytes = 1 << 20 }
        let url = f.nginx.url("/large.jpg")
        let full = try await ManagerTesting.image(m, url)
        XCTAssertEqual([full.image.width, full.image.height], [1600, 1200])
        await ManagerTesting.assertIdle(m)
        let scaled = try await ManagerTesting.image(m, url, options: .scaleDownLargeImages)
        XCTAssertLessThanOrEqual(scaled.image.width * scaled.image.height * 4, 1 << 20)
        XCTAssertGreaterThan(scaled.image.width * scaled.image.height * 4, 1 << 18)
        XCTAssertEqual(Double(scaled.image.width) / Double(scaled.image.height), 4.0 / 3, accuracy: 0.02)
        XCTAssertEqual(scaled.source, .disk, "decoded from the original bytes under its own key")
        await ManagerTesting.assertIdle(m)
    }

    func testPreloadAllFramesAndDecodeFirstFrameOnly() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/anim.gif")
        let defaultFrames = try await ManagerTesting.image(m, url).image.frameCount
        XCTAssertEqual(defaultFrames, 1)
        let all = try await ManagerTesting.image(m, url, options: .preloadAllFrames)
        XCTAssertEqual(all.image.frameCount, 3)
        XCTAssertEqual(all.image.frameDelays, [100, 100, 100])
        let first = try await ManagerTesting.image(m, url, options: [.preloadAllFrames, .decodeFirstFrameOnly])
        XCTAssertEqual(first.image.frameCount, 1)
        XCTAssertEqual(first.source, .memory, "the same key as the default first-frame decode")
        await ManagerTesting.assertIdle(m)
    }

    func testWaitStoreCache() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/large.jpg")
        let (_, completions) = ManagerTesting.start(m, url, options: .waitStoreCache)
        await DownloadTesting.waitUntil("the completion") { completions.all.count == 1 }
        let result = try completions.all[0].get()
        // The disk index knows the entry as soon as its file is in place.
        let written = await m.builtInCache.diskCache.contains(m.cacheKey(for: url)!)
        XCTAssertTrue(written)
        XCTAssertNotNil(result.metrics.store, "the completion waited for the store")
        await ManagerTesting.assertIdle(m)
        let other = try await ManagerTesting.image(m, f.nginx.url("/tiles/27.png"))
        XCTAssertNil(other.metrics.store, "without the option the completion does not wait")
        await ManagerTesting.assertIdle(m)
    }

    func testHandleCookies() async throws {
        let f = try fixture
        let m = try makeManager()
        let set = f.script.url("/cookie_set")
        let image = f.script.url("/cookie_png")
        _ = await ManagerTesting.error(m, set, options: [.handleCookies, .retryFailed])
        guard await ManagerTesting.error(m, image, options: .retryFailed)?.httpStatus == 403 else {
            return XCTFail("without the option the cookie is not sent")
        }
        let r = try await ManagerTesting.image(m, image, options: [.handleCookies, .retryFailed])
        XCTAssertEqual(r.image.width, 8)
        await ManagerTesting.assertIdle(m)
    }

    func testAllowInvalidSSLCertificates() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.tlsURL("/tiles/28.png")
        guard await ManagerTesting.error(m, url)?.code == .tlsFailed else {
            return XCTFail("the test CA is not trusted by default")
        }
        let r = try await ManagerTesting.image(m, url, options: [.allowInvalidSSLCertificates, .retryFailed])
        XCTAssertEqual(r.image.width, 27)
        await ManagerTesting.assertIdle(m)
    }

    func testTransformAnimatedImage() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/anim.gif")
        let context = ImageContext(imageTransformer: RotationTransformer(quarterTurns: 1))
        let plain = try await ManagerTesting.image(m, url, options: .preloadAllFrames, context: context)
        XCTAssertEqual([plain.image.width, plain.image.height, plain.image.frameCount], [8, 4, 3])
        let turned = try await ManagerTesting.image(m, url, options: [.preloadAllFrames, .transformAnimatedImage],
                                                    context: context)
        XCTAssertEqual([turned.image.width, turned.image.height, turned.image.frameCount], [4, 8, 3])
        let still = try await ManagerTesting.image(m, url, context: context)
        XCTAssertEqual([still.image.width, still.image.height], [4, 8], "a still (first frame) is always transformed")
        await ManagerTesting.assertIdle(m)
    }

    func testQueryMemoryData() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/tiles/29.png")
        _ = try await ManagerTesting.image(m, url)
        await ManagerTesting.assertIdle(m)
        let plain = try await ManagerTesting.image(m, url)
        XCTAssertEqual(plain.source, .memory)
        XCTAssertNil(plain.originalData)
        let withData = try await ManagerTesting.image(m, url, options: .queryMemoryData)
        XCTAssertEqual(withData.source, .memory)
        XCTAssertEqual(withData.originalData.map(Array.init), ManagerFixture.tile(29))
        let (_, completions) = ManagerTesting.start(m, url, options: .queryMemoryData)
        await DownloadTesting.waitUntil("the completion") { completions.all.count == 1 }
        XCTAssertEqual(try completions.all[0].get().originalData.map(Array.init), ManagerFixture.tile(29))
        await ManagerTesting.assertIdle(m)
    }
}
