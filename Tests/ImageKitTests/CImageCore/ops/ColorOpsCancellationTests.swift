import CImageCore
@testable import ImageKit
import XCTest

/// The C colour operations stop with IC_ERR_CANCELLED, returning nothing, when their cancel
/// flag is set, and run through when it is clear.
final class ColorOpsCancellationTests: XCTestCase {
    private typealias Operation = (UnsafePointer<ic_image>, UnsafePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<ic_image>?>,
                                   UnsafeMutablePointer<ic_error>) -> ic_status

    private let operations: [(String, Operation)] = [
        ("round corners", { src, flag, out, err in
            ic_round_corners(src, 8, UInt32(IC_CORNER_ALL), 2, [255, 0, 0, 255], flag, out, err) }),
        ("tint", { src, flag, out, err in ic_tint(src, [0, 0, 255, 128], flag, out, err) }),
        ("grayscale", { src, flag, out, err in ic_grayscale(src, flag, out, err) }),
        ("color adjust", { src, flag, out, err in ic_color_adjust(src, 1.2, 0.8, 1.5, flag, out, err) }),
        ("pixelate", { src, flag, out, err in ic_pixelate(src, 4, flag, out, err) }),
    ]

    func testASetFlagCancelsAndAClearFlagDoesNot() throws {
        let image = try ColorOpsCheck.photo(width: 64, height: 64, alpha: true)
        let flag = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        defer { flag.deallocate() }
        for (name, operation) in operations {
            for cancelled in [true, false] {
                ic_cancel_flag_set(flag, cancelled ? 1 : 0)
                var out: UnsafeMutablePointer<ic_image>?
                var err = ic_error()
                let st = operation(UnsafePointer(image.raw), UnsafePointer(flag), &out, &err)
                if cancelled {
                    XCTAssertEqual(st, IC_ERR_CANCELLED, name)
                    XCTAssertNil(out, name)
                    let message = withUnsafeBytes(of: &err.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    XCTAssertEqual(message, "\(name): cancelled")
                } else {
                    XCTAssertEqual(st, IC_OK, name)
                    XCTAssertNotNil(out, name)
                }
                ic_image_free(out)
            }
        }
    }
}
