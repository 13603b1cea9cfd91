import CImageCore
import Foundation
import ImageKit
import XCTest

/// Embedded ICC profiles: conversion to sRGB against libvips's references, the raw mode,
/// profiles that must change nothing, broken profiles, the transform cache and thumbnails.
final class ColorManagementTests: XCTestCase {
    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/color")

    private func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: Self.directory.appendingPathComponent(name))
    }

    private func decode(_ data: Data, _ options: DecodeOptions = DecodeOptions()) throws -> Image {
        try ImageDecoder(options: options).decode(data)
    }

    /// A JPEG's segments before the scan, as (marker, payload), and the bytes from SOS on.
    private func segments(_ jpeg: Data) -> (segments: [(UInt8, Data)], rest: Data) {
        let b = [UInt8](jpeg)
        var i = 2
        var out: [(UInt8, Data)] = []
        while b[i + 1] != 0xDA {
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            out.append((b[i + 1], Data(b[(i + 4)..<(i + 2 + length)])))
            i += 2 + length
        }
        return (out, Data(b[i...]))
    }

    /// `jpeg` with its ICC segments replaced by `app2` payloads (none: untagged).
    private func jpeg(_ jpeg: Data, withICCSegments app2: [Data]) -> Data {
        let (segs, rest) = segments(jpeg)
        let kept = segs.filter { !($0.0 == 0xE2 && $0.1.starts(with: Array("ICC_PROFILE".utf8))) }
        var out = Data([0xFF, 0xD8])
        for (index, (marker, payload)) in kept.enumerated() {
            if index == 1 {
                for p in app2 { out += Data([0xFF, 0xE2, UInt8((p.count + 2) >> 8), UInt8((p.count + 2) & 0xFF)]) + p }
            }
            out += Data([0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)]) + payload
        }
        return out + rest
    }

    private func iccChunk(_ seq: Int, of count: Int, _ bytes: Data) -> Data {
        Data("ICC_PROFILE".utf8) + Data([0, UInt8(seq), UInt8(count)]) + bytes
    }

    func testTaggedImagesMatchLibvipsReferences() throws {
        let cases: [(String, String, ICCColorSpace)] = [
            ("p3.jpg", "p3-jpg.ref.png", .rgb), ("adobe-rgb.jpg", "adobe-rgb-jpg.ref.png", .rgb),
            ("p3.png", "p3-png.ref.png", .rgb), ("p3-alpha.png", "p3-alpha-png.ref.png", .rgb),
            ("p3.webp", "p3-webp.ref.png", .rgb), ("gray-18.jpg", "gray-18-jpg.ref.png", .gray),
            ("gray-18-alpha.png", "gray-18-alpha-png.ref.png", .gray),
            ("cmyk-naive.jpg", "cmyk-naive-jpg.ref.png", .cmyk), ("p3-split.jpg", "p3-split-jpg.ref.png", .rgb),
        ]
        for (file, ref, space) in cases {
            let image = try decode(try fixture(file))
            let reference = try decode(try fixture(ref))
            XCTAssertTrue(image.isColorConverted, file)
            XCTAssertFalse(image.isICCProfileIgnored, file)
            XCTAssertEqual(image.iccProfileSpace, space, file)
            XCTAssertNotNil(image.iccProfile, file)
            XCTAssertFalse(reference.isColorConverted, ref)
            let psnr = Quality.psnr(image, reference)
            XCTAssertGreaterThanOrEqual(psnr, 45, "\(file): \(psnr) dB against libvips")
        }
    }

    func testConversionChangesThePixels() throws {
        // A check that the references above are not met by leaving the pixels alone.
        for file in ["p3.jpg", "adobe-rgb.jpg", "gray-18.jpg", "p3-alpha.png"] {
            let data = try fixture(file)
            let converted = try decode(data)
            let raw = try decode(data, DecodeOptions(colorMode: .raw))
            XCTAssertLessThan(Quality.psnr(converted, raw), 40, file)
        }
    }

    func testRawModeKeepsTheSourceValues() throws {
        let tagged = try fixture("p3.jpg")
        let untagged = jpeg(tagged, withICCSegments: [])
        let raw = try decode(tagged, DecodeOptions(colorMode: .raw))
        XCTAssertEqual(raw.packedPixels(), try decode(untagged).packedPixels())
        XCTAssertFalse(raw.isColorConverted)
        XCTAssertEqual(raw.iccProfileSpace, .rgb)
        XCTAssertEqual(raw.iccProfile?.count, 8868)
        XCTAssertNil(try decode(untagged).iccProfile)
    }

    func testCMYKWithoutProfileKeepsThePlainConversion() throws {
        let tagged = try fixture("cmyk-naive.jpg")
        let untagged = try decode(jpeg(tagged, withICCSegments: []))
        XCTAssertEqual(try decode(tagged, DecodeOptions(colorMode: .raw)).packedPixels(), untagged.packedPixels())
        XCTAssertNil(untagged.iccProfileSpace)
        XCTAssertFalse(untagged.isColorConverted)
    }

    func testSRGBProfilesDecodeBitIdenticalToUntagged() throws {
        let tagged = try fixture("srgb.jpg")
        let image = try decode(tagged)
        XCTAssertFalse(image.isColorConverted)
        XCTAssertFalse(image.isICCProfileIgnored)
        XCTAssertEqual(image.iccProfileSpace, .rgb)
        XCTAssertEqual(image.packedPixels(), try decode(jpeg(tagged, withICCSegments: [])).packedPixels())
    }

    func testSplitProfileIsReassembledInSequenceOrder() throws {
        let whole = try decode(try fixture("p3.jpg"))
        let split = try decode(try fixture("p3-split.jpg"))
        XCTAssertEqual(split.iccProfile, whole.iccProfile)
        XCTAssertEqual(split.packedPixels(), whole.packedPixels())
    }

    func testUnusableProfilesDecodeAsUntaggedWithoutError() throws {
        let p3 = try fixture("p3.jpg")
        let untagged = try decode(jpeg(p3, withICCSegments: [])).packedPixels()
        let profile = try XCTUnwrap(try decode(p3).iccProfile)
        let half = profile.count / 2
        let first = profile.prefix(half), second = profile.suffix(from: half)
        let oversized = (1...70).map { iccChunk($0, of: 70, Data(repeating: 0x41, count: 64_000)) }
        let cases: [(String, Data, Bool)] = [
            ("lcms cannot read it", try fixture("corrupt-profile.jpg"), true),
            ("a gap (chunk 2 of 3 missing)", jpeg(p3, withICCSegments: [iccChunk(1, of: 3, first), iccChunk(3, of: 3, second)]), false),
            ("a duplicate chunk", jpeg(p3, withICCSegments: [iccChunk(1, of: 2, first), iccChunk(1, of: 2, second)]), false),
            ("counts that disagree", jpeg(p3, withICCSegments: [iccChunk(1, of: 2, first), iccChunk(2, of: 3, second)]), false),
            ("over 4 MiB", jpeg(p3, withICCSegments: oversized), false),
            ("a grey profile on colour pixels", jpeg(p3, withICCSegments: [iccChunk(1, of: 1, try XCTUnwrap(try decode(try fixture("gray-18.jpg")).iccProfile))]), true),
        ]
        for (what, data, keepsBytes) in cases {
            let image = try decode(data)
            XCTAssertTrue(image.isICCProfileIgnored, what)
            XCTAssertFalse(image.isColorConverted, what)
            XCTAssertEqual(image.iccProfile != nil, keepsBytes, what)
            XCTAssertEqual(image.packedPixels(), untagged, what)
        }
    }

    func testTransformCacheParsesAProfileOnce() throws {
        ic_color_cache_clear()
        let data = try fixture("adobe-rgb.jpg")
        var before = ic_color_cache_stats()
        ic_color_cache_get_stats(&before)
        let first = try decode(data)
        var middle = ic_color_cache_stats()
        ic_color_cache_get_stats(&middle)
        let second = try decode(data)
        var after = ic_color_cache_stats()
        ic_color_cache_get_stats(&after)
        XCTAssertEqual(middle.profiles_parsed, before.profiles_parsed + 1)
        XCTAssertEqual(middle.transforms_created, before.transforms_created + 1)
        XCTAssertEqual(middle.fast_paths, before.fast_paths + 1, "a matrix/shaper profile takes the fast path")
        XCTAssertEqual(after.profiles_parsed, middle.profiles_parsed, "the second decode parsed the profile again")
        XCTAssertEqual(after.hits, middle.hits + 1)
        XCTAssertEqual(first.packedPixels(), second.packedPixels())
        XCTAssertEqual(after.capacity, IC_COLOR_CACHE_CAPACITY)
        XCTAssertLessThanOrEqual(after.entries, after.capacity)
    }

    func testLUTAndCMYKProfilesGoThroughLCMS() throws {
        ic_color_cache_clear()
        var before = ic_color_cache_stats()
        ic_color_cache_get_stats(&before)
        _ = try decode(try fixture("cmyk-naive.jpg"))
        _ = try decode(try fixture("gray-18.jpg"))
        var after = ic_color_cache_stats()
        ic_color_cache_get_stats(&after)
        XCTAssertEqual(after.transforms_created, before.transforms_created + 2)
        XCTAssertEqual(after.fast_paths, before.fast_paths)
    }

    func testRawModeAndUntaggedImagesNeverTouchTheCache() throws {
        var before = ic_color_cache_stats()
        ic_color_cache_get_stats(&before)
        _ = try decode(try fixture("p3.jpg"), DecodeOptions(colorMode: .raw))
        _ = try decode(jpeg(try fixture("p3.jpg"), withICCSegments: []))
        var after = ic_color_cache_stats()
        ic_color_cache_get_stats(&after)
        XCTAssertEqual(after.lookups, before.lookups)
    }

    func testCacheStaysBoundedAndCorrectPastItsCapacity() throws {
        ic_color_cache_clear()
        let p3 = try fixture("p3.jpg")
        let profile = try XCTUnwrap(try decode(p3).iccProfile)
        let expected = try decode(p3).packedPixels()
        // Profiles that differ only in an unused header byte (the creator field): as many
        // cache keys, one conversion.
        for i in 0..<(Int(IC_COLOR_CACHE_CAPACITY) + 8) {
            var variant = profile
            variant[variant.startIndex + 80] = UInt8(i)
            let image = try decode(jpeg(p3, withICCSegments: [iccChunk(1, of: 1, variant)]))
            XCTAssertEqual(image.packedPixels(), expected)
        }
        var stats = ic_color_cache_stats()
        ic_color_cache_get_stats(&stats)
        XCTAssertEqual(stats.entries, IC_COLOR_CACHE_CAPACITY)
    }

    func testCacheKeepsAtMost16MiBOfProfiles() throws {
        ic_color_cache_clear()
        let p3 = try fixture("p3.jpg")
        let profile = try XCTUnwrap(try decode(p3).iccProfile)
        let expected = try decode(p3).packedPixels()
        // 1 MiB profiles (the P3 profile, then padding lcms does not read), each distinct.
        for i in 0..<20 {
            var variant = profile + Data(repeating: 0, count: (1 << 20) - profile.count)
            variant[variant.startIndex + 80] = UInt8(i)
            let step = 60_000
            let parts = stride(from: 0, to: variant.count, by: step).map { variant[$0..<min($0 + step, variant.count)] }
            let chunks = parts.enumerated().map { iccChunk($0.offset + 1, of: parts.count, Data($0.element)) }
            let image = try decode(jpeg(p3, withICCSegments: chunks))
            XCTAssertTrue(image.isColorConverted)
            XCTAssertEqual(image.packedPixels(), expected)
        }
        var stats = ic_color_cache_stats()
        ic_color_cache_get_stats(&stats)
        XCTAssertEqual(stats.entries, 16)
    }

    func testConcurrentDecodesShareTransforms() throws {
        let data = try fixture("p3-alpha.png")
        let expected = try decode(data).packedPixels()
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            if i % 4 == 0 { ic_color_cache_clear() }
            let pixels = try? ImageDecoder().decode(data).packedPixels()
            if pixels != expected { mismatches.withLock { $0 += 1 } }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, 0)
    }

    func testThumbnailsAreConvertedToo() throws {
        for file in ["p3.jpg", "p3.webp", "p3-alpha.png"] {
            let data = try fixture(file)
            let box = PixelSize(square: 40)
            let thumb = try decode(data, DecodeOptions(thumbnailPixelSize: box))
            let rawThumb = try decode(data, DecodeOptions(thumbnailPixelSize: box, colorMode: .raw))
            let reference = try ImageResizer(size: box).resize(try decode(data))
            XCTAssertTrue(thumb.isColorConverted, file)
            XCTAssertGreaterThan(Quality.psnr(thumb, reference), 30, file)
            XCTAssertGreaterThan(Quality.psnr(thumb, reference), Quality.psnr(rawThumb, reference), file)
        }
    }

    func testProbeReportsTheProfile() throws {
        let cases: [(String, ICCColorSpace?, Int)] = [
            ("p3.jpg", .rgb, 8868), ("p3-split.jpg", .rgb, 8868), ("p3.png", .rgb, 8868), ("p3.webp", .rgb, 8868),
            ("gray-18.jpg", .gray, 468), ("cmyk-naive.jpg", .cmyk, 4272), ("p3-jpg.ref.png", nil, 0),
        ]
        for (file, space, size) in cases {
            let info = try ImageDecoder.info(try fixture(file))
            XCTAssertEqual(info.iccProfileSpace, space, file)
            XCTAssertEqual(info.iccProfileSize, size, file)
        }
    }
}
