import ImageKit
import XCTest

final class PNGDecodeTests: XCTestCase {
    /// Straight RGBA8 that a PNG with these samples must decode to.
    private func reference(_ png: PNGWriter) -> [UInt8] {
        let ch = png.colorType.channels
        let maxValue = (1 << png.bitDepth) - 1
        func to8(_ v: UInt16) -> UInt8 {
            png.bitDepth == 16 ? UInt8(v >> 8) : UInt8(Int(v) * 255 / maxValue)
        }
        var out: [UInt8] = []
        for p in 0..<(png.width * png.height) {
            let s = Array(png.samples[(p * ch)..<((p + 1) * ch)])
            switch png.colorType {
            case .gray:
                let key = png.trns.map { UInt16($0[0]) << 8 | UInt16($0[1]) }
                out += [to8(s[0]), to8(s[0]), to8(s[0]), key == s[0] ? 0 : 255]
            case .rgb:
                let t = png.trns
                let key = t.map { [UInt16($0[0]) << 8 | UInt16($0[1]), UInt16($0[2]) << 8 | UInt16($0[3]),
                                   UInt16($0[4]) << 8 | UInt16($0[5])] }
                out += [to8(s[0]), to8(s[1]), to8(s[2]), key == s ? 0 : 255]
            case .palette:
                let i = Int(s[0])
                let alpha = png.trns.flatMap { i < $0.count ? $0[i] : nil } ?? 255
                out += [png.palette[i * 3], png.palette[i * 3 + 1], png.palette[i * 3 + 2], alpha]
            case .grayAlpha:
                out += [to8(s[0]), to8(s[0]), to8(s[0]), to8(s[1])]
            case .rgba:
                out += [to8(s[0]), to8(s[1]), to8(s[2]), to8(s[3])]
            }
        }
        return out
    }

