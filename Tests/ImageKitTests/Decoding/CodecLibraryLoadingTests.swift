import Foundation
import ImageKitTestSupport
import XCTest

/// libavif, libheif (with libde265), libjxl and libimagequant are opened on first use (Sources/CImageCore/codecs),
/// not linked: the `imagekit` binary, run as a child process under glibc's log of the shared
/// objects it maps (`LD_DEBUG=files`, at startup and through dlopen), maps none of them for a
/// JPEG, and for an AVIF, HEIF or JPEG XL file, or a GIF written, only the library it needs. (This test process links
/// them all through CAnchors, so it cannot look at itself.)
final class CodecLibraryLoadingTests: XCTestCase {
    private let lazyLibraries = ["libavif", "libheif", "libde265", "libjxl", "libimagequant"]

    private func fixture(_ path: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(path).path
    }

    /// The shared objects `imagekit arguments` mapped, by the names the loader opened them by
    /// (`libavif.so.15`, …), after checking that it succeeded.
    private func librariesMapped(_ arguments: [String]) throws -> [String] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-ld-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let process = Process()
        process.executableURL = BuiltProducts.imagekit
        process.arguments = arguments
        // The loader writes its log to <LD_DEBUG_OUTPUT>.<pid>, apart from the tool's output.
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": dir.appendingPathComponent("ld").path]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "imagekit \(arguments.joined(separator: " "))")
        let log = try String(contentsOf: dir.appendingPathComponent("ld.\(process.processIdentifier)"), encoding: .utf8)
        // "  4242:\tfile=libavif.so.15 [0];  dynamically loaded by …"
        let names = log.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "file=") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " })
        }
        XCTAssertTrue(names.contains { $0.hasPrefix("libc.so") }, "no loader log: \(log.prefix(500))")
        return names
    }

    /// Which of the lazily opened libraries `names` include.
    private func lazyOnes(_ names: [String]) -> [String] {
        lazyLibraries.filter { lib in names.contains { $0.hasPrefix(lib + ".so") } }
    }

    func testAJPEGThumbnailMapsNoneOfThem() throws {
        let mapped = try librariesMapped(["thumbnail", fixture("color/srgb.jpg"), "--size", "64"])
        XCTAssertEqual(lazyOnes(mapped), [])
        XCTAssertTrue(mapped.contains { $0.hasPrefix("libjpeg.so") }, "\(mapped)")
    }

    func testEachFormatMapsOnlyItsLibrary() throws {
        let avif = try librariesMapped(["thumbnail", fixture("avif/kodim03_yuv420_8bpc.avif"), "--size", "64"])
        XCTAssertEqual(lazyOnes(avif), ["libavif"])
        // libheif needs libde265 (Debian's libheif1 links it); a decode opens it for its own plugin too.
        XCTAssertEqual(lazyOnes(try librariesMapped(["info", fixture("heic/example.heic")])), ["libheif", "libde265"])
        let heif = try librariesMapped(["thumbnail", fixture("heic/example.heic"), "--size", "64"])
        XCTAssertEqual(lazyOnes(heif), ["libheif", "libde265"])
        XCTAssertEqual(lazyOnes(try librariesMapped(["info", fixture("jxl/grayscale.jxl")])), ["libjxl"])
        let gif = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-ld-\(UUID().uuidString).gif")
        defer { try? FileManager.default.removeItem(at: gif) }
        let encoded = try librariesMapped(["thumbnail", fixture("color/srgb.jpg"), "--size", "64", "-o", gif.path])
        XCTAssertEqual(lazyOnes(encoded), ["libimagequant"], "a GIF written")
    }
}
