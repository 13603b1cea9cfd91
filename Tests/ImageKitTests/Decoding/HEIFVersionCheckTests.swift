import CImageCore
import CImageCore.Testing
import XCTest

/// The HEIF stack mirrors one libheif release (Sources/CImageCore/decode/heif/README.md), and
/// the first HEIF decode or probe checks the libheif it opens against it: a release of another
/// major or minor version fails with a message naming both, a patch release of it passes.
final class HEIFVersionCheckTests: XCTestCase {
    private static func message(_ err: inout ic_error) -> String {
        withUnsafeBytes(of: &err.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    }

    func testTheMirroredReleaseAndItsPatchReleasesPass() {
        var err = ic_error()
        // heif_get_version_number's encoding: 0xMMmmpp00.
        XCTAssertEqual(ic_heif_check_version(0x010F_0100, &err), IC_OK, "1.15.1, Debian 12's")
        XCTAssertEqual(ic_heif_check_version(0x010F_0000, &err), IC_OK, "1.15.0")
        XCTAssertEqual(ic_heif_check_version(0x010F_0900, &err), IC_OK, "1.15.9")
    }

    func testAnotherReleaseIsRefusedWithBothVersionsNamed() {
        for (version, name) in [(UInt32(0x0110_0000), "1.16.0"), (0x010E_0200, "1.14.2"), (0x0200_0000, "2.0.0")] {
            var err = ic_error()
            XCTAssertEqual(ic_heif_check_version(version, &err), IC_ERR_UNSUPPORTED_FORMAT, name)
            let message = Self.message(&err)
            XCTAssertTrue(message.hasPrefix("HEIF: libheif \(name) is installed"), message)
            XCTAssertTrue(message.contains("written for libheif 1.15"), message)
        }
    }

    func testTheLibheifOfThisMachinePassesTheLoadCheck() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/heic/example.heic")
        let data = [UInt8](try Data(contentsOf: url))
        var info = ic_info()
        var err = ic_error()
        XCTAssertEqual(ic_probe(data, data.count, &info, &err), IC_OK, Self.message(&err))
        XCTAssertGreaterThan(info.width, 0)
    }
}
