import Foundation
import ImageKit
import XCTest

/// ``FileLoader``: `file:` URLs read on the loader's own queue.
final class FileLoaderTests: XCTestCase {
    private let dir = TemporaryDirectory("imagekit-file-loader")

    func testReadsTheFile() async throws {
        let url = dir.url.appendingPathComponent("a.bin")
        try Data([9, 8, 7]).write(to: url)
        let progress = Collector<DownloadProgress>()
        let result = try await FileLoader().load(ImageLoaderRequest(url: url)) { progress.append($0) }
        XCTAssertEqual(result.data, Data([9, 8, 7]))
        XCTAssertEqual(result.status, .downloaded)
        XCTAssertNil(result.response)
        XCTAssertEqual(progress.all, [DownloadProgress(receivedBytes: 3, expectedBytes: 3)])
    }

    func testAMissingFileIsAnIOError() async throws {
        let url = dir.url.appendingPathComponent("missing.png")
        do {
            _ = try await FileLoader().load(ImageLoaderRequest(url: url), progress: nil)
            XCTFail("read a missing file")
        } catch let error as ImageKitError {
            XCTAssertEqual(error.code, ImageKitError.io("").code)
            XCTAssertTrue(error.message.hasPrefix("cannot read \(url.path)"), error.message)
        }
    }

    func testOnlyFileURLs() async throws {
        let loader = FileLoader()
        let url = try XCTUnwrap(URL(string: "https://host/a.png"))
        XCTAssertFalse(loader.canLoad(url))
        XCTAssertTrue(loader.canLoad(dir.url.appendingPathComponent("a.png")))
        do {
            _ = try await loader.load(ImageLoaderRequest(url: url), progress: nil)
            XCTFail("loaded an https URL")
        } catch let error as ImageKitError {
            XCTAssertEqual(error, .invalidURL("https://host/a.png is not a file URL"))
        }
    }

    func testACancelledLoadDoesNotRead() async throws {
        let url = dir.url.appendingPathComponent("b.bin")
        try Data([1]).write(to: url)
        let loader = FileLoader()
        let task = Task { () -> Result<ImageLoaderResult, ImageKitError> in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                return .success(try await loader.load(ImageLoaderRequest(url: url), progress: nil))
            } catch {
                return .failure(error as? ImageKitError ?? .internal("\(error)"))
            }
        }
        let result = await task.value
        XCTAssertEqual(try? result.get().data, nil)
        guard case .failure(let error) = result else { return XCTFail("a cancelled load read the file") }
        XCTAssertEqual(error, .cancelled)
    }
}
