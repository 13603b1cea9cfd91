import ImageKit
import XCTest

final class ImageTests: XCTestCase {
    func testLayoutAndAccessors() throws {
        let px = Pixels.premultiplied(Pixels.pattern(width: 17, height: 5, alpha: true))
        let image = try Image(width: 17, height: 5, premultipliedRGBA: px)
        XCTAssertEqual(image.width, 17)
        XCTAssertEqual(image.height, 5)
        XCTAssertEqual(image.bytesPerRow % 64, 0)
        XCTAssertGreaterThanOrEqual(image.bytesPerRow, 17 * 4)
        XCTAssertEqual(image.frameCount, 1)
        XCTAssertEqual(image.frameDelays, [0])
        XCTAssertEqual(image.cost, image.bytesPerRow * 5)
        XCTAssertEqual(image.packedPixels(), px)
        XCTAssertFalse(image.isOpaque)
        image.withUnsafeBytes { raw in
            XCTAssertEqual(raw.count, image.bytesPerRow * 5)
            XCTAssertEqual(Int(bitPattern: raw.baseAddress) % 64, 0)
            XCTAssertEqual(raw[image.bytesPerRow * 2 + 4 * 3], px[(2 * 17 + 3) * 4])
        }
        XCTAssertThrowsError(try Image(width: 2, height: 2, premultipliedRGBA: [1, 2, 3]))
    }

    func testDecodingFromDataArrayAndBufferAgree() throws {
        let png = PNGWriter(width: 9, height: 4, colorType: .rgba, bitDepth: 8,
                            samples: Pixels.pattern(width: 9, height: 4, alpha: true).map(UInt16.init)).encode()
        let decoder = ImageDecoder()
        let a = try decoder.decode(png).packedPixels()
        let b = try decoder.decode(Data(png)).packedPixels()
        let c = try png.withUnsafeBytes { try decoder.decode($0) }.packedPixels()
        XCTAssertEqual(a, b)
        XCTAssertEqual(a, c)
    }

    func testImagesAreUsableAcrossTasks() async throws {
        let png = PNGWriter(width: 8, height: 8, colorType: .gray, bitDepth: 8,
                            samples: (0..<64).map { (i: Int) -> UInt16 in UInt16(i * 3) }).encode()
        let image = try ImageDecoder().decode(png)
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { image.packedPixels().reduce(0) { $0 + Int($1) } }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(Set(sums).count, 1)
    }
}
