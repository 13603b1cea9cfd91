import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// The manager over a loader of the tests' own (``ScriptedLoader``, images from a dictionary):
/// the whole load — cache, loader, decode, store — with no socket.
final class ImageManagerCustomLoaderTests: XCTestCase {
    private func manager(_ loader: any ImageLoading, cache: any ImageCaching = InMemoryImageCache("cache"),
                         _ configure: (inout ImageManagerConfiguration) -> Void = { _ in }) -> ImageManager {
        var configuration = ImageManagerConfiguration()
        configure(&configuration)
        let m = ImageManager(cache: cache, loader: loader, configuration: configuration)
        let heldManager = ManagerShutdown(m)
        addTeardownBlock { await heldManager.run() }
        return m
    }

    private static let png = ManagerFixture.png(width: 30, height: 20)

    func testALoadComesFromTheLoaderAndTheNextFromTheCache() async throws {
        let loader = ScriptedLoader()
        loader.put("/a.png", Self.png)
        let m = manager(loader)
        let url = loader.url("/a.png")

        let first = try await m.image(for: url, options: .waitStoreCache)
        XCTAssertEqual(first.source, .loader)
        XCTAssertEqual(first.image.width, 30)
        XCTAssertEqual(loader.requests.map(\.url), [url])
        XCTAssertNil(loader.requests.first?.validators)

        let second = try await m.image(for: url)
        XCTAssertEqual(second.source, .memory)
        XCTAssertTrue(second.image === first.image)
        XCTAssertEqual(loader.requests.count, 1, "served from the cache, not the loader")
    }