    private func samples(count: Int, bitDepth: Int, seed: Int) -> [UInt16] {
        var rng = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ 12345)
        let mask = UInt32((1 << bitDepth) - 1)
        return (0..<count).map { _ in
            rng = rng &* 1_664_525 &+ 1_013_904_223
            return UInt16((rng >> 8) & mask)
        }
    }

    private func assertDecodes(_ png: PNGWriter, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let image = try ImageDecoder().decode(png.encode())
            XCTAssertEqual(image.width, png.width, label, file: file, line: line)
            XCTAssertEqual(image.height, png.height, label, file: file, line: line)
            XCTAssertEqual(image.sourceFormat, .png, label, file: file, line: line)
            let expected = Pixels.premultiplied(reference(png))
            XCTAssertEqual(image.packedPixels(), expected, label, file: file, line: line)
            let opaque = stride(from: 3, to: expected.count, by: 4).allSatisfy { expected[$0] == 255 }
            XCTAssertEqual(image.isOpaque, opaque, label, file: file, line: line)
        } catch {
            XCTFail("\(label): \(error)", file: file, line: line)
        }
    }

    func testEveryColorTypeAndBitDepthPlainAndInterlaced() {
        let combos: [(PNGWriter.ColorType, [Int])] = [
            (.gray, [1, 2, 4, 8, 16]), (.rgb, [8, 16]), (.palette, [1, 2, 4, 8]),
            (.grayAlpha, [8, 16]), (.rgba, [8, 16]),
        ]
        for (type, depths) in combos {
            for depth in depths {
                for interlaced in [false, true] {
                    for (w, h) in [(13, 11), (1, 7), (9, 1), (3, 3)] {
                        var png = PNGWriter(width: w, height: h, colorType: type, bitDepth: depth,
                                            samples: samples(count: w * h * type.channels, bitDepth: depth, seed: w * 31 + depth))
                        png.interlaced = interlaced
                        if type == .palette {
                            png.palette = (0..<((1 << depth) * 3)).map { (i: Int) -> UInt8 in UInt8((i * 37 + 11) & 0xFF) }
                        }
                        assertDecodes(png, "type \(type) depth \(depth) interlaced \(interlaced) \(w)x\(h)")
                    }
                }
            }
        }
    }

    func testTransparencyChunks() {
        // Grey key (16-bit value in the chunk), at several depths.
        for depth in [1, 2, 4, 8, 16] {
            var png = PNGWriter(width: 8, height: 5, colorType: .gray, bitDepth: depth,
                                samples: samples(count: 40, bitDepth: depth, seed: depth))
            let key = png.samples[3]
            png.trns = be16(key)
            assertDecodes(png, "grey tRNS depth \(depth)")
        }
        // RGB key.
        for depth in [8, 16] {
            var png = PNGWriter(width: 6, height: 6, colorType: .rgb, bitDepth: depth,
                                samples: samples(count: 108, bitDepth: depth, seed: 7 + depth))
            png.samples.replaceSubrange(9..<12, with: png.samples[0..<3])
            png.trns = be16(png.samples[0]) + be16(png.samples[1]) + be16(png.samples[2])
            assertDecodes(png, "RGB tRNS depth \(depth)")
        }
        // Palette alpha, shorter than the palette.
        var png = PNGWriter(width: 16, height: 4, colorType: .palette, bitDepth: 4,
                            samples: (0..<64).map { (i: Int) -> UInt16 in UInt16(i % 16) })
        png.palette = (0..<48).map { (i: Int) -> UInt8 in UInt8(i * 5) }
        png.trns = [0, 64, 128, 200, 255, 1]
        png.interlaced = true
        assertDecodes(png, "palette tRNS")
    }

    func testSixteenBitSamplesAreTruncated() throws {
        let png = PNGWriter(width: 2, height: 1, colorType: .rgba, bitDepth: 16,
                            samples: [0x12FF, 0x8080, 0xFFFF, 0xFFFF, 0x0001, 0x00FF, 0x7F80, 0x8000])
        let image = try ImageDecoder().decode(png.encode())
        let a2 = 0x80
        XCTAssertEqual(image.packedPixels(), [0x12, 0x80, 0xFF, 0xFF, 0, 0, UInt8((0x7F * a2 + 127) / 255), 0x80])
    }

    func testAncillaryChunksDoNotChangePixels() {
        var png = PNGWriter(width: 5, height: 4, colorType: .rgb, bitDepth: 8,
                            samples: samples(count: 60, bitDepth: 8, seed: 3))
        png.chunksBeforeData = [("gAMA", be32(45455)), ("iCCP", Array("icc\0".utf8) + [0] + PNGWriter.zlibStored([1, 2, 3])),
                                ("tEXt", Array("Title\0test".utf8)), ("sRGB", [0])]
        png.chunksAfterData = [("zTXt", Array("k\0".utf8) + [0] + PNGWriter.zlibStored(Array(repeating: 65, count: 100)))]
        assertDecodes(png, "ancillary chunks")
    }

    func testAPNGDecodesItsDefaultImage() {
        var png = PNGWriter(width: 4, height: 4, colorType: .rgba, bitDepth: 8,
                            samples: samples(count: 64, bitDepth: 8, seed: 9))
        let fctl = be32(0) + be32(4) + be32(4) + be32(0) + be32(0) + be16(1) + be16(10) + [0, 0]
        png.chunksBeforeData = [("acTL", be32(2) + be32(0)), ("fcTL", fctl)]
        let second = be32(2) + be32(4) + be32(4) + be32(0) + be32(0) + be16(1) + be16(10) + [0, 0]
        png.chunksAfterData = [("fcTL", second), ("fdAT", be32(3) + PNGWriter.zlibStored([UInt8](repeating: 0, count: 20)))]
        assertDecodes(png, "APNG default image")
    }

    func testMissingIENDStillDecodes() {
        var png = PNGWriter(width: 3, height: 3, colorType: .gray, bitDepth: 8, samples: samples(count: 9, bitDepth: 8, seed: 1))
        png.omitEnd = true
        assertDecodes(png, "no IEND")
    }

    func testCRCErrorInCriticalChunkIsAnError() {
        let png = PNGWriter(width: 3, height: 3, colorType: .gray, bitDepth: 8, samples: samples(count: 9, bitDepth: 8, seed: 1))
        let bytes = png.encode()
        let idat = bytes.indices.first { Array(bytes[$0..<($0 + 4)]) == Array("IDAT".utf8) }!
        let length = Int(bytes[idat - 1]) | Int(bytes[idat - 2]) << 8
        var badCRC = bytes
        badCRC[idat + 4 + length] ^= 0xFF
        XCTAssertThrowsError(try ImageDecoder().decode(badCRC)) { error in
            guard let e = error as? ImageKitError, e.code == .corrupt else { return XCTFail("\(error)") }
            let message = e.message
            XCTAssertTrue(message.hasPrefix("PNG: ") && message.contains("CRC"), message)
        }
        // Damaged compressed data fails too, before its CRC is even checked.
        var badData = bytes
        badData[idat + 6] ^= 0xFF
        XCTAssertThrowsError(try ImageDecoder().decode(badData)) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .corrupt, "\(error)")
        }
    }

    func testTruncatedDataIsAnError() {
        let png = PNGWriter(width: 40, height: 40, colorType: .rgb, bitDepth: 8, samples: samples(count: 4800, bitDepth: 8, seed: 2))
        let bytes = png.encode()
        for cut in [40, bytes.count / 2, bytes.count - 30] {
            XCTAssertThrowsError(try ImageDecoder().decode(Array(bytes[0..<cut])), "cut at \(cut)") { error in
                XCTAssertEqual((error as? ImageKitError)?.code, ImageKitError.truncated("").code, "\(error)")
            }
        }
    }

    func testHugeDeclaredSizeFailsBeforeAllocating() throws {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += PNGWriter.chunk("IHDR", be32(100_000) + be32(100_000) + [8, 6, 0, 0, 0])
        bytes += PNGWriter.chunk("IDAT", PNGWriter.zlibStored([0, 0, 0, 0, 0]))
        bytes += PNGWriter.chunk("IEND", [])
        XCTAssertThrowsError(try ImageDecoder().decode(bytes)) { error in
            guard let e = error as? ImageKitError, e.code == .limitExceeded else { return XCTFail("\(error)") }
            let message = e.message
            XCTAssertTrue(message.contains("100000x100000"), message)
            XCTAssertTrue(message.contains("67108864"), message)
        }
    }
}
