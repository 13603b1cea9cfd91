import Foundation
import ImageKit
import XCTest

/// ``ImageCodersManager``'s order, its errors, and ``BuiltInImageCoder`` through the protocol.
final class ImageCodersManagerTests: XCTestCase {
    // Made per use: a Data kept until the process exits (in a stored property of the test case,
    // which XCTest keeps, or in a static) is reported by LeakSanitizer, which does not see the
    // tagged reference inside Data's representation.
    private var png: Data { Data(ManagerFixture.png(width: 12, height: 8)) }

    func testTheBuiltInCoderIsThereByDefault() throws {
        let coders = ImageCodersManager()
        XCTAssertEqual(coders.coders.count, 1)
        XCTAssertTrue(coders.coders.first is BuiltInImageCoder)
        XCTAssertTrue(coders.canDecode(png))
        XCTAssertFalse(coders.canDecode(Data("TOY1".utf8)))
        XCTAssertTrue(coders.canEncode(.webp))
        XCTAssertTrue(coders.canEncode(.gif))
        XCTAssertFalse(coders.canEncode(.tiff))
        let image = try coders.decode(png)
        XCTAssertEqual(image.width, 12)
        XCTAssertEqual(image.packedPixels(), try ImageDecoder().decode(png).packedPixels())
    }

    func testACoderAddedLaterIsAskedFirst() throws {
        let coders = ImageCodersManager()
        let first = StubCoder("TOY", red: 1)
        let second = StubCoder("TOY", red: 2)
        coders.add(first)
        coders.add(second)
        XCTAssertTrue(coders.coders.first === second)
        XCTAssertTrue(coders.coders.last is BuiltInImageCoder)
        XCTAssertEqual(try coders.decode(Data("TOY".utf8)).packedPixels(), [2, 0, 0, 255])
        XCTAssertEqual(second.log, ["decode"])
        XCTAssertEqual(first.log, [])

        coders.remove(second)
        XCTAssertEqual(try coders.decode(Data("TOY".utf8)).packedPixels(), [1, 0, 0, 255])
        XCTAssertEqual(try coders.decode(png).width, 12, "bytes no added coder claims go to the built-in coder")
        XCTAssertEqual(first.log, ["decode"])
    }

    func testACoderCanTakeABuiltInFormatOver() throws {
        let coders = ImageCodersManager()
        let pngCoder = StubCoder(bytes: [0x89, 0x50, 0x4E, 0x47], red: 9, encodes: [.png])
        coders.add(pngCoder)
        XCTAssertEqual(try coders.decode(png).packedPixels(), [9, 0, 0, 255])
        let image = TestPixels.image(width: 3, height: 3)
        let encoded = try coders.encode(image, as: .png())
        XCTAssertEqual(encoded, try BuiltInImageCoder().encode(image, as: .png(compressionLevel: 0)))
        XCTAssertNotEqual(encoded, try BuiltInImageCoder().encode(image, as: .png()))
        XCTAssertEqual(pngCoder.log, ["decode", "encode PNG"])
        XCTAssertEqual(try coders.encode(image, as: .jpeg()).format, .jpeg, "JPEG is still the built-in coder's")
    }

    func testWithTheBuiltInCoderUnclaimedBytesFailAsTheDecoderFailsThem() {
        let coders = ImageCodersManager(coders: [BuiltInImageCoder(), StubCoder("TOY")])
        let inputs: [(String, Data)] = [
            ("unknown", Data("not an image at all".utf8)),
            ("TIFF", Data([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0, 0, 0, 0, 0])),
            ("empty", Data()),
            ("truncated PNG", png.prefix(40)),
        ]
        for (name, data) in inputs {
            var expected: ImageKitError?
            XCTAssertThrowsError(try ImageDecoder().decode(data)) { expected = $0 as? ImageKitError }
            XCTAssertNotNil(expected, name)
            XCTAssertThrowsError(try coders.decode(data), name) { error in
                XCTAssertEqual(error as? ImageKitError, expected, name)
            }
            XCTAssertThrowsError(try ImageCodersManager(coders: [coders]).decode(data), "nested: \(name)") { error in
                XCTAssertEqual(error as? ImageKitError, expected, "nested: \(name)")
            }
        }
    }

    func testWithoutTheBuiltInCoderUnclaimedBytesFailWithUnknownFormat() {
        let coders = ImageCodersManager(coders: [StubCoder("TOY")])
        XCTAssertThrowsError(try coders.decode(png)) { error in
            let e = error as? ImageKitError
            XCTAssertEqual(e?.code, ImageKitError.unknownFormat("").code)
            XCTAssertEqual(e?.message, "no coder decodes these \(self.png.count) bytes (starting 89 50 4e 47 0d 0a 1a 0a)")
        }
        XCTAssertThrowsError(try ImageCodersManager(coders: []).decode(Data())) { error in
            XCTAssertEqual((error as? ImageKitError)?.message, "no coder decodes these 0 bytes (empty)")
        }
        XCTAssertThrowsError(try coders.encode(TestPixels.image(width: 2, height: 2), as: .webp())) { error in
            XCTAssertEqual(error as? ImageKitError, .unsupportedFormat(.webp, "no coder encodes WebP"))
        }
    }

    func testACancelledDecodeStopsTheBuiltInCoder() throws {
        let cancellation = DecodeCancellation()
        XCTAssertFalse(cancellation.isCancelled)
        cancellation.cancel()
        XCTAssertTrue(cancellation.isCancelled)
        XCTAssertThrowsError(try BuiltInImageCoder().decode(png, options: DecodeOptions(), cancellation: cancellation)) {
            XCTAssertEqual($0 as? ImageKitError, .cancelled)
        }
        XCTAssertEqual(try BuiltInImageCoder().decode(png, options: DecodeOptions(),
                                                      cancellation: DecodeCancellation()).width, 12)
    }

    func testTheBuiltInCoderReportsDecodeStatistics() throws {
        var statistics = DecodeStatistics()
        let options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 6, height: 4))
        let image = try BuiltInImageCoder(bufferPool: nil).decode(png, options: options, cancellation: DecodeCancellation(),
                                                                   statistics: &statistics)
        XCTAssertEqual(image.width, 6)
        XCTAssertEqual(statistics.codecSize, PixelSize(width: 12, height: 8))
        XCTAssertGreaterThan(statistics.peakBytes, 0)
    }

    func testCodersAddedWhileDecodesRunAreSafe() {
        let coders = ImageCodersManager()
        let png = self.png
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            if i % 4 == 0 {
                let coder = StubCoder("TOY\(i)")
                coders.add(coder)
                if i % 8 == 0 { coders.remove(coder) }
            } else {
                XCTAssertEqual(try? coders.decode(png).width, 12)
            }
        }
        XCTAssertEqual(coders.coders.count, 1 + 25)
    }
}
