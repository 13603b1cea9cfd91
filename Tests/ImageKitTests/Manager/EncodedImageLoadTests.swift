import Foundation
import ImageKit
import TestServers
import XCTest

/// Loads asking for encoded bytes: the variant's tiers, zero-copy hits, coalescing, format
/// negotiation and the tiers a service chooses.
final class EncodedImageLoadTests: ManagerTestCase {
    private let jpeg80 = OutputFormat.fixed(.jpeg(quality: 80))
    private let thumbnail = ImageContext(thumbnailPixelSize: PixelSize(square: 64))

    func testVariantFromNetworkThenMemoryThenDisk() async throws {
        let f = try fixture
        let cache = try makeCache()
        let m = try makeManager(cache: cache)
        let (url, path) = try f.copy(ManagerFixture.photo, named: "photo.jpg")
        let first = try await m.encodedImage(for: url, as: jpeg80, context: thumbnail)
        XCTAssertEqual(first.source, .loader)
        XCTAssertEqual(first.encoded.format, .jpeg)
        XCTAssertEqual(first.encoded.contentType, "image/jpeg")
        XCTAssertEqual(first.encoded.pixelSize, PixelSize(width: 64, height: 48))
        XCTAssertNotNil(first.metrics.encode)
        XCTAssertNotNil(first.image, "the image decoded on the way comes along")
        let decoded = try ImageDecoder().decode(first.encoded.data)
        XCTAssertEqual([decoded.width, decoded.height], [64, 48])
        XCTAssertEqual(first.encoded.entityTag.count, 18)

        let variantKey = try XCTUnwrap(m.cacheKey(for: url, as: jpeg80, context: thumbnail))
        let imageKey = try XCTUnwrap(m.cacheKey(for: url, context: thumbnail))
        XCTAssertNotEqual(variantKey, imageKey)
        XCTAssertNil(cache.memoryCache.image(forKey: imageKey), "a bytes load keeps no bitmap by default")
        XCTAssertEqual(cache.memoryCache.totalCost, first.encoded.data.count, "the variant costs its bytes")

        let second = try await m.encodedImage(for: url, as: jpeg80, context: thumbnail)
        XCTAssertEqual(second.source, .memory)
        XCTAssertNil(second.image)
        XCTAssertEqual(second.encoded, first.encoded)
        XCTAssertTrue(Self.sameBuffer(second.encoded.data, first.encoded.data), "a memory hit does not copy the bytes")

        await ManagerTesting.assertIdle(m)  // the disk writes are done
        cache.memoryCache.removeAll()
        let third = try await m.encodedImage(for: url, as: jpeg80, context: thumbnail)
        XCTAssertEqual(third.source, .disk)
        XCTAssertNil(third.metrics.encode, "a disk hit is not encoded again")
        XCTAssertEqual(third.encoded, first.encoded)
        XCTAssertNotNil(cache.memoryCache.encodedImage(forKey: variantKey), "a disk hit is promoted to memory")
        let fourth = try await m.encodedImage(for: url, as: jpeg80, context: thumbnail)
        XCTAssertEqual(fourth.source, .memory)
        let logged = await f.requests(path, atLeast: 1).count
        XCTAssertEqual(logged, 1)
        await ManagerTesting.assertIdle(m)
    }

