import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

// ARTICLE-CODER-BEGIN
/// Decodes "TOY1" files: the signature, width and height (big-endian UInt32), then straight RGBA.
final class ToyCoder: ImageCoding {
    func canDecode(_ data: Data) -> Bool { data.starts(with: Array("TOY1".utf8)) }

    func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws -> Image {
        let bytes = [UInt8](data)
        guard bytes.count >= 12 else { throw ImageKitError.truncated("TOY1: \(bytes.count) bytes, no header") }
        func field(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        if cancellation.isCancelled { throw ImageKitError.cancelled }
        return try Image(width: field(4), height: field(8), frames: [Array(bytes[12...])],
                         premultiplied: false, limits: options.limits)  // sizes checked before allocating
    }

    func canEncode(_ format: ImageFormat) -> Bool { false }  // reads TOY1, writes nothing

    func encode(_ image: Image, as format: EncodeFormat) throws -> EncodedImage {
        throw ImageKitError.unsupportedFormat(format.imageFormat, "the TOY1 coder does not encode")
    }
}

func makeManager(cacheDirectory: URL, configuration: ImageManagerConfiguration) throws -> ImageManager {
    let coders = ImageCodersManager()  // the built-in coder: JPEG, PNG, GIF, WebP, AVIF, HEIC/HEIF, JPEG XL
    coders.add(ToyCoder())             // asked first from now on
    return ImageManager(cache: try ImageCache(namespace: "toys", directory: cacheDirectory),
                        downloader: try Downloader(), coders: coders, configuration: configuration)
}
// ARTICLE-CODER-END

/// Runs the custom-coder example of the CustomCoders article and checks the article shows exactly this code.
final class CoderArticleExampleTests: XCTestCase {
    func testExampleDecodesToyFilesAndStillTheBuiltInFormats() async throws {
        let directory = TemporaryDirectory("readme-coder")
        var configuration = ImageManagerConfiguration()
        configuration.allowsLocalFiles = true
        let manager = try makeManager(cacheDirectory: directory.url.appendingPathComponent("cache"),
                                      configuration: configuration)
        let shutdownManager = ManagerShutdown(manager)
        addTeardownBlock { await shutdownManager.run() }
        let straight = TestPixels.rgba(width: 7, height: 5, opaque: false)
        let toy = directory.url.appendingPathComponent("a.toy")
        try Data(ToyFile.bytes(width: 7, height: 5, straightRGBA: straight)).write(to: toy)
        let png = directory.url.appendingPathComponent("b.png")
        try Data(ManagerFixture.png(width: 30, height: 20)).write(to: png)

        let decoded = try await manager.image(for: toy).image
        XCTAssertEqual(decoded.width, 7)
        XCTAssertEqual(decoded.height, 5)
        XCTAssertEqual(decoded.packedPixels(), Pixels.premultiplied(straight))
        XCTAssertEqual(decoded.sourceFormat, .unknown)
        let builtIn = try await manager.image(for: png).image
        XCTAssertEqual(builtIn.sourceFormat, .png)
        XCTAssertEqual(builtIn.width, 30)
    }

    func testArticleShowsThisCode() throws {
        try ArticleExample.assertShown("ARTICLE-CODER", from: #filePath, inArticle: "CustomCoders")
    }
}
