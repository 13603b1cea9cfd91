import CAnchors
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// Encoders embed no colour profile by default, and the profile they are given when asked,
/// read back by each codec library's own reader (Tests/CAnchors/icc.c).
final class ICCProfileEncodeTests: XCTestCase {
    private let formats: [EncodeFormat] = [.jpeg(), .jpeg(progressive: true), .png(), .webp(), .webpLossless]

    private func image(alpha: Bool) throws -> Image {
        try Image(width: 48, height: 32, premultipliedRGBA: Pixels.premultiplied(
            SyntheticPhoto.rgba(width: 48, height: 32, seed: 7, alpha: alpha)))
    }

    private func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/icc/\(name)"))
    }

    /// The profile each format's reader finds: nil when the file has none; fails the test
    /// when the file cannot be read.
    private func embeddedProfile(_ data: Data, _ format: EncodeFormat, file: StaticString = #filePath,
                                 line: UInt = #line) -> [UInt8]? {
        let bytes = [UInt8](data)
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        let rc: Int32
        switch format.imageFormat {
        case .jpeg: rc = anchors_jpeg_icc_profile(bytes, bytes.count, &out, &size)
        case .png: rc = anchors_png_icc_profile(bytes, bytes.count, &out, &size)
        default: rc = anchors_webp_icc_profile(bytes, bytes.count, &out, &size)
        }
        XCTAssertNotEqual(rc, -1, "\(format): the file cannot be read", file: file, line: line)
        guard rc == 0, let out else { return nil }
        defer { anchors_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    /// Occurrences of `marker` in `data`.
    private func count(_ marker: String, in data: Data) -> Int {
        let needle = Array(marker.utf8), bytes = [UInt8](data)
        guard bytes.count >= needle.count else { return 0 }
        return (0...(bytes.count - needle.count)).filter { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }.count
    }

    /// The marker or chunk type that carries a profile in `format`.
    private func profileMarker(_ format: EncodeFormat) -> String {
        switch format.imageFormat {
        case .jpeg: "ICC_PROFILE\0"
        case .png: "iCCP"
        default: "ICCP"
        }
    }

    /// `profile` grown to `size` bytes (zeros after its tags), its header's size field updated.
    private func padded(_ profile: Data, to size: Int) -> Data {
        var out = [UInt8](profile) + [UInt8](repeating: 0, count: size - profile.count)
        out.replaceSubrange(0..<4, with: be32(UInt32(size)))
        return Data(out)
    }

    func testDefaultOutputEmbedsNoProfile() throws {
        for alpha in [false, true] {
            let image = try image(alpha: alpha)
            for format in formats {
                let data = try ImageEncoder.encode(image, as: format)
                for marker in ["ICC_PROFILE\0", "iCCP", "ICCP"] {
                    XCTAssertEqual(count(marker, in: data), 0, "\(format) alpha \(alpha): \(marker)")
                }
                XCTAssertNil(embeddedProfile(data, format), "\(format) alpha \(alpha)")
            }
        }
    }

    func testGivenProfileIsEmbeddedByteForByteAndPixelsAreUnchanged() async throws {
        let srgb = try fixture("srgb.icc")
        for alpha in [false, true] {
            let image = try image(alpha: alpha)
            for format in formats {
                let label = "\(format) alpha \(alpha)"
                let plain = try ImageEncoder.encode(image, as: format)
                let tagged = try ImageEncoder.encode(image, as: format, iccProfile: srgb)
                XCTAssertEqual(count(profileMarker(format), in: tagged), 1, label)
                XCTAssertEqual(embeddedProfile(tagged, format), [UInt8](srgb), label)
                let a = try ImageDecoder().decode(plain), b = try ImageDecoder().decode(tagged)
                XCTAssertTrue(a.packedPixels() == b.packedPixels(), label)
            }
        }
        let encoded = try await ImageEncoder.encodedImage(try image(alpha: false), as: .webpLossless, iccProfile: srgb)
        XCTAssertEqual(embeddedProfile(encoded.data, .webpLossless), [UInt8](srgb))
    }

    /// A JPEG marker holds 65519 bytes of a profile: larger ones are split over numbered
    /// markers. An odd size exercises WebP's chunk padding.
    func testLargeAndOddSizedProfilesRoundTrip() throws {
        let srgb = try fixture("srgb.icc")
        let image = try image(alpha: true)
        let large = padded(srgb, to: 150_000)
        for format in formats {
            let tagged = try ImageEncoder.encode(image, as: format, iccProfile: large)
            XCTAssertEqual(embeddedProfile(tagged, format), [UInt8](large), "\(format)")
            if format.imageFormat == .jpeg { XCTAssertEqual(count("ICC_PROFILE\0", in: tagged), 3) }
        }
        let odd = padded(srgb, to: srgb.count + 13)
        for format in [EncodeFormat.jpeg(), .webp(), .webpLossless] {
            let tagged = try ImageEncoder.encode(image, as: format, iccProfile: odd)
            XCTAssertEqual(embeddedProfile(tagged, format), [UInt8](odd), "\(format)")
            XCTAssertNoThrow(try ImageDecoder().decode(tagged), "\(format)")
        }
    }

    private func assertRefused(_ profile: Data, _ format: EncodeFormat, _ expected: String,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let image = try image(alpha: false)
        XCTAssertThrowsError(try ImageEncoder.encode(image, as: format, iccProfile: profile), file: file, line: line) { error in
            guard let e = error as? ImageKitError, e.code == .invalidArgument else {
                return XCTFail("\(format): \(error)", file: file, line: line)
            }
            XCTAssertTrue(e.message.contains(expected), "\(format): \(e.message)", file: file, line: line)
        }
    }

    func testInvalidProfilesAreRefusedWithAReason() throws {
        let srgb = try fixture("srgb.icc")
        var wrongSize = [UInt8](srgb)
        wrongSize[3] ^= 4
        var noSignature = [UInt8](srgb)
        noSignature[36] = UInt8(ascii: "x")
        for format in formats {
            let name = format.imageFormat == .jpeg ? "JPEG" : format.imageFormat == .png ? "PNG" : "WebP"
            try assertRefused(Data(), format, "\(name): the ICC profile is 0 bytes, shorter than a profile header")
            try assertRefused(srgb.prefix(131), format, "the ICC profile is 131 bytes")
            try assertRefused(Data(wrongSize), format,
                              "the ICC profile's header says \(srgb.count ^ 4) bytes, but it is \(srgb.count) bytes")
            try assertRefused(Data(noSignature), format, "no 'acsp' signature at byte 36")
        }
        // Valid, but not a profile for RGB pixels: libpng's own checks refuse it.
        try assertRefused(try fixture("lab.icc"), .png(), "PNG: libpng refused the ICC profile: ")
        // More than JPEG's 255 markers of 65519 bytes hold.
        try assertRefused(padded(srgb, to: 255 * 65519 + 4), .jpeg(), "more than 255 APP2 markers hold")
    }
}
