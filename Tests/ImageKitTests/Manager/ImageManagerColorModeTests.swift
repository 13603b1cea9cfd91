import Foundation
import ImageKit
import XCTest

/// The colour mode through the manager: part of the cache key when not the default, so raw
/// and converted images of one URL never share a cache entry.
final class ImageManagerColorModeTests: ManagerTestCase {
    func testRawAndConvertedLoadsKeepSeparateCacheEntries() async throws {
        let f = try fixture
        let m = try makeManager()
        let tagged = try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/color/p3.jpg"))
        let (url, _) = try f.copy([UInt8](tagged), named: unique("p3") + ".jpg")
        let raw = ImageContext(colorMode: .raw)
        XCTAssertEqual(m.cacheKey(for: url), url.absoluteString)
        XCTAssertEqual(m.cacheKey(for: url, context: raw), url.absoluteString + "|color=raw")

        let converted = try await ManagerTesting.image(m, url)
        let kept = try await ManagerTesting.image(m, url, context: raw)
        XCTAssertEqual(converted.source, .loader)
        XCTAssertEqual(kept.source, .loader, "a raw load must not be served the converted image")
        XCTAssertTrue(converted.image.isColorConverted)
        XCTAssertFalse(kept.image.isColorConverted)
        XCTAssertEqual(kept.image.iccProfile, converted.image.iccProfile)
        let again = try await ManagerTesting.image(m, url, context: raw)
        XCTAssertEqual(again.source, .memory)
        XCTAssertFalse(again.image.isColorConverted)
        await ManagerTesting.assertIdle(m)
    }
}
