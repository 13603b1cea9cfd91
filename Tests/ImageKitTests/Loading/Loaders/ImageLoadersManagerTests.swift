import Foundation
import ImageKit
import XCTest

/// ``ImageLoadersManager``: the loader chosen by URL, the last added asked first.
final class ImageLoadersManagerTests: XCTestCase {
    func testEachURLGoesToTheLoaderAcceptingItsScheme() async throws {
        let memory = ScriptedLoader(scheme: "memory")
        let bucket = ScriptedLoader(scheme: "bucket")
        memory.put("/a", [1, 2, 3])
        bucket.put("/a", [4, 5])
        let loaders = ImageLoadersManager(loaders: [memory, bucket])

        let fromMemory = try await loaders.load(ImageLoaderRequest(url: memory.url("/a")), progress: nil)
        let fromBucket = try await loaders.load(ImageLoaderRequest(url: bucket.url("/a")), progress: nil)
        XCTAssertEqual(fromMemory.data, Data([1, 2, 3]))
        XCTAssertEqual(fromBucket.data, Data([4, 5]))
        XCTAssertEqual(memory.requests.count, 1)
        XCTAssertEqual(bucket.requests.count, 1)
        XCTAssertTrue(loaders.canLoad(memory.url("/b")))
        XCTAssertFalse(loaders.canLoad(try XCTUnwrap(URL(string: "ftp://host/a"))))
    }

    func testTheLoaderAddedLastIsAskedFirst() async throws {
        let first = ScriptedLoader()
        let second = ScriptedLoader()
        first.put("/a", [1])
        second.put("/a", [2])
        let loaders = ImageLoadersManager(loaders: [first, second])
        XCTAssertTrue(loaders.loader(for: first.url("/a")) === second)

        let third = ScriptedLoader()
        third.put("/a", [3])
        loaders.addLoader(third)
        let result = try await loaders.load(ImageLoaderRequest(url: first.url("/a")), progress: nil)
        XCTAssertEqual(result.data, Data([3]))
        XCTAssertEqual(first.requests.count + second.requests.count, 0)

        loaders.removeLoader(third)
        XCTAssertTrue(loaders.loader(for: first.url("/a")) === second)
        XCTAssertEqual(loaders.loaders.count, 2)
    }

    func testAURLNoLoaderAcceptsFailsNamingItsScheme() async throws {
        let loaders = ImageLoadersManager(loaders: [ScriptedLoader()])
        let url = try XCTUnwrap(URL(string: "ftp://host/a.png"))
        do {
            _ = try await loaders.load(ImageLoaderRequest(url: url), progress: nil)
            XCTFail("loaded a URL no loader accepts")
        } catch let error as ImageKitError {
            XCTAssertEqual(error, .invalidURL("no image loader loads the \"ftp\" scheme (ftp://host/a.png)"))
        }
    }

    func testTheBlocklistRuleIsTheLoadingLoaders() throws {
        let lenient = ScriptedLoader(scheme: "lenient")
        lenient.blockFailures(false)
        let strict = ScriptedLoader(scheme: "strict")
        strict.blockFailures(true)
        let loaders = ImageLoadersManager(loaders: [lenient, strict])
        XCTAssertFalse(loaders.shouldBlockFailedURL(lenient.url("/a"), error: .corrupt("x")))
        XCTAssertTrue(loaders.shouldBlockFailedURL(strict.url("/a"), error: .timedOut("x")))
        XCTAssertTrue(loaders.shouldBlockFailedURL(try XCTUnwrap(URL(string: "ftp://h/a")), error: .corrupt("x")),
                      "no loader: lasting failures")
    }

    func testTheDefaultRuleLeavesHTTPStatusesToTheManager() throws {
        let loader = FileLoader()
        let url = URL(fileURLWithPath: "/a.png")
        XCTAssertTrue(loader.shouldBlockFailedURL(url, error: .httpStatus(503, "unavailable")))
        XCTAssertTrue(loader.shouldBlockFailedURL(url, error: .io("gone")))
        XCTAssertFalse(loader.shouldBlockFailedURL(url, error: .timedOut("slow")))
        XCTAssertFalse(loader.shouldBlockFailedURL(url, error: .cancelled))
    }

    func testADownloaderLoadsHTTPAndHTTPSOnly() throws {
        let downloader = try Downloader()
        XCTAssertTrue(downloader.canLoad(try XCTUnwrap(URL(string: "https://host/a.png"))))
        XCTAssertTrue(downloader.canLoad(try XCTUnwrap(URL(string: "HTTP://host/a.png"))))
        XCTAssertFalse(downloader.canLoad(URL(fileURLWithPath: "/a.png")))
        XCTAssertFalse(downloader.canLoad(try XCTUnwrap(URL(string: "ftp://host/a.png"))))
    }
}
