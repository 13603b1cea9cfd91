import Foundation
import ImageKit
import TestServers
import XCTest

/// ``DownloaderConfiguration/responseModifier`` and ``DownloaderConfiguration/decryptor``,
/// against real servers on 127.0.0.1.
final class DownloaderResponseHooksTests: LoopbackTestCase {
    private var small: [UInt8] { LoopbackFixture.files["small.png"]! }

    func testTheResponseModifierRewritesHeadAndBody() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader {
            $0.responseModifier = { result in
                var r = result
                r.response.headers["X-Modified"] = "yes"
                r.response.statusCode = 299
                r.data = Data(r.data.reversed())
                return r
            }
        }
        let result = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        XCTAssertEqual(Array(result.data), small.reversed())
        XCTAssertEqual(result.response.headers["X-Modified"], "yes")
        XCTAssertEqual(result.response.statusCode, 299)
        XCTAssertEqual(result.status, .downloaded)
    }

    func testAThrowingModifierFailsEveryCaller() async throws {
        let f = try fixture
        struct Refused: Error {}
        let d = try DownloadTesting.downloader { $0.responseModifier = { _ in throw Refused() } }
        let url = f.nginx.url("/small.png")
        let error = await DownloadTesting.error(d, url)
        XCTAssertEqual(error, .invalidResponse("the response modifier or decryptor rejected \(url.absoluteString): Refused()"))
        let d2 = try DownloadTesting.downloader { $0.responseModifier = { _ in throw ImageKitError.vetoed("no") } }
        let vetoed = await DownloadTesting.error(d2, url)
        XCTAssertEqual(vetoed, .vetoed("no"), "an ImageKitError is passed on as it is")
    }

    func testTheDecryptorRunsAfterTheModifierOnTheBody() async throws {
        let f = try fixture
        let d = try DownloadTesting.downloader {
            $0.responseModifier = { result in
                var r = result
                r.response.headers["X-Key"] = "90"
                return r
            }
            $0.decryptor = { data, response in
                let key = UInt8(response.headers["X-Key"] ?? "") ?? 0
                return Data(data.map { $0 ^ key })
            }
        }
        let result = try await d.download(DownloadRequest(url: f.nginx.url("/small.png")))
        XCTAssertEqual(Array(result.data), small.map { $0 ^ 90 })
    }

    func testTheDecryptorSkipsANotModifiedAnswer() async throws {
        let f = try fixture
        let calls = Collector<Int>()
        let d = try DownloadTesting.downloader {
            $0.decryptor = { data, _ in
                calls.append(data.count)
                return data
            }
        }
        let url = f.nginx.url("/small.png")
        let first = try await d.download(DownloadRequest(url: url))
        let tag = try XCTUnwrap(first.response.entityTag)
        let again = try await d.download(DownloadRequest(url: url, validators: .init(entityTag: tag)))
        XCTAssertEqual(again.status, .notModified)
        XCTAssertEqual(calls.all, [small.count], "only the downloaded body")
    }
}
