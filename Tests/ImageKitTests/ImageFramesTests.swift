import ImageKit
import XCTest

/// ``Image/init(width:height:frames:delaysMilliseconds:loopCount:premultiplied:sourceFormat:limits:)``:
/// what a custom coder builds its images with.
final class ImageFramesTests: XCTestCase {
    func testFramesDelaysAndLoopCountRoundTrip() throws {
        let first = TestPixels.rgba(width: 9, height: 4, seed: 1)
        let second = TestPixels.rgba(width: 9, height: 4, seed: 2)
        let image = try Image(width: 9, height: 4, frames: [first, second], delaysMilliseconds: [40, 120],
                              loopCount: 3, sourceFormat: .gif)
        XCTAssertEqual(image.width, 9)
        XCTAssertEqual(image.height, 4)
        XCTAssertEqual(image.frameCount, 2)
        XCTAssertEqual(image.packedPixels(frame: 0), first)
        XCTAssertEqual(image.packedPixels(frame: 1), second)
        XCTAssertEqual(image.frameDelays, [40, 120])
        XCTAssertEqual(image.loopCount, 3)
        XCTAssertEqual(image.sourceFormat, .gif)
        XCTAssertEqual(image.bytesPerRow, 64, "rows padded to 64 bytes")
        XCTAssertEqual(image.cost, 64 * 4 * 2)
        XCTAssertTrue(image.isOpaque)
        XCTAssertEqual(image.sourceSize.width, 9)
        XCTAssertEqual(image.sourceSize.height, 4)
    }

    func testAStillImageMatchesThePackedInitialiser() throws {
        let pixels = TestPixels.rgba(width: 17, height: 3, opaque: false)
        let image = try Image(width: 17, height: 3, frames: [pixels])
        let reference = try Image(width: 17, height: 3, premultipliedRGBA: pixels)
        XCTAssertEqual(image.packedPixels(), reference.packedPixels())
        XCTAssertEqual(image.frameCount, 1)
        XCTAssertEqual(image.frameDelays, [0])
        XCTAssertEqual(image.loopCount, 0)
        XCTAssertEqual(image.sourceFormat, .unknown)
        XCTAssertFalse(image.isOpaque)
        XCTAssertEqual(image.isOpaque, reference.isOpaque)
    }

    func testOpacityCoversEveryFrame() throws {
        let opaque = TestPixels.rgba(width: 4, height: 4, seed: 1)
        var translucent = opaque
        translucent[4 * 4 * 4 - 1] = 254
        translucent[4 * 4 * 4 - 2] = min(translucent[4 * 4 * 4 - 2], 254)
        translucent[4 * 4 * 4 - 3] = min(translucent[4 * 4 * 4 - 3], 254)
        translucent[4 * 4 * 4 - 4] = min(translucent[4 * 4 * 4 - 4], 254)
        XCTAssertTrue(try Image(width: 4, height: 4, frames: [opaque, opaque]).isOpaque)
        XCTAssertFalse(try Image(width: 4, height: 4, frames: [opaque, translucent]).isOpaque,
                       "one pixel of the last frame's last row is translucent")
    }

    func testStraightPixelsArePremultiplied() throws {
        let straight: [UInt8] = [200, 100, 50, 128, 255, 255, 255, 0, 10, 20, 30, 255]
        let image = try Image(width: 3, height: 1, frames: [straight], premultiplied: false)
        XCTAssertEqual(image.packedPixels(), Pixels.premultiplied(straight))
        XCTAssertEqual(image.packedPixels(), [100, 50, 25, 128, 0, 0, 0, 0, 10, 20, 30, 255])
        XCTAssertFalse(image.isOpaque)
        let opaque = try Image(width: 1, height: 1, frames: [[1, 2, 3, 255]], premultiplied: false)
        XCTAssertTrue(opaque.isOpaque)
        XCTAssertEqual(opaque.packedPixels(), [1, 2, 3, 255])
    }

    func testInvalidArgumentsAreRefused() {
        let pixel: [UInt8] = [0, 0, 0, 255]
        let cases: [(String, () throws -> Image)] = [
            ("wrong byte count", { try Image(width: 2, height: 1, frames: [pixel]) }),
            ("zero width", { try Image(width: 0, height: 1, frames: [[]]) }),
            ("negative height", { try Image(width: 1, height: -1, frames: [pixel]) }),
            ("no frames", { try Image(width: 1, height: 1, frames: []) }),
            ("one frame of two wrong", { try Image(width: 1, height: 1, frames: [pixel, [0, 0, 0]]) }),
            ("delays for other frames", { try Image(width: 1, height: 1, frames: [pixel, pixel], delaysMilliseconds: [1]) }),
            ("negative delay", { try Image(width: 1, height: 1, frames: [pixel, pixel], delaysMilliseconds: [1, -1]) }),
            ("negative loop count", { try Image(width: 1, height: 1, frames: [pixel, pixel], loopCount: -1) }),
            ("a still with a loop count", { try Image(width: 1, height: 1, frames: [pixel], loopCount: 2) }),
            ("a still with a delay", { try Image(width: 1, height: 1, frames: [pixel], delaysMilliseconds: [10]) }),
            ("colour above alpha", { try Image(width: 1, height: 1, frames: [[200, 0, 0, 100]]) }),
        ]
        for (name, make) in cases {
            XCTAssertThrowsError(try make(), name) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, ImageKitError.invalidArgument("").code, name)
            }
        }
    }

    func testSizesPastTheLimitsAreRefusedBeforeAllocating() {
        let pixel: [UInt8] = [0, 0, 0, 255]
        let limits = DecodeLimits(maxPixels: 100, maxFrames: 2, maxMemoryBytes: 4096)
        let cases: [(String, () throws -> Image)] = [
            ("too many pixels", { try Image(width: 11, height: 10, frames: [[]], limits: limits) }),
            ("too many frames", { try Image(width: 1, height: 1, frames: [pixel, pixel, pixel], limits: limits) }),
            ("too much memory", { try Image(width: 1, height: 1, frames: [pixel, pixel],
                                            limits: DecodeLimits(maxMemoryBytes: 100)) }),
            // Would overflow Int if multiplied unchecked; the frames hold no bytes at all.
            ("overflowing size", { try Image(width: Int(UInt32.max), height: Int(UInt32.max), frames: [[]],
                                             limits: DecodeLimits(maxPixels: 0, maxMemoryBytes: 0)) }),
            ("overflowing memory", { try Image(width: 1 << 30, height: 1 << 30, frames: [[], []],
                                               limits: DecodeLimits(maxPixels: 0, maxMemoryBytes: 0)) }),
        ]
        for (name, make) in cases {
            XCTAssertThrowsError(try make(), name) { error in
                XCTAssertEqual((error as? ImageKitError)?.code, ImageKitError.limitExceeded("").code,
                               "\(name): \(error)")
            }
        }
    }
}
