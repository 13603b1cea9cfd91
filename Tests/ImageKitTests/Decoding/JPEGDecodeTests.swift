import CAnchors
import ImageKit
import XCTest

final class JPEGDecodeTests: XCTestCase {
    private let w = 67, h = 45

    private func encode(_ pixels: [UInt8], components: Int32, ycck: Bool = false, progressive: Bool = false,
                        arithmetic: Bool = false, restartRows: Int32 = 0, sampling: (Int32, Int32) = (2, 2)) -> [UInt8] {
        var settings = anchors_jpeg_settings(
            components: components, ycck: ycck ? 1 : 0, quality: 88, progressive: progressive ? 1 : 0,
            arithmetic: arithmetic ? 1 : 0, restart_rows: restartRows, h_samp: sampling.0, v_samp: sampling.1)
        return anchorBytes { out, size in
            anchors_encode_jpeg_libjpeg(pixels, Int32(w), Int32(h), &settings, out, size)
        }!
    }

    private func rgb(_ rgba: [UInt8]) -> [UInt8] {
        stride(from: 0, to: rgba.count, by: 4).flatMap { rgba[$0..<($0 + 3)] }
    }

    /// Our decode must equal bare TurboJPEG's (default IDCT, fancy upsampling) exactly.
    private func assertMatchesTurbo(_ jpeg: [UInt8], _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let image = try ImageDecoder().decode(jpeg)
        let reference = try XCTUnwrap(turboDecode(jpeg), label, file: file, line: line)
        XCTAssertEqual(image.width, reference.width, label, file: file, line: line)
        XCTAssertEqual(image.height, reference.height, label, file: file, line: line)
        XCTAssertTrue(image.packedPixels() == reference.pixels, "\(label): pixels differ from TurboJPEG", file: file, line: line)
        XCTAssertTrue(image.isOpaque, label, file: file, line: line)
        XCTAssertEqual(image.sourceFormat, .jpeg, label, file: file, line: line)
    }

    func testBaselineProgressiveArithmeticRestartAndSampling() throws {
        let px = rgb(Pixels.pattern(width: w, height: h))
        try assertMatchesTurbo(encode(px, components: 3), "baseline 4:2:0")
        try assertMatchesTurbo(encode(px, components: 3, sampling: (1, 1)), "baseline 4:4:4")
        try assertMatchesTurbo(encode(px, components: 3, sampling: (2, 1)), "baseline 4:2:2")
        try assertMatchesTurbo(encode(px, components: 3, progressive: true), "progressive")
        try assertMatchesTurbo(encode(px, components: 3, arithmetic: true), "arithmetic")
        try assertMatchesTurbo(encode(px, components: 3, progressive: true, arithmetic: true), "progressive arithmetic")
        try assertMatchesTurbo(encode(px, components: 3, restartRows: 1), "restart markers")
        try assertMatchesTurbo(makeJPEG(Pixels.pattern(width: 301, height: 199), width: 301, height: 199), "TurboJPEG-made")
    }

    func testGreyscale() throws {
        let grey: [UInt8] = (0..<(w * h)).map { (i: Int) -> UInt8 in UInt8((i * 7) % 256) }
        let jpeg = encode(grey, components: 1)
        try assertMatchesTurbo(jpeg, "greyscale")
        let image = try ImageDecoder().decode(jpeg)
        let px = image.packedPixels()
        for i in stride(from: 0, to: px.count, by: 4) {
            XCTAssertTrue(px[i] == px[i + 1] && px[i] == px[i + 2] && px[i + 3] == 255)
        }
    }

    func testAdobeCMYKAndYCCKConvertWithInvertedInks() throws {
        let cmyk: [UInt8] = (0..<(w * h * 4)).map { (i: Int) -> UInt8 in
            let v: Int = i * 13 + (i / 4) % 7 * 30
            return UInt8(v % 256)
        }
        for ycck in [false, true] {
            let jpeg = encode(cmyk, components: 4, ycck: ycck)
            let image = try ImageDecoder().decode(jpeg)
            var out: UnsafeMutablePointer<UInt8>?
            var rw: Int32 = 0, rh: Int32 = 0
            XCTAssertEqual(anchors_decode_jpeg_cmyk(jpeg, jpeg.count, &out, &rw, &rh), 0)
            let stored = Array(UnsafeBufferPointer(start: out!, count: Int(rw * rh * 4)))
            anchors_free(out)
            // Adobe files store inverted inks: R = C*K/255 with the stored values.
            var expected: [UInt8] = []
            for i in stride(from: 0, to: stored.count, by: 4) {
                let k = Int(stored[i + 3])
                for c in 0..<3 { expected.append(UInt8((Int(stored[i + c]) * k + 127) / 255)) }
                expected.append(255)
            }
            XCTAssertTrue(image.packedPixels() == expected, ycck ? "YCCK" : "CMYK")
        }
    }

