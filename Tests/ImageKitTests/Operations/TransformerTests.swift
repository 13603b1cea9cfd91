import ImageKit
import XCTest

/// The built-in transformers against a reference rearrangement written here, and their keys.
final class TransformerTests: XCTestCase {
    /// A 3x2 image whose every pixel is distinct: pixel (x, y) is (10x + y, 100 + y, x, 255).
    private func grid() throws -> Image {
        var px: [UInt8] = []
        for y in 0..<2 {
            for x in 0..<3 { px += [UInt8(10 * x + y), UInt8(100 + y), UInt8(x), 255] }
        }
        return try Image(width: 3, height: 2, premultipliedRGBA: px)
    }

    /// Pixel (x, y) of `image` as its red value (10x + y of the source pixel it came from).
    private func reds(_ image: Image) -> [[Int]] {
        let px = image.packedPixels()
        return (0..<image.height).map { y in (0..<image.width).map { x in Int(px[(y * image.width + x) * 4]) } }
    }

    func testRotation() throws {
        let src = try grid()
        XCTAssertEqual(reds(src), [[0, 10, 20], [1, 11, 21]])
        XCTAssertEqual(reds(try RotationTransformer(quarterTurns: 1).transform(src)), [[1, 0], [11, 10], [21, 20]])
        XCTAssertEqual(reds(try RotationTransformer(quarterTurns: 2).transform(src)), [[21, 11, 1], [20, 10, 0]])
        XCTAssertEqual(reds(try RotationTransformer(quarterTurns: 3).transform(src)), [[20, 21], [10, 11], [0, 1]])
        XCTAssertEqual(reds(try RotationTransformer(quarterTurns: -1).transform(src)), [[20, 21], [10, 11], [0, 1]])
        XCTAssertEqual(reds(try RotationTransformer(quarterTurns: 4).transform(src)), reds(src))
        XCTAssertEqual(RotationTransformer(quarterTurns: -1).key, "rotate(270)")
        XCTAssertEqual(RotationTransformer(quarterTurns: 5), RotationTransformer(quarterTurns: 1))
    }

    func testFlipping() throws {
        let src = try grid()
        XCTAssertEqual(reds(try FlippingTransformer(horizontal: true).transform(src)), [[20, 10, 0], [21, 11, 1]])
        XCTAssertEqual(reds(try FlippingTransformer(vertical: true).transform(src)), [[1, 11, 21], [0, 10, 20]])
        XCTAssertEqual(reds(try FlippingTransformer(horizontal: true, vertical: true).transform(src)),
                       [[21, 11, 1], [20, 10, 0]])
        XCTAssertEqual(reds(try FlippingTransformer().transform(src)), reds(src))
        XCTAssertEqual(FlippingTransformer(horizontal: true, vertical: true).key, "flip(hv)")
    }

    func testCroppingAndResizing() throws {
        let src = try grid()
        let crop = CroppingTransformer(rect: PixelRect(x: 1, y: 1, width: 2, height: 1))
        XCTAssertEqual(reds(try crop.transform(src)), [[11, 21]])
        XCTAssertEqual(crop.key, "crop(1,1,2x1)")
        XCTAssertThrowsError(try CroppingTransformer(rect: PixelRect(x: 2, y: 0, width: 2, height: 1)).transform(src))
        let resize = ResizingTransformer(size: PixelSize(width: 6, height: 6), mode: .stretch)
        let big = try resize.transform(src)
        XCTAssertEqual([big.width, big.height], [6, 6])
        XCTAssertEqual(resize.key, "resize(6x6,stretch)")
        XCTAssertEqual(ResizingTransformer(size: PixelSize(square: 4), allowUpscale: false).key, "resize(4x4,fit,noupscale)")
        XCTAssertNotEqual(ResizingTransformer(size: PixelSize(square: 4), mode: .fill).key,
                          ResizingTransformer(size: PixelSize(square: 4), mode: .fit).key)
    }

    func testPipelineAndCustomTransformers() throws {
        struct Invert: ImageTransformer {
            var key: String { "invert" }
            func transform(_ image: Image) throws -> Image {
                try Image(width: image.width, height: image.height,
                          premultipliedRGBA: image.packedPixels().enumerated().map { $0.offset % 4 == 3 ? $0.element : 255 - $0.element })
            }
        }
        let src = try grid()
        let pipeline = PipelineTransformer([RotationTransformer(quarterTurns: 1), Invert(), FlippingTransformer(horizontal: true)])
        XCTAssertEqual(pipeline.key, "rotate(90)|invert|flip(h)")
        XCTAssertEqual(reds(try pipeline.transform(src)), [[255, 254], [245, 244], [235, 234]])
        XCTAssertEqual(reds(try PipelineTransformer([]).transform(src)), reds(src))
    }
}
