import Foundation
import ImageKit
import XCTest

/// The errors of the async API: statically ``ImageKitError``, and keeping what the user's own
/// code (a transformer, a response validator) threw.
final class ImageManagerErrorTests: ManagerTestCase {
    private struct UserError: Error, CustomStringConvertible {
        var description: String { "the user's own failure" }
    }

    private struct FailingTransformer: ImageTransformer {
        var key: String { "fail" }
        func transform(_ image: Image) throws -> Image { throw UserError() }
    }

    func testTheAsyncCallsThrowImageKitErrorStatically() async throws {
        let f = try fixture
        let m = try makeManager()
        // No cast: `error` is an ImageKitError because the calls declare `throws(ImageKitError)`.
        do {
            _ = try await m.image(for: nil)
            XCTFail("a nil URL loaded")
        } catch {
            XCTAssertEqual(error.code, .invalidURL)
        }
        do {
            _ = try await m.encodedImage(for: f.nginx.url("/\(unique("missing")).png"), as: .fixed(.png()))
            XCTFail("a missing image loaded")
        } catch {
            XCTAssertEqual(error.code, .httpStatus)
            XCTAssertEqual(error.httpStatus, 404)
        }
        do {
            _ = try await m.builtInDownloader.download(DownloadRequest(url: f.nginx.url("/\(unique("missing")).png")))
            XCTFail("a missing file downloaded")
        } catch {
            XCTAssertEqual(error.httpStatus, 404)
        }
        await ManagerTesting.assertIdle(m)
    }

    func testATransformersErrorIsKeptAsTheUnderlyingError() async throws {
        let f = try fixture
        let m = try makeManager()
        do {
            _ = try await m.image(for: f.nginx.url("/photo.jpg"),
                                  context: ImageContext(imageTransformer: FailingTransformer()))
            XCTFail("the failing transformer's load succeeded")
        } catch {
            XCTAssertEqual(error.code, .transformFailed)
            XCTAssertEqual(error.message, "fail: the user's own failure", "the sentence still names the error")
            XCTAssertTrue(error.underlying is UserError, "\(String(describing: error.underlying))")
        }
        await ManagerTesting.assertIdle(m)
    }

    func testAResponseValidatorsErrorIsKeptAsTheUnderlyingError() async throws {
        let f = try fixture
        let m = try makeManager()
        let url = f.nginx.url("/photo.jpg")
        let context = ImageContext(responseValidator: { _ in throw UserError() })
        do {
            _ = try await m.image(for: url, options: .fromLoaderOnly, context: context)
            XCTFail("the rejected response loaded")
        } catch {
            XCTAssertEqual(error.code, .invalidResponse)
            XCTAssertTrue(error.message.hasSuffix(": the user's own failure"), error.message)
            XCTAssertTrue(error.underlying is UserError, "\(String(describing: error.underlying))")
        }
        // The downloader's own validator, too.
        let d = try Downloader(configuration: {
            var c = m.builtInDownloader.configuration
            c.responseValidator = { _ in throw UserError() }
            return c
        }())
        do {
            _ = try await d.download(DownloadRequest(url: url))
            XCTFail("the rejected response downloaded")
        } catch {
            XCTAssertEqual(error.code, .invalidResponse)
            XCTAssertTrue(error.message.hasSuffix(": the user's own failure"), error.message)
            XCTAssertTrue(error.underlying is UserError, "\(String(describing: error.underlying))")
        }
        await d.shutdown()
        await ManagerTesting.assertIdle(m)
    }
}
