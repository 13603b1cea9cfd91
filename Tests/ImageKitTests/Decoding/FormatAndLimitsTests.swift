import CImageCore
import ImageKit
import XCTest

final class FormatAndLimitsTests: XCTestCase {
    func testSignatures() {
        let cases: [([UInt8], ImageFormat)] = [
            ([0xFF, 0xD8, 0xFF, 0xE0], .jpeg),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], .png),
            (Array("GIF87a".utf8), .gif), (Array("GIF89a".utf8), .gif),
            (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
            (Array("II*\0".utf8), .tiff), (Array("MM\0*".utf8), .tiff),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8), .heic),
            ([0, 0, 0, 0x1C] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1miafavif".utf8), .avif),
            ([0, 0, 0, 0x14] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1".utf8), .heif),
            ([0xFF, 0x0A], .jxl), ([0, 0, 0, 0x0C] + Array("JXL \r\n".utf8) + [0x87, 0x0A], .jxl),
            (Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0], .bmp),
            ([0, 0, 1, 0, 1, 0, 16, 16, 0, 0] + [UInt8](repeating: 0, count: 12), .ico),
            (Array("<?xml version=\"1.0\"?>\n<!-- c -->\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8), .svg),
            (Array("GIF88a".utf8), .unknown), (Array("RIFF\0\0\0\0WAVE".utf8), .unknown),
            (Array("<html><svg/></html>".utf8), .unknown), ([], .unknown), ([0xFF, 0xD8], .unknown),
        ]
        for (bytes, format) in cases {
            XCTAssertEqual(ImageFormat(detecting: bytes), format, "\(bytes.prefix(12))")
        }
    }

    func testOnlyTheDecodedFormatsAreDecodable() {
        XCTAssertEqual(ImageFormat.allCases.filter(\.isDecodable), [.jpeg, .png, .gif, .webp, .heic, .heif, .avif, .jxl])
    }

    func testUnsupportedFormatsSaySo() {
        let tiff = Array("II*\0".utf8) + [UInt8](repeating: 0, count: 60)
        XCTAssertThrowsError(try ImageDecoder().decode(tiff)) { error in
            XCTAssertEqual(error as? ImageKitError, .unsupportedFormat(.tiff, "unsupported format: TIFF"))
        }
        XCTAssertThrowsError(try ImageDecoder().decode(Array("hello, world".utf8))) { error in
            guard (error as? ImageKitError)?.code == .unknownFormat else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try ImageDecoder().decode([UInt8]())) { error in
            guard (error as? ImageKitError)?.code == .invalidArgument else { return XCTFail("\(error)") }
        }
    }

    func testInputAndMemoryLimits() throws {
        let png = PNGWriter(width: 100, height: 100, colorType: .rgb, bitDepth: 8,
                            samples: [UInt16](repeating: 7, count: 30000)).encode()
        XCTAssertThrowsError(try ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxInputBytes: 1000))).decode(png)) { error in
            guard let e = error as? ImageKitError, e.code == .limitExceeded else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("1000 bytes"), m)
        }
        XCTAssertThrowsError(try ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxMemoryBytes: 20_000))).decode(png)) { error in
            guard let e = error as? ImageKitError, e.code == .limitExceeded else { return XCTFail("\(error)") }
            let m = e.message
            XCTAssertTrue(m.contains("memory limit"), m)
        }
        XCTAssertNoThrow(try ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxMemoryBytes: 200_000))).decode(png))
        let defaults = DecodeLimits()
        XCTAssertEqual(defaults.maxPixels, 64 * 1024 * 1024)
        XCTAssertEqual(defaults.maxFrames, 1000)
    }

    func testProbeReadsHeadersOnly() throws {
        let png = PNGWriter(width: 300, height: 200, colorType: .palette, bitDepth: 4,
                            samples: [UInt16](repeating: 1, count: 60000), palette: [1, 2, 3, 4, 5, 6],
                            trns: [0], interlaced: true).encode()
        let info = try ImageDecoder.info(png)
        XCTAssertEqual(info.format, .png)
        XCTAssertEqual([info.width, info.height, info.frameCount, info.bitDepth, info.orientation], [300, 200, 1, 4, 1])
        XCTAssertTrue(info.hasAlpha)
        XCTAssertTrue(info.isProgressive)
        let jpeg = makeJPEG(Pixels.pattern(width: 33, height: 17), width: 33, height: 17, progressive: true)
        let j = try ImageDecoder.info(jpeg)
        XCTAssertEqual([j.width, j.height, j.bitDepth], [33, 17, 8])
        XCTAssertTrue(j.isProgressive)
        XCTAssertEqual(j.format, .jpeg)
    }

    func testPremultiplyIsExactForEveryInput() {
        var row = [UInt8](repeating: 0, count: 65536 * 4)
        for c in 0..<256 {
            for a in 0..<256 {
                let i = (c * 256 + a) * 4
                row[i] = UInt8(c); row[i + 1] = UInt8(255 - c); row[i + 2] = UInt8(c); row[i + 3] = UInt8(a)
            }
        }
        XCTAssertEqual(ic_premultiply_row(&row, 65536), 0)
        for c in 0..<256 {
            for a in 0..<256 {
                let i = (c * 256 + a) * 4
                XCTAssertEqual(Int(row[i]), (c * a + 127) / 255)
                XCTAssertEqual(Int(row[i + 1]), ((255 - c) * a + 127) / 255)
                XCTAssertEqual(Int(row[i + 3]), a)
            }
        }
        var opaque = [UInt8](repeating: 200, count: 40)
        for i in stride(from: 3, to: 40, by: 4) { opaque[i] = 255 }
        XCTAssertEqual(ic_premultiply_row(&opaque, 10), 1)
    }

    func testUnpremultiplyRoundTripsEveryValidPixel() {
        var pm: [UInt8] = []
        for a in 0..<256 {
            for p in 0...a { pm += [UInt8(p), UInt8(a / 2), 0, UInt8(a)] }
        }
        var straight = [UInt8](repeating: 0, count: pm.count)
        ic_unpremultiply_row(&straight, pm, pm.count / 4)
        ic_premultiply_row(&straight, straight.count / 4)
        for i in stride(from: 0, to: pm.count, by: 4) where pm[i + 3] > 0 {
            XCTAssertEqual(Array(straight[i..<(i + 4)]), Array(pm[i..<(i + 4)]))
        }
    }
}
