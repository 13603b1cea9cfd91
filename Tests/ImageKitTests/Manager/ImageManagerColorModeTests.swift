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

        // The first load's stores are awaited: the raw load then finds the original bytes it
        // stored (keyed by the URL alone) and decodes them raw — never the converted image's
        // entries. (Not awaited, whether it finds them raced with that store.)
        let converted = try await ManagerTesting.image(m, url, options: .waitStoreCache)
        let kept = try await ManagerTesting.image(m, url, context: raw)
        XCTAssertEqual(converted.source, .loader)
        XCTAssertEqual(kept.source, .disk, "the raw load decodes the stored original")
        XCTAssertTrue(converted.image.isColorConverted)
        XCTAssertFalse(kept.image.isColorConverted)
        XCTAssertEqual(kept.image.iccProfile, converted.image.iccProfile)
        let again = try await ManagerTesting.image(m, url, context: raw)
        XCTAssertEqual(again.source, .memory)
        XCTAssertFalse(again.image.isColorConverted)
        await ManagerTesting.assertIdle(m)
    }
}
