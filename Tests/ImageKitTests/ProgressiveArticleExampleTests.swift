import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

// ARTICLE-PROGRESSIVE-BEGIN
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
// ARTICLE-PROGRESSIVE-END

/// Runs the progressive-loading example of the LoadingImages article and checks the article shows exactly this code.
final class ProgressiveArticleExampleTests: ManagerTestCase {
    func testExampleRuns() async throws {
        let m = try makeManager()
        let shown = Collector<Image>()
        let result = try await showProgressively(m, try fixture.nginx.url("/photo.jpg")) { shown.append($0) }
        let image = try XCTUnwrap(result?.image)
        XCTAssertEqual([image.width, image.height], [640, 480])
        for partial in shown.all { XCTAssertEqual([partial.width, partial.height], [640, 480]) }
        await ManagerTesting.assertIdle(m)
    }

    func testArticleShowsThisCode() throws {
        try ArticleExample.assertShown("ARTICLE-PROGRESSIVE", from: #filePath, inArticle: "LoadingImages")
    }
}
