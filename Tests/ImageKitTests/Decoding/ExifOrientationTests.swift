import CAnchors
import Foundation
import ImageKit
import XCTest

/// EXIF orientation in PNG (eXIf chunk) and WebP (EXIF chunk), applied as for JPEG.
final class ExifOrientationTests: XCTestCase {
    private var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/orientation")
    }

    /// A picture from expected.json: size and straight RGBA.
    private struct Picture: Decodable {
        var width: Int
        var height: Int
        var rgba: String

        var pixels: [UInt8] {
            var out: [UInt8] = []
            var chars = rgba.makeIterator()
            while let hi = chars.next(), let lo = chars.next() { out.append(UInt8(String([hi, lo]), radix: 16)!) }
            return out
        }
    }

    private struct Expected: Decodable {
        var stored: Picture
        var oriented: [String: Picture]
    }

    /// Files Pillow wrote (scripts/make_orientation_fixtures.py), against Pillow's own upright pixels.
    func testPillowFilesAreOrientedLikePillowAndKeptOnRequest() throws {
        let expected = try JSONDecoder().decode(
            Expected.self, from: Data(contentsOf: directory.appendingPathComponent("expected.json")))
        for orientation in 1...8 {
            for ext in ["png", "webp"] {
                let label = "\(ext) orientation \(orientation)"
                let file = try Data(contentsOf: directory.appendingPathComponent("orientation-\(orientation).\(ext)"))
                XCTAssertEqual(try ImageDecoder.info(file).orientation, orientation, label)

                let upright = try XCTUnwrap(expected.oriented[String(orientation)])
                let image = try ImageDecoder().decode(file)
                XCTAssertEqual(image.width, upright.width, label)
                XCTAssertEqual(image.height, upright.height, label)
                XCTAssertTrue(image.packedPixels() == upright.pixels, label)
                XCTAssertEqual(image.orientation, orientation, label)
                XCTAssertEqual(image.isOrientationApplied, orientation != 1, label)

                let raw = try ImageDecoder(options: DecodeOptions(applyOrientation: false)).decode(file)
                XCTAssertEqual(raw.width, expected.stored.width, label)
                XCTAssertEqual(raw.height, expected.stored.height, label)
                XCTAssertTrue(raw.packedPixels() == expected.stored.pixels, label)
                XCTAssertEqual(raw.orientation, orientation, label)
                XCTAssertFalse(raw.isOrientationApplied, label)
            }
        }
    }

    // MARK: - Files made here

    /// A TIFF block holding only an orientation tag (`value`, of TIFF type `type`).
    private func tiff(orientation value: UInt16, bigEndian: Bool, type: UInt16 = 3) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? be16(v) : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? be32(v) : be32(v).reversed() }
        var out: [UInt8] = bigEndian ? Array("MM".utf8) : Array("II".utf8)
        out += u16(42) + u32(8) + u16(1)
        out += u16(0x0112) + u16(type) + u32(1) + u16(value) + [0, 0] + u32(0)
        return out
    }

    private let width = 40, height = 20

    private var pattern: [UInt8] { Pixels.pattern(width: width, height: height) }

    /// An opaque PNG of `pattern` with an eXIf chunk before (or after) the image data.
    private func png(exif: [UInt8]?, afterData: Bool = false) -> [UInt8] {
        let rgb = pattern.enumerated().filter { $0.offset % 4 != 3 }.map { UInt16($0.element) }
        var writer = PNGWriter(width: width, height: height, colorType: .rgb, bitDepth: 8, samples: rgb)
        if let exif {
            if afterData { writer.chunksAfterData = [("eXIf", exif)] } else { writer.chunksBeforeData = [("eXIf", exif)] }
        }
        return writer.encode()
    }

    private func le32(_ v: UInt32) -> [UInt8] { be32(v).reversed() }

    /// An extended (VP8X) lossless WebP of `pattern` with an EXIF chunk after the image data;
    /// `flag` says whether VP8X announces it, `declaredSize` overrides the chunk's size field.
    private func webp(exif: [UInt8]?, flag: Bool = true, declaredSize: UInt32? = nil) -> [UInt8] {
        let simple = makeWebP(pattern, width: width, height: height, quality: -1)
        XCTAssertEqual(Array(simple[12..<16]), Array("VP8L".utf8))
        var chunks = Array("VP8X".utf8) + le32(10) + [exif != nil && flag ? 0x08 : 0, 0, 0, 0]
        chunks += [UInt8(width - 1), 0, 0, UInt8(height - 1), 0, 0]
        chunks += simple[12...]
        if let exif {
            chunks += Array("EXIF".utf8) + le32(declaredSize ?? UInt32(exif.count)) + exif
            if exif.count % 2 == 1 { chunks.append(0) }
        }
        return Array("RIFF".utf8) + le32(UInt32(chunks.count + 4)) + Array("WEBP".utf8) + chunks
    }

    /// Both byte orders, and the "Exif\0\0" prefix some writers put before the TIFF header.
    func testByteOrdersAndTheExifPrefixAreRead() throws {
        let stored = try ImageDecoder().decode(png(exif: nil))
        XCTAssertTrue(stored.packedPixels() == pattern)
        let expected = Pixels.oriented(pattern, width: width, height: height, orientation: 8)
        for bigEndian in [false, true] {
            for prefix in [[], Array("Exif".utf8) + [0, 0]] {
                let exif = prefix + tiff(orientation: 8, bigEndian: bigEndian)
                for (name, file) in [("png", png(exif: exif)), ("webp", webp(exif: exif))] {
                    let label = "\(name) big-endian \(bigEndian) prefix \(!prefix.isEmpty)"
                    XCTAssertEqual(try ImageDecoder.info(file).orientation, 8, label)
                    let image = try ImageDecoder().decode(file)
                    XCTAssertEqual(image.width, height, label)
                    XCTAssertEqual(image.height, width, label)
                    XCTAssertTrue(image.packedPixels() == expected.pixels, label)
                }
            }
        }
    }

    /// The thumbnail box is for the upright picture: a 40x20 picture stored for a quarter turn
    /// (upright 20x40) fits a 10x20 box at 10x20, and its pixels are the stored picture's
    /// 20x10 thumbnail turned.
    func testThumbnailsFitTheBoxAfterOrientation() throws {
        let box = DecodeOptions(thumbnailPixelSize: PixelSize(width: 10, height: 20))
        let turned = DecodeOptions(thumbnailPixelSize: PixelSize(width: 20, height: 10))
        for orientation in [6, 8] {
            let exif = tiff(orientation: UInt16(orientation), bigEndian: false)
            let files = [("png", png(exif: exif), png(exif: nil)), ("webp", webp(exif: exif), webp(exif: nil))]
            for (name, file, plain) in files {
                let label = "\(name) orientation \(orientation)"
                let thumbnail = try ImageDecoder(options: box).decode(file)
                XCTAssertEqual(thumbnail.width, 10, label)
                XCTAssertEqual(thumbnail.height, 20, label)
                let storedThumbnail = try ImageDecoder(options: turned).decode(plain)
                XCTAssertEqual(storedThumbnail.width, 20, label)
                let expected = Pixels.oriented(storedThumbnail.packedPixels(), width: 20, height: 10,
                                               orientation: orientation)
                XCTAssertTrue(thumbnail.packedPixels() == expected.pixels, label)
            }
        }
    }

    /// Every frame of an animated WebP is oriented.
    func testAnimatedWebPFramesAreAllOriented() throws {
        let frames = [pattern, Pixels.pattern(width: width, height: height, seed: 90)]
        let animation = frames[0].withUnsafeBufferPointer { a in
            frames[1].withUnsafeBufferPointer { b in
                anchorBytes { out, size in
                    anchors_encode_webp_animation([a.baseAddress, b.baseAddress], 2, Int32(width), Int32(height), 50, out, size)
                }
            }
        }
        var file = try XCTUnwrap(animation)
        XCTAssertEqual(Array(file[12..<16]), Array("VP8X".utf8))
        file[20] |= 0x08
        file += Array("EXIF".utf8) + le32(26) + tiff(orientation: 6, bigEndian: false)
        file.replaceSubrange(4..<8, with: le32(UInt32(file.count - 8)))

        XCTAssertEqual(try ImageDecoder.info(file).orientation, 6)
        let image = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(file)
        XCTAssertEqual(image.frameCount, 2)
        XCTAssertEqual(image.width, height)
        for f in 0..<2 {
            let expected = Pixels.oriented(frames[f], width: width, height: height, orientation: 6)
            XCTAssertTrue(image.packedPixels(frame: f) == expected.pixels, "frame \(f)")
        }
    }

    /// Broken EXIF is no orientation (1): no error, the stored pixels.
    func testMalformedExifReadsAsOrientationOne() throws {
        let good = tiff(orientation: 6, bigEndian: true)
        var badOffset = good
        badOffset[7] = 200 // IFD beyond the block
        var lowOffset = good
        lowOffset[7] = 4 // IFD inside the header
        var bigCount = good
        bigCount[9] = 200 // more entries than the block holds; the tag is then not among them
        bigCount.removeLast(14)
        var badMagic = good
        badMagic[3] = 43
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("header only", Array(good[0..<8])),
            ("truncated IFD", Array(good[0..<16])),
            ("IFD offset beyond the end", badOffset),
            ("IFD offset in the header", lowOffset),
            ("entry count beyond the end", bigCount),
            ("not 42", badMagic),
            ("byte order XX", Array("XX".utf8) + good[2...]),
            ("orientation 0", tiff(orientation: 0, bigEndian: true)),
            ("orientation 9", tiff(orientation: 9, bigEndian: false)),
            ("orientation as LONG", tiff(orientation: 6, bigEndian: true, type: 4)),
            ("prefix only", Array("Exif".utf8) + [0, 0]),
        ]
        var files = cases.flatMap { name, exif in [("png " + name, png(exif: exif)), ("webp " + name, webp(exif: exif))] }
        files += [
            ("png eXIf after IDAT", png(exif: good, afterData: true)),
            ("webp EXIF not announced in VP8X", webp(exif: good, flag: false)),
            ("webp EXIF size beyond the file", webp(exif: good, declaredSize: 1000)),
        ]
        for (label, file) in files {
            XCTAssertEqual(try ImageDecoder.info(file).orientation, 1, label)
            let image = try ImageDecoder().decode(file)
            XCTAssertEqual(image.orientation, 1, label)
            XCTAssertFalse(image.isOrientationApplied, label)
            XCTAssertEqual(image.width, width, label)
            XCTAssertTrue(image.packedPixels() == pattern, label)
        }
    }
}
