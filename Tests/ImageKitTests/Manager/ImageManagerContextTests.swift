import Foundation
import ImageKit
import XCTest

/// One test per ``ImageContext`` field, each failing without the field (deadline and
/// callbackQueue are covered by the cancellation and load tests).
final class ImageManagerContextTests: ManagerTestCase {
    func testThumbnailPixelSizeAndMode() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/photo.jpg")
        let fit = try await ManagerTesting.image(m, url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 128)))
        XCTAssertEqual([fit.image.width, fit.image.height], [128, 96])
        let fill = try await ManagerTesting.image(m, url, context: ImageContext(
            thumbnailPixelSize: PixelSize(square: 128), thumbnailMode: .fill))
        XCTAssertEqual([fill.image.width, fill.image.height], [128, 128])
        let stretch = try await ManagerTesting.image(m, url, context: ImageContext(
            thumbnailPixelSize: PixelSize(width: 50, height: 120), thumbnailMode: .stretch))
        XCTAssertEqual([stretch.image.width, stretch.image.height], [50, 120])
        let keys = Set([ImageResizer.Mode.fit, .fill, .stretch].map {
            m.cacheKey(for: url, context: ImageContext(thumbnailPixelSize: PixelSize(square: 128), thumbnailMode: $0))
        })
        XCTAssertEqual(keys.count, 3, "each mode has a key of its own")
        await ManagerTesting.assertIdle(m)
    }

    func testScaleDownLimitBytes() async throws {
        let f = try fixture
        let m = try makeManager()
        let r = try await ManagerTesting.image(m, f.nginx.url("/large.jpg"), context: ImageContext(scaleDownLimitBytes: 500_000))
        XCTAssertLessThanOrEqual(r.image.width * r.image.height * 4, 500_000)
        XCTAssertGreaterThan(r.image.width, 200)
        await ManagerTesting.assertIdle(m)
    }

    func testImageTransformer() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/photo.jpg")
        let pipeline = PipelineTransformer([
            ResizingTransformer(size: PixelSize(width: 64, height: 64), mode: .fill),
            CroppingTransformer(rect: PixelRect(x: 0, y: 0, width: 64, height: 20)),
            FlippingTransformer(vertical: true),
        ])
        let context = ImageContext(imageTransformer: pipeline)
        let r = try await ManagerTesting.image(m, url, options: .waitStoreCache, context: context)
        XCTAssertEqual([r.image.width, r.image.height], [64, 20])
        XCTAssertNotNil(r.metrics.transform)
        let key = m.cacheKey(for: url, context: context)!
        XCTAssertEqual(key, url.absoluteString + "|transform=resize(64x64,fill)|crop(0,0,64x20)|flip(v)")
        XCTAssertEqual(m.builtInCache.memoryCache.image(forKey: key)?.height, 20)
        let onDisk = await m.builtInCache.diskCache.contains(key)
        XCTAssertTrue(onDisk)
        XCTAssertNil(m.builtInCache.memoryCache.image(forKey: url.absoluteString), "the untransformed key is not stored")
        // A failing transformer fails the load without blocklisting the URL.
        let bad = ImageContext(imageTransformer: CroppingTransformer(rect: PixelRect(x: 600, y: 0, width: 100, height: 10)))
        let e = await ManagerTesting.error(m, url, context: bad)
        guard e?.code == .transformFailed else { return XCTFail("\(String(describing: e))") }
        XCTAssertEqual(e?.code, .transformFailed)
        XCTAssertFalse(m.isBlocklisted(url))
        await ManagerTesting.assertIdle(m)
    }

    func testCacheKeyFilter() async throws {
        let f = try fixture
        let m = try makeManager()
        let context = ImageContext(cacheKeyFilter: { url in url.path })
        let a = try await ManagerTesting.image(m, f.nginx.url("/tiles/30.png?token=a"), context: context)
        let b = try await ManagerTesting.image(m, f.nginx.url("/tiles/30.png?token=b"), context: context)
        XCTAssertEqual(a.source, .loader)
        XCTAssertEqual(b.source, .memory)
        XCTAssertEqual(m.cacheKey(for: f.nginx.url("/tiles/30.png?token=c"), context: context), "/tiles/30.png")
        XCTAssertEqual(f.requests("/tiles/30.png?token=b").count, 0)
        let unfiltered = try await ManagerTesting.image(m, f.nginx.url("/tiles/30.png?token=b"))
        XCTAssertEqual(unfiltered.source, .loader)
        await ManagerTesting.assertIdle(m)
    }

    func testCacheSerializer() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/tiles/31.png")
        let context = ImageContext(cacheSerializer: { image, data, _ in
            Data("\(image.width)x\(image.height):\(data.count)".utf8)
        })
        _ = try await ManagerTesting.image(m, url, options: .waitStoreCache, context: context)
        let stored = try await m.builtInCache.originalData(forKey: url.absoluteString)
        XCTAssertEqual(stored.map { String(decoding: $0, as: UTF8.self) }, "25x17:\(ManagerFixture.tile(31).count)")
        let skip = ImageContext(cacheSerializer: { _, _, _ in nil })
        let other = f.nginx.url("/tiles/32.png")
        _ = try await ManagerTesting.image(m, other, options: .waitStoreCache, context: skip)
        let none = try await m.builtInCache.originalData(forKey: other.absoluteString)
        XCTAssertNil(none)
        await ManagerTesting.assertIdle(m)
    }

    func testRequestModifier() async throws {
        let f = try fixture
        let m = try makeManager()
        let missing = f.nginx.url("/\(unique("moved")).png")
        let context = ImageContext(requestModifier: { request in
            var request = request
            request.url = f.nginx.url("/tiles/33.png")
            return request
        })
        let r = try await ManagerTesting.image(m, missing, context: context)
        XCTAssertEqual(r.image.width, 27)
        XCTAssertEqual(r.url, missing)
        let cancelling = ImageContext(requestModifier: { _ in nil })
        guard await ManagerTesting.error(m, f.nginx.url("/tiles/34.png"), context: cancelling)?.code == .cancelled else {
            return XCTFail()
        }
        guard await ManagerTesting.error(m, missing, options: .fromLoaderOnly)?.httpStatus == 404 else {
            return XCTFail()
        }
        await ManagerTesting.assertIdle(m)
    }

    func testResponseValidator() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/tiles/35.png")
        let context = ImageContext(responseValidator: { response in
            if response.mimeType == "image/png" { throw ImageKitError.invalidResponse("no PNG wanted") }
        })
        let rejected = await ManagerTesting.error(m, url, context: context)
        XCTAssertEqual(rejected, .invalidResponse("no PNG wanted"))
        let accepted = try await ManagerTesting.image(m, url, options: .retryFailed)
        XCTAssertNotNil(accepted)
        await ManagerTesting.assertIdle(m)
    }

    func testQueryCacheType() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/tiles/36.png")
        _ = try await ManagerTesting.image(m, url, options: .waitStoreCache)
        let fromMemory = try await ManagerTesting.image(m, url).source
        XCTAssertEqual(fromMemory, .memory)
        let fromDisk = try await ManagerTesting.image(m, url, context: ImageContext(queryCacheType: .disk)).source
        XCTAssertEqual(fromDisk, .disk)
        let fromNetwork = try await ManagerTesting.image(m, url, context: ImageContext(queryCacheType: [])).source
        XCTAssertEqual(fromNetwork, .loader)
        let logged = await f.requests("/tiles/36.png", atLeast: 2).count
        XCTAssertEqual(logged, 2)
        await ManagerTesting.assertIdle(m)
    }

    func testStoreCacheType() async throws {
        let f = try fixture
        let m = try makeManager()
        let toDisk = f.nginx.url("/tiles/37.png")
        _ = try await ManagerTesting.image(m, toDisk, options: .waitStoreCache, context: ImageContext(storeCacheType: .disk))
        XCTAssertNil(m.builtInCache.memoryCache.image(forKey: toDisk.absoluteString))
        let onDisk = await m.builtInCache.diskCache.contains(toDisk.absoluteString)
        XCTAssertTrue(onDisk)
        let toMemory = f.nginx.url("/tiles/38.png")
        _ = try await ManagerTesting.image(m, toMemory, options: .waitStoreCache,
                                           context: ImageContext(storeCacheType: .memory))
        XCTAssertNotNil(m.builtInCache.memoryCache.image(forKey: toMemory.absoluteString))
        let memoryOnDisk = await m.builtInCache.diskCache.contains(toMemory.absoluteString)
        XCTAssertFalse(memoryOnDisk)
        await ManagerTesting.assertIdle(m)
    }

    func testOriginalStoreCacheType() async throws {
        let f = try fixture
        let m = try makeManager()
        let kept = f.nginx.url("/tiles/39.png")
        _ = try await ManagerTesting.image(m, kept, options: .waitStoreCache)
        let keptData = try await m.builtInCache.originalData(forKey: kept.absoluteString)
        XCTAssertNotNil(keptData, "kept on disk by default")
        let dropped = f.nginx.url("/tiles/40.png")
        _ = try await ManagerTesting.image(m, dropped, options: .waitStoreCache,
                                           context: ImageContext(originalStoreCacheType: []))
        let droppedData = try await m.builtInCache.originalData(forKey: dropped.absoluteString)
        XCTAssertNil(droppedData)
        // Without the original bytes, another size downloads again.
        let small = ImageContext(thumbnailPixelSize: PixelSize(square: 8))
        _ = try await ManagerTesting.image(m, dropped, context: small)
        let logged = await f.requests("/tiles/40.png", atLeast: 2).count
        XCTAssertEqual(logged, 2)
        _ = try await ManagerTesting.image(m, kept, context: small)
        let loggedToo = await f.requests("/tiles/39.png", atLeast: 1).count
        XCTAssertEqual(loggedToo, 1)
        await ManagerTesting.assertIdle(m)
    }

    func testCustomCacheAndDownloader() async throws {
        final class Starts: DownloaderObserver {
            let urls = Collector<URL>()
            func receive(_ event: DownloadEvent) {
                if case .started(let request) = event { urls.append(request.url) }
            }
        }
        let f = try fixture
        let m = try makeManager()
        let cache = try makeCache()
        let starts = Starts()
        let downloader = try DownloadTesting.downloader { $0.observers = [starts] }
        let url = f.nginx.url("/tiles/41.png")
        let context = ImageContext(cache: cache, loader: downloader)
        _ = try await ManagerTesting.image(m, url, options: .waitStoreCache, context: context)
        await ManagerTesting.drain(downloader.configuration.callbackQueue)
        XCTAssertEqual(starts.urls.all, [url])
        XCTAssertNotNil(cache.memoryCache.image(forKey: url.absoluteString))
        XCTAssertNil(m.builtInCache.memoryCache.image(forKey: url.absoluteString))
        XCTAssertEqual(m.builtInDownloader.statistics.engineStarted, 0)
        await ManagerTesting.assertIdle(m)
    }

    func testCallbackQueue() async throws {
        let f = try fixture
        let m = try makeManager()
        let queue = DispatchQueue(label: "test.context-callbacks")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let onQueue = Collector<Bool>()
        let url = f.nginx.url("/tiles/42.png")
        for context in [ImageContext(callbackQueue: queue), ImageContext()] {
            m.loadImage(with: url, context: context, progress: { _ in }) { _ in
                onQueue.append(DispatchQueue.getSpecific(key: key) == 7)
            }
            await DownloadTesting.waitUntil("the completion") { onQueue.all.count == (context.callbackQueue == nil ? 2 : 1) }
        }
        XCTAssertEqual(onQueue.all, [true, false])
        await ManagerTesting.assertIdle(m)
    }

    func testDecodeLimitsOfTheConfiguration() async throws {
        let f = try fixture
        let m = try makeManager { $0.decodeLimits = DecodeLimits(maxPixels: 100_000) }
        let e = await ManagerTesting.error(m, f.nginx.url("/photo.jpg"))
        guard e?.code == .limitExceeded else { return XCTFail("\(String(describing: e))") }
        await ManagerTesting.assertIdle(m)
    }
}
