import Foundation
import ImageKit
import ImageKitTestSupport
import Synchronization
import XCTest

// ARTICLE-LOADER-BEGIN
/// Serves `memory:` URLs from a dictionary (an object store or a database in a service).
final class MemoryLoader: ImageLoading {
    private let images: Mutex<[String: Data]>

    init(_ images: [String: Data]) { self.images = Mutex(images) }

    func canLoad(_ url: URL) -> Bool { url.scheme == "memory" }

    func load(_ request: ImageLoaderRequest,
              progress: (@Sendable (DownloadProgress) -> Void)?) async throws -> ImageLoaderResult {
        guard let data = images.withLock({ $0[request.url.path] }) else {
            throw ImageKitError.io("no image stored at \(request.url.path)")
        }
        return ImageLoaderResult(data: data)
    }
}

func makeManager(cache: any ImageCaching, images: [String: Data]) throws -> ImageManager {
    // The loader added last is asked first: memory: URLs from the dictionary, http(s) downloaded.
    let loaders = ImageLoadersManager(loaders: [try Downloader(), MemoryLoader(images)])
    return ImageManager(cache: cache, loader: loaders)
}
// ARTICLE-LOADER-END

/// Runs the loader example of the CustomLoaders article and checks the article shows exactly this code.
final class LoaderArticleExampleTests: XCTestCase {
    func testExampleRuns() async throws {
        let png = Data(ManagerFixture.png(width: 12, height: 8))
        let manager = try makeManager(cache: InMemoryImageCache("readme"), images: ["/logo.png": png])
        let shutdownManager = ManagerShutdown(manager)
        addTeardownBlock { await shutdownManager.run() }
        let result = try await manager.image(for: URL(string: "memory://assets/logo.png"))
        XCTAssertEqual([result.image.width, result.image.height], [12, 8])
        do {
            _ = try await manager.image(for: URL(string: "memory://assets/missing.png"))
            XCTFail("loaded an image that is not stored")
        } catch let error as ImageKitError {
            XCTAssertEqual(error, .io("no image stored at /missing.png"))
        }
    }

    func testArticleShowsThisCode() throws {
        try ArticleExample.assertShown("ARTICLE-LOADER", from: #filePath, inArticle: "CustomLoaders")
    }
}
