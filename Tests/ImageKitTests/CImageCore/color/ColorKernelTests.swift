import CAnchors
import CImageCore
import CImageCore.Testing
import XCTest

/// The matrix/shaper conversion's kernels — the portable loop, its AVX2 build, the AVX-512
/// kernel and the planar AVX-512 + VNNI kernel, each where this CPU has it — against Little CMS on two million colours (every level
/// of every channel many times over), for a profile with one curve and one with three
/// different curves (the AVX-512 kernel's second path). A decode checks its kernel against
/// lcms on a 17³ grid only; this covers the kernels this CPU does not pick.
final class ColorKernelTests: XCTestCase {
    /// Display P3's primaries (x, y of red, green, blue).
    private static let p3: [Double] = [0.680, 0.320, 0.265, 0.690, 0.150, 0.060]
    /// Adobe RGB (1998)'s primaries.
    private static let adobe: [Double] = [0.640, 0.330, 0.210, 0.710, 0.150, 0.060]

    private static func profile(_ xy: [Double], gamma: [Double]) throws -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard anchors_make_rgb_profile(xy, gamma, &out, &size) == 0, let out else {
            throw XCTSkip("lcms made no profile")
        }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    /// (r, g) over every pair of levels, 32 blues each, alpha varying: RGBA8, not premultiplied.
    private static let colours: [UInt8] = {
        var px = [UInt8](repeating: 0, count: 256 * 256 * 32 * 4)
        var i = 0
        for r in 0..<256 {
            for g in 0..<256 {
                for k in 0..<32 {
                    px[i] = UInt8(r)
                    px[i + 1] = UInt8(g)
                    px[i + 2] = UInt8((r &* 7 &+ g &* 13 &+ k &* 8) & 255)
                    px[i + 3] = UInt8((r ^ g ^ k) & 255)
                    i += 4
                }
            }
        }
        return px
    }()

    /// The colours through `kernel`, or nil when this CPU or build lacks it.
    private static func convert(_ icc: [UInt8], _ kernel: ic_color_kernel) throws -> [UInt8]? {
        var px = colours
        var err = ic_error()
        let status = px.withUnsafeMutableBufferPointer {
            ic_color_convert_with(icc, icc.count, kernel, $0.baseAddress, $0.count / 4, &err)
        }
        if status == IC_ERR_UNSUPPORTED_FEATURE, kernel != IC_COLOR_KERNEL_PORTABLE { return nil }
        guard status == IC_OK else {
            throw NSError(domain: "ic_color_convert_with", code: Int(status.rawValue),
                          userInfo: [NSLocalizedDescriptionKey: Self.message(&err)])
        }
        return px
    }

    private static func message(_ err: inout ic_error) -> String {
        withUnsafeBytes(of: &err.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    }

    /// The largest difference of a colour channel, and whether every alpha is kept.
    private static func compare(_ a: [UInt8], _ b: [UInt8]) -> (worst: Int, alphaKept: Bool) {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var worst = 0
                var alpha = true
                for i in stride(from: 0, to: a.count, by: 4) {
                    worst = max(worst, abs(Int(a[i]) - Int(b[i])), abs(Int(a[i + 1]) - Int(b[i + 1])),
                                abs(Int(a[i + 2]) - Int(b[i + 2])))
                    alpha = alpha && a[i + 3] == b[i + 3]
                }
                return (worst, alpha)
            }
        }
    }

    func testEveryKernelOfThisCPUAgreesWithLcmsWithinOneLevel() throws {
        let profiles = [("P3, one curve", try Self.profile(Self.p3, gamma: [2.2, 2.2, 2.2])),
                        ("Adobe RGB primaries, three curves", try Self.profile(Self.adobe, gamma: [1.8, 2.2, 2.6]))]
        for (name, icc) in profiles {
            let reference = try XCTUnwrap(try Self.convert(icc, IC_COLOR_KERNEL_LCMS))
            XCTAssertEqual(Self.compare(reference, Self.colours).alphaKept, true, "\(name): lcms keeps alpha")
            let kernels = [(IC_COLOR_KERNEL_PORTABLE, "portable"), (IC_COLOR_KERNEL_AVX2, "AVX2"),
                           (IC_COLOR_KERNEL_AVX512, "AVX-512"), (IC_COLOR_KERNEL_AVX512_PLANAR, "planar AVX-512")]
            var ran: [String] = []
            for (kernel, kernelName) in kernels {
                guard let px = try Self.convert(icc, kernel) else { continue }
                ran.append(kernelName)
                let (worst, alphaKept) = Self.compare(px, reference)
                XCTAssertLessThanOrEqual(worst, 1, "\(name), \(kernelName): within one level of lcms")
                XCTAssertTrue(alphaKept, "\(name), \(kernelName): alpha kept")
                XCTAssertGreaterThan(Self.compare(px, Self.colours).worst, 8, "\(name), \(kernelName): converted")
            }
            XCTAssertTrue(ran.contains("portable"), "\(name): the portable loop runs everywhere (ran \(ran))")
        }
    }

    func testProfilesADecodeDoesNotConvertAreRefused() throws {
        var err = ic_error()
        var px: [UInt8] = [1, 2, 3, 4]
        let garbage = [UInt8](repeating: 7, count: 200)
        XCTAssertEqual(ic_color_convert_with(garbage, garbage.count, IC_COLOR_KERNEL_PORTABLE, &px, 1, &err),
                       IC_ERR_INVALID_ARGUMENT)
        XCTAssertTrue(Self.message(&err).contains("lcms cannot use it"), Self.message(&err))
        XCTAssertEqual(px, [1, 2, 3, 4], "nothing converted")
    }
}