    /// An APP1 segment holding only an orientation tag.
    private func exifSegment(orientation: UInt16, bigEndian: Bool) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? be16(v) : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? be32(v) : be32(v).reversed() }
        var tiff: [UInt8] = bigEndian ? Array("MM".utf8) : Array("II".utf8)
        tiff += u16(42) + u32(8) + u16(1)
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0] + u32(0)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return [0xFF, 0xE1] + be16(UInt16(payload.count + 2)) + payload
    }

    func testExifOrientationIsAppliedByDefaultAndCanBeKept() throws {
        let plain = makeJPEG(Pixels.pattern(width: 37, height: 23), width: 37, height: 23, subsampling: 444)
        let stored = try ImageDecoder().decode(plain)
        for orientation in 1...8 {
            for bigEndian in [false, true] {
                let jpeg = Array(plain[0..<2]) + exifSegment(orientation: UInt16(orientation), bigEndian: bigEndian) + plain[2...]
                XCTAssertEqual(try ImageDecoder.info(jpeg).orientation, orientation)
                let image = try ImageDecoder().decode(jpeg)
                let expected = Pixels.oriented(stored.packedPixels(), width: 37, height: 23, orientation: orientation)
                XCTAssertEqual(image.width, expected.width, "orientation \(orientation)")
                XCTAssertEqual(image.height, expected.height, "orientation \(orientation)")
                XCTAssertTrue(image.packedPixels() == expected.pixels, "orientation \(orientation)")
                XCTAssertEqual(image.orientation, orientation)
                XCTAssertEqual(image.isOrientationApplied, orientation != 1)

                let raw = try ImageDecoder(options: DecodeOptions(applyOrientation: false)).decode(jpeg)
                XCTAssertEqual(raw.width, 37)
                XCTAssertFalse(raw.isOrientationApplied)
                XCTAssertTrue(raw.packedPixels() == stored.packedPixels())
            }
        }
    }

    func testTwelveBitAndLosslessAreClearlyUnsupported() throws {
        let jpeg = makeJPEG(Pixels.pattern(width: 16, height: 16), width: 16, height: 16)
        let sof = try XCTUnwrap(jpeg.indices.first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        var twelve = jpeg
        twelve[sof + 4] = 12
        XCTAssertThrowsError(try ImageDecoder().decode(twelve)) { error in
            guard let e = error as? ImageKitError, e.code == .unsupportedFeature else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("12-bit"), m)
        }
        XCTAssertEqual(try ImageDecoder.info(twelve).bitDepth, 12)
        var lossless = jpeg
        lossless[sof + 1] = 0xC3
        XCTAssertThrowsError(try ImageDecoder().decode(lossless)) { error in
            guard let e = error as? ImageKitError, e.code == .unsupportedFeature else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("lossless"), m)
        }
    }

    func testTruncatedAndCorruptDataFailCleanly() {
        let jpeg = makeJPEG(Pixels.pattern(width: 120, height: 80), width: 120, height: 80)
        for cut in [3, 200, jpeg.count / 2, jpeg.count - 10] {
            XCTAssertThrowsError(try ImageDecoder().decode(Array(jpeg[0..<cut])), "cut \(cut)")
        }
        let progressive = makeJPEG(Pixels.pattern(width: 120, height: 80), width: 120, height: 80, progressive: true)
        XCTAssertThrowsError(try ImageDecoder().decode(Array(progressive[0..<(progressive.count * 2 / 3)]))) { error in
            XCTAssertEqual((error as? ImageKitError)?.code, .truncated, "\(error)")
        }
        // Random damage must never crash; it either decodes or fails with an error.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var damaged = jpeg
            for _ in 0..<4 { damaged[Int.random(in: 2..<damaged.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            _ = try? ImageDecoder().decode(damaged)
        }
    }

    func testPixelLimitNamesSizeAndLimit() {
        let jpeg = makeJPEG(Pixels.pattern(width: 64, height: 48), width: 64, height: 48)
        let decoder = ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxPixels: 1000)))
        XCTAssertThrowsError(try decoder.decode(jpeg)) { error in
            guard let e = error as? ImageKitError, e.code == .limitExceeded else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("64x48") && m.contains("1000"), m)
        }
    }
}