    func testAnotherEncodingOfACachedImageIsEncodedWithoutDownloading() async throws {
        let f = try fixture
        let m = try makeManager()
        let (url, path) = try f.copy(ManagerFixture.photo, named: "photo.jpg")
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 64), imageStoreCacheTypeForEncodedLoads: .all)
        let jpeg = try await m.encodedImage(for: url, as: jpeg80, context: context)
        XCTAssertEqual(jpeg.source, .loader)
        let png = try await m.encodedImage(for: url, as: .fixed(.png()), context: context)
        XCTAssertEqual(png.source, .memory, "the bitmap kept in memory was encoded again")
        XCTAssertEqual(png.encoded.format, .png)
        XCTAssertNotNil(png.metrics.encode)
        let image = try await m.image(for: url, context: context)
        XCTAssertEqual(image.source, .memory)
        XCTAssertEqual(try ImageDecoder().decode(png.encoded.data).packedPixels(), image.image.packedPixels(),
                       "PNG keeps the pixels exactly")
        await ManagerTesting.assertIdle(m)
        let logged = await f.requests(path, atLeast: 1).count
        XCTAssertEqual(logged, 1)
    }

    func testTiersAreChosenPerPart() async throws {
        let f = try fixture
        let cache = try makeCache()
        let m = try makeManager(cache: cache)
        let (url, _) = try f.copy(ManagerFixture.photo, named: "photo.jpg")
        let diskOnly = ImageContext(thumbnailPixelSize: PixelSize(square: 32), encodedStoreCacheType: .disk,
                                    originalStoreCacheType: [])
        _ = try await m.encodedImage(for: url, as: jpeg80, context: diskOnly)
        await ManagerTesting.assertIdle(m)
        XCTAssertEqual(cache.memoryCache.totalCount, 0, "nothing in memory")
        let key = try XCTUnwrap(m.cacheKey(for: url, as: jpeg80, context: diskOnly))
        let onDisk = try await cache.diskCache.data(forKey: key)
        XCTAssertNotNil(onDisk, "the variant is on disk")
        let original = try await cache.originalData(forKey: url.absoluteString)
        XCTAssertNil(original, "no original bytes were kept")

        let memoryOnly = ImageContext(thumbnailPixelSize: PixelSize(square: 40),
                                      imageStoreCacheTypeForEncodedLoads: .memory,
                                      encodedStoreCacheType: .memory)
        let r = try await m.encodedImage(for: url, as: jpeg80, context: memoryOnly)
        await ManagerTesting.assertIdle(m)
        XCTAssertNotNil(cache.memoryCache.image(forKey: try XCTUnwrap(m.cacheKey(for: url, context: memoryOnly))))
        let variant = try XCTUnwrap(m.cacheKey(for: url, as: jpeg80, context: memoryOnly))
        XCTAssertEqual(cache.memoryCache.encodedImage(forKey: variant), r.encoded)
        let variantOnDisk = try await cache.diskCache.data(forKey: variant)
        XCTAssertNil(variantOnDisk, "a memory-only variant is not written to disk")
    }

    func testLoadsOfOneVariantShareOneDownloadDecodeAndEncode() async throws {
        let f = try fixture
        let recorder = EventRecorder()
        let m = try makeManager { $0.observers = [recorder] }
        let k = unique("variant")
        let url = f.script.url("/gate_png?key=\(k)&w=30&h=20")
        let loads = (0..<5).map { _ in Task { try await m.encodedImage(for: url, as: .fixed(.webp(quality: 70))) } }
        await DownloadTesting.waitUntil("the request reached the server") { (try? f.script.stats(k).count) == 1 }
        try f.script.open(k)
        var results: [EncodedImageResult] = []
        for load in loads { results.append(try await load.value) }
        XCTAssertEqual(Set(results.map(\.encoded)).count, 1)
        XCTAssertEqual(results[0].metrics.sharedBy, 5)
        XCTAssertEqual(try f.script.stats(k).count, 1)
        XCTAssertEqual(recorder.names.filter { $0.hasPrefix("encoded") }, ["encoded WebP"])
        await ManagerTesting.assertIdle(m)
    }

    func testNegotiatedFormat() async throws {
        XCTAssertEqual(OutputFormat.negotiate(accept: "image/avif,image/webp,*/*;q=0.8"),
                       .negotiated(acceptsWebP: true, quality: 80))
        XCTAssertEqual(OutputFormat.negotiate(accept: "image/webp;q=0", quality: 70),
                       .negotiated(acceptsWebP: false, quality: 70))
        XCTAssertEqual(OutputFormat.negotiate(accept: "IMAGE/WEBP ; q=0.5"), .negotiated(acceptsWebP: true, quality: 80))
        XCTAssertEqual(OutputFormat.negotiate(accept: "*/*"), .negotiated(acceptsWebP: false, quality: 80))
        XCTAssertEqual(OutputFormat.negotiate(accept: "image/*"), .negotiated(acceptsWebP: false, quality: 80))
        XCTAssertEqual(OutputFormat.negotiate(accept: nil), .negotiated(acceptsWebP: false, quality: 80))
        XCTAssertTrue(OutputFormat.negotiate(accept: nil).variesWithAccept)
        XCTAssertFalse(OutputFormat.fixed(.png()).variesWithAccept)

        let f = try fixture
        let m = try makeManager()
        let photo = try f.copy(ManagerFixture.photo, named: "photo.jpg").url
        let translucent = (0..<64).flatMap { i -> [UInt16] in [UInt16(i * 4), 90, 200, UInt16(i % 2 == 0 ? 255 : 120)] }
        let tile = try f.copy(PNGWriter(width: 8, height: 8, colorType: .rgba, bitDepth: 8, samples: translucent).encode(),
                              named: "translucent.png").url
        let tileImage = try await m.image(for: tile)
        XCTAssertFalse(tileImage.image.isOpaque, "the tile has transparency")
        let webp = try await m.encodedImage(for: photo, as: .negotiate(accept: "image/webp"))
        XCTAssertEqual(webp.encoded.format, .webp)
        let jpeg = try await m.encodedImage(for: photo, as: .negotiate(accept: "image/jpeg"))
        XCTAssertEqual(jpeg.encoded.format, .jpeg)
        let png = try await m.encodedImage(for: tile, as: .negotiate(accept: "image/jpeg"))
        XCTAssertEqual(png.encoded.format, .png)
        XCTAssertEqual(png.encoded.contentType, "image/png")
        XCTAssertNotEqual(m.cacheKey(for: photo, as: .negotiate(accept: "image/webp")),
                          m.cacheKey(for: photo, as: .negotiate(accept: nil)))
        await ManagerTesting.assertIdle(m)
    }

    func testCompletionHandlerStyle() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = try f.copy(ManagerFixture.photo, named: "photo.jpg").url
        let results = Collector<Result<EncodedImageResult, ImageKitError>>()
        m.loadEncodedImage(with: url, as: jpeg80, context: thumbnail) { results.append($0) }
        await DownloadTesting.waitUntil("the completion") { results.all.count == 1 }
        guard case .success(let r)? = results.all.first else { return XCTFail("\(results.all)") }
        XCTAssertEqual(r.encoded.format, .jpeg)
        let failed = Collector<Result<EncodedImageResult, ImageKitError>>()
        m.loadEncodedImage(with: f.nginx.url("/note.txt"), as: jpeg80) { failed.append($0) }
        await DownloadTesting.waitUntil("the failure") { failed.all.count == 1 }
        guard case .failure(let e)? = failed.all.first else { return XCTFail("\(failed.all)") }
        XCTAssertEqual(e.suggestedHTTPStatus, 422, "\(e)")
        await ManagerTesting.assertIdle(m)
    }

    func testAsyncEncodeMatchesTheSynchronousEncoder() async throws {
        let image = try ImageDecoder().decode(ManagerFixture.photo)
        for format in [EncodeFormat.jpeg(quality: 75), .png(), .webp(quality: 60), .webpLossless] {
            let encoded = try await ImageEncoder.encodedImage(image, as: format)
            XCTAssertEqual(encoded.data, try ImageEncoder.encode(image, as: format), "\(format)")
            XCTAssertEqual(encoded.format, format.imageFormat)
            XCTAssertEqual(encoded.pixelSize, PixelSize(width: 640, height: 480))
            XCTAssertEqual(try EncodedImage(data: encoded.data), encoded, "the header describes it the same way")
        }
        do {
            _ = try await ImageEncoder.encodedImage(image, as: .png(), frame: 3)
            XCTFail("frame 3 of 1 encoded")
        } catch {
            guard error.code == .invalidArgument else { return XCTFail("\(error)") }
        }
    }

    /// Whether two `Data` values share one buffer (no copy was made).
    private static func sameBuffer(_ a: Data, _ b: Data) -> Bool {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.baseAddress == y.baseAddress } }
    }
}
