import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

// README-PROGRESSIVE-BEGIN
/// Shows a large image as it arrives: partial images while its bytes stream in, then the final one.
func showProgressively(_ manager: ImageManager, _ url: URL,
                       show: @escaping @Sendable (Image) -> Void) async throws -> ImageResult? {
    var context = ImageContext(thumbnailPixelSize: PixelSize(square: 1024))
    context.progressiveInterval = .milliseconds(200)
    for try await event in manager.images(for: url, options: .progressiveLoad, context: context) {
        switch event {
        case .partial(let image): show(image)      // never cached
        case .final(let result): return result     // cached as usual
        case .progress, .cached: break
        }
    }
    return nil
}
// README-PROGRESSIVE-END

/// Runs the README's progressive-loading example and checks the README shows exactly this code.
final class ProgressiveReadmeExampleTests: ManagerTestCase {
    func testExampleRuns() async throws {
        let m = try makeManager()
        let shown = Collector<Image>()
        let result = try await showProgressively(m, try fixture.nginx.url("/photo.jpg")) { shown.append($0) }
        let image = try XCTUnwrap(result?.image)
        XCTAssertEqual([image.width, image.height], [640, 480])
        for partial in shown.all { XCTAssertEqual([partial.width, partial.height], [640, 480]) }
        await ManagerTesting.assertIdle(m)
    }

    func testReadmeShowsThisCode() throws {
        try ReadmeExample.assertShown("README-PROGRESSIVE", from: #filePath)
    }
}