    func testTheLoaderGetsTheLoadsPriorityAndFlags() async throws {
        let loader = ScriptedLoader()
        loader.put("/a.png", Self.png)
        let m = manager(loader)
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 10), priority: .high)
        _ = try await m.image(for: loader.url("/a.png"), options: [.fromLoaderOnly, .waitStoreCache], context: context)
        let request = try XCTUnwrap(loader.requests.first)
        XCTAssertEqual(request.priority, .high)
        XCTAssertTrue(request.verifiesPeer)
        XCTAssertFalse(request.usesCookies)
        XCTAssertNil(request.requestModifier)

        _ = try await m.image(for: loader.url("/a.png"), options: [.fromLoaderOnly, .allowInvalidSSLCertificates,
                                                                   .handleCookies])
        let flagged = try XCTUnwrap(loader.requests.last)
        XCTAssertEqual(flagged.priority, .normal)
        XCTAssertFalse(flagged.verifiesPeer)
        XCTAssertTrue(flagged.usesCookies)
    }

    func testAMissFailsWithTheLoadersError() async throws {
        let loader = ScriptedLoader()
        let m = manager(loader)
        let error = await ManagerTesting.error(m, loader.url("/missing.png"))
        XCTAssertEqual(error, ImageKitError.io("nothing stored at /missing.png"))
    }

    func testProgressReachesTheCaller() async throws {
        let loader = ScriptedLoader()
        loader.put("/p.png", Self.png)
        loader.gate("/p.png")
        let m = manager(loader)
        let progress = Collector<DownloadProgress>()
        let (_, completions) = ManagerTesting.start(m, loader.url("/p.png")) { progress.append($0) }
        let total = Int64(Self.png.count)
        await DownloadTesting.waitUntil("the first report arrives") { progress.all.count == 1 }
        XCTAssertEqual(progress.all, [DownloadProgress(receivedBytes: total / 2, expectedBytes: total)])
        loader.release("/p.png")
        await DownloadTesting.waitUntil("the load completes") { completions.all.count == 1 }
        // A report reaching the callback queue after the load completed is dropped.
        XCTAssertEqual(progress.all.first?.receivedBytes, total / 2)
        XCTAssertLessThanOrEqual(progress.all.count, 2)
    }

    func testCancellingTheLoadCancelsTheLoadersTask() async throws {
        let loader = ScriptedLoader()
        loader.put("/slow.png", Self.png)
        loader.hold("/slow.png")
        let m = manager(loader)
        let (task, completions) = ManagerTesting.start(m, loader.url("/slow.png"))
        await DownloadTesting.waitUntil("the loader is asked") { loader.requests.count == 1 }
        task.cancel()
        await DownloadTesting.waitUntil("the loader sees the cancellation") { loader.cancelled == ["/slow.png"] }
        await DownloadTesting.waitUntil("the manager is idle") { m.statistics.isIdle }
        XCTAssertEqual(completions.all.count, 0, "a cancelled load's completion is not called")
    }

    func testRefreshCachedRevalidatesThroughTheLoader() async throws {
        let loader = ScriptedLoader()
        loader.put("/r.png", Self.png, entityTag: "\"v1\"")
        let m = manager(loader)
        let url = loader.url("/r.png")
        let first = try await m.image(for: url, options: .waitStoreCache)

        let refreshed = try await m.image(for: url, options: .refreshCached)
        XCTAssertEqual(loader.requests.count, 2)
        XCTAssertEqual(loader.requests.last?.validators?.entityTag, "\"v1\"", "the stored ETag is sent")
        XCTAssertTrue(refreshed.image === first.image, "not modified: the cached image")
    }

    func testAFailureTheLoaderCallsLastingIsBlocklisted() async throws {
        let loader = ScriptedLoader()
        loader.fail(with: .corrupt("scrambled"))
        let m = manager(loader)
        let url = loader.url("/bad.png")
        _ = await ManagerTesting.error(m, url)
        XCTAssertTrue(m.isBlocklisted(url))
        let again = await ManagerTesting.error(m, url)
        XCTAssertEqual(again?.code, ImageKitError.blocklisted("", original: .cancelled).code)
        XCTAssertEqual(loader.requests.count, 1, "a blocklisted URL does not reach the loader")
    }

    func testALoaderMayKeepAFailureOffTheBlocklist() async throws {
        let loader = ScriptedLoader()
        loader.fail(with: .corrupt("scrambled"))
        loader.blockFailures(false)
        let m = manager(loader)
        let url = loader.url("/bad.png")
        _ = await ManagerTesting.error(m, url)
        XCTAssertFalse(m.isBlocklisted(url))
        let again = await ManagerTesting.error(m, url)
        XCTAssertEqual(again, .corrupt("scrambled"))
        XCTAssertEqual(loader.requests.count, 2)
    }

    func testAnHTTPStatusIsBlockedOnlyWhenTheConfigurationListsIt() async throws {
        let loader = ScriptedLoader()
        loader.fail(with: .httpStatus(404, "not found"))
        let listed = manager(loader)
        _ = await ManagerTesting.error(listed, loader.url("/404.png"))
        XCTAssertTrue(listed.isBlocklisted(loader.url("/404.png")))

        let unlisted = manager(loader) { $0.failedURLStatusCodes = [] }
        _ = await ManagerTesting.error(unlisted, loader.url("/404.png"))
        XCTAssertFalse(unlisted.isBlocklisted(loader.url("/404.png")))
    }

    func testAURLNoLoaderAcceptsIsInvalid() async throws {
        let m = manager(ScriptedLoader())
        let error = await ManagerTesting.error(m, URL(string: "ftp://images/a.png"))
        XCTAssertEqual(error?.code, ImageKitError.invalidURL("").code)
        XCTAssertNil(m.cacheKey(for: URL(string: "ftp://images/a.png")))
        XCTAssertNotNil(m.cacheKey(for: URL(string: "memory://images/a.png")))
    }

    func testAnHTTPURLTheLoaderDoesNotAcceptFailsWhenItReachesTheLoader() async throws {
        let loader = ScriptedLoader()
        let m = manager(loader)
        let url = try XCTUnwrap(URL(string: "https://images.invalid/a.png"))
        let error = await ManagerTesting.error(m, url)
        XCTAssertEqual(error, .invalidURL("the image loader does not load https://images.invalid/a.png"))
        XCTAssertEqual(loader.requests.count, 0)
    }

    func testTheContextsLoaderReplacesTheManagers() async throws {
        let managers = ScriptedLoader()
        let contexts = ScriptedLoader()
        contexts.put("/c.png", Self.png)
        let m = manager(managers)
        let result = try await m.image(for: contexts.url("/c.png"), context: ImageContext(loader: contexts))
        XCTAssertEqual(result.image.height, 20)
        XCTAssertEqual(managers.requests.count, 0)
        XCTAssertEqual(contexts.requests.count, 1)
    }

    func testLoadsOfOneImageThroughOneLoaderShareOneLoad() async throws {
        let loader = ScriptedLoader()
        loader.put("/shared.png", Self.png)
        loader.hold("/shared.png")
        let m = manager(loader)
        let url = loader.url("/shared.png")
        let a = ManagerTesting.start(m, url)
        let b = ManagerTesting.start(m, url)
        await DownloadTesting.waitUntil("the loader is asked") { loader.requests.count == 1 }
        XCTAssertEqual(m.statistics.jobs, 1, "one pipeline for both")
        a.task.cancel()
        b.task.cancel()
        await DownloadTesting.waitUntil("the loader sees the cancellation") { loader.cancelled.count == 1 }
        XCTAssertEqual(loader.requests.count, 1)
    }

    func testShutdownShutsTheLoaderDown() async throws {
        let loader = ShutdownRecorder()
        let m = ImageManager(cache: InMemoryImageCache("cache"), loader: loader)
        await m.shutdown(.cancel)
        XCTAssertEqual(loader.modes, [.cancel])
    }
}

/// A loader that loads nothing and records its shutdowns.
private final class ShutdownRecorder: ImageLoading {
    private let recorded = Collector<ShutdownMode>()

    var modes: [ShutdownMode] { recorded.all }

    func canLoad(_ url: URL) -> Bool { false }

    func load(_ request: ImageLoaderRequest, progress: (@Sendable (DownloadProgress) -> Void)?) async throws
        -> ImageLoaderResult {
        throw ImageKitError.invalidURL("\(request.url.absoluteString) is not loaded by this loader")
    }

    func shutdown(_ mode: ShutdownMode) async {
        recorded.append(mode)
    }
}
