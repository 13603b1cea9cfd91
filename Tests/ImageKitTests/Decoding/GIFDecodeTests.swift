import ImageKit
import XCTest

final class GIFDecodeTests: XCTestCase {
    private let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0, 10, 20, 30, 200, 100, 50]

    private func indices(_ w: Int, _ h: Int, seed: Int) -> [UInt8] {
        (0..<(w * h)).map { (i: Int) -> UInt8 in UInt8((i * 7 + seed) % 6) }
    }

    /// The canvas each frame must produce, composited independently of the decoder:
    /// transparent start, disposal of the previous image applied before drawing.
    private func expectedFrames(_ gif: GIFWriter) -> [[UInt8]] {
        let w = gif.width, h = gif.height
        var canvas = [UInt8](repeating: 0, count: w * h * 4)
        var frames: [[UInt8]] = []
        var previous: (GIFWriter.Frame, [UInt8])?
        for f in gif.frames {
            if let (p, before) = previous {
                for y in max(0, p.top)..<min(h, p.top + p.height) {
                    for x in max(0, p.left)..<min(w, p.left + p.width) {
                        let i = (y * w + x) * 4
                        if p.disposal == 2 { canvas.replaceSubrange(i..<(i + 4), with: [0, 0, 0, 0]) }
                        if p.disposal == 3 { canvas.replaceSubrange(i..<(i + 4), with: before[i..<(i + 4)]) }
                    }
                }
            }
            let before = canvas
            let pal = f.localPalette ?? gif.globalPalette!
            for y in 0..<f.height where f.top + y < h {
                for x in 0..<f.width where f.left + x < w {
                    let index = Int(f.indices[y * f.width + x])
                    if index == f.transparentIndex { continue }
                    let i = ((f.top + y) * w + f.left + x) * 4
                    let rgb = index * 3 + 2 < pal.count ? Array(pal[(index * 3)..<(index * 3 + 3)]) : [0, 0, 0]
                    canvas.replaceSubrange(i..<(i + 4), with: rgb + [255])
                }
            }
            frames.append(canvas)
            previous = (f, before)
        }
        return frames
    }

    private func animation() -> GIFWriter {
        GIFWriter(width: 10, height: 8, globalPalette: palette, frames: [
            .init(width: 10, height: 8, indices: indices(10, 8, seed: 0), delayCentiseconds: 10),
            .init(left: 2, top: 1, width: 5, height: 4, indices: indices(5, 4, seed: 1), transparentIndex: 3,
                  disposal: 2, delayCentiseconds: 20),
            .init(left: 1, top: 3, width: 6, height: 5, indices: indices(6, 5, seed: 2),
                  localPalette: [9, 9, 9, 90, 90, 90, 180, 180, 180, 250, 250, 250, 1, 2, 3, 4, 5, 6],
                  disposal: 3, delayCentiseconds: 0, interlaced: true),
            .init(left: 7, top: 5, width: 6, height: 6, indices: indices(6, 6, seed: 3), transparentIndex: 0,
                  disposal: 1, delayCentiseconds: 7),
            .init(left: 0, top: 0, width: 3, height: 3, indices: indices(3, 3, seed: 4), transparentIndex: 5,
                  delayCentiseconds: 5),
        ], loopCount: 3)
    }

    func testAllFramesAreCompositedWithDisposalAndDelays() throws {
        let gif = animation()
        let image = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(gif.encode())
        let expected = expectedFrames(gif)
        XCTAssertEqual(image.frameCount, 5)
        XCTAssertEqual(image.width, 10)
        XCTAssertEqual(image.height, 8)
        XCTAssertEqual(image.frameDelays, [100, 200, 0, 70, 50])
        XCTAssertEqual(image.loopCount, 3)
        for f in 0..<5 {
            XCTAssertEqual(image.packedPixels(frame: f), expected[f], "frame \(f)")
        }
    }

    func testFirstFrameByDefault() throws {
        let gif = animation()
        let image = try ImageDecoder().decode(gif.encode())
        XCTAssertEqual(image.frameCount, 1)
        XCTAssertEqual(image.packedPixels(), expectedFrames(gif)[0])
        XCTAssertEqual(try ImageDecoder.info(gif.encode()).frameCount, 5)
    }

    func testTransparencyInterlaceAndSmallFirstImage() throws {
        for interlaced in [false, true] {
            let gif = GIFWriter(width: 9, height: 11, globalPalette: palette, frames: [
                .init(left: 1, top: 2, width: 7, height: 9, indices: indices(7, 9, seed: 5), transparentIndex: 2,
                      interlaced: interlaced),
            ])
            let image = try ImageDecoder().decode(gif.encode())
            XCTAssertEqual(image.packedPixels(), expectedFrames(gif)[0], "interlaced \(interlaced)")
            XCTAssertFalse(image.isOpaque)
        }
        let opaque = GIFWriter(width: 4, height: 4, globalPalette: palette, frames: [
            .init(width: 4, height: 4, indices: indices(4, 4, seed: 1)),
        ])
        XCTAssertTrue(try ImageDecoder().decode(opaque.encode()).isOpaque)
    }

    func testImagesOutsideTheScreenAreClipped() throws {
        let gif = GIFWriter(width: 4, height: 4, globalPalette: palette, frames: [
            .init(left: 2, top: 3, width: 5, height: 5, indices: indices(5, 5, seed: 1)),
            .init(left: 9, top: 9, width: 2, height: 2, indices: indices(2, 2, seed: 2)),
        ])
        let image = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(gif.encode())
        let expected = expectedFrames(gif)
        XCTAssertEqual(image.packedPixels(frame: 0), expected[0])
        XCTAssertEqual(image.packedPixels(frame: 1), expected[1])
    }

    func testBadDataFailsCleanly() {
        let bytes = animation().encode()
        // Truncated in the middle of image data.
        XCTAssertThrowsError(try ImageDecoder().decode(Array(bytes[0..<60]))) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .truncated, "\(error)")
        }
        // A code beyond the next free table slot.
        var invalid = GIFWriter(width: 2, height: 2, globalPalette: palette,
                                frames: [.init(width: 2, height: 2, indices: [0, 1, 2, 3])]).encode()
        let start = invalid.indices.first { invalid[$0] == 0x2C }! + 10
        // Replace the data with: clear (256), then code 300 (not yet defined), end.
        let codes = [256, 300, 257]
        var acc = 0, count = 0
        var data: [UInt8] = []
        for c in codes {
            acc |= c << count
            count += 9
            while count >= 8 {
                data.append(UInt8(acc & 0xFF))
                acc >>= 8
                count -= 8
            }
        }
        if count > 0 { data.append(UInt8(acc & 0xFF)) }
        invalid = Array(invalid[0...start]) + [UInt8(data.count)] + data + [0, 0x3B]
        XCTAssertThrowsError(try ImageDecoder().decode(invalid)) { error in
            guard let e = error as? ImageKitError, e.code == .corrupt else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("LZW"), m)
        }
        // Random damage never crashes.
        for seed in 0..<300 {
            var damaged = bytes
            var rng = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<3 {
                rng = rng &* 6_364_136_223_846_793_005 &+ 1
                damaged[13 + Int(rng >> 33) % (damaged.count - 13)] = UInt8(truncatingIfNeeded: rng >> 17)
            }
            _ = try? ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(damaged)
        }
    }

    func testFrameLimit() {
        XCTAssertThrowsError(try ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxFrames: 3), firstFrameOnly: false))
            .decode(animation().encode())) { error in
            guard let e = error as? ImageKitError, e.code == .limitExceeded else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("5 frames"), m)
        }
    }
}
