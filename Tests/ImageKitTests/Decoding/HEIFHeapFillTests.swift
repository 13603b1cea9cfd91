import CImageCore
import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// A damaged HEVC stream leaves blocks of its picture unwritten; their pixels must not be what
/// the heap held before (in a service, other requests' images). The `imagekit` binary decodes
/// each file in a child process under two of glibc's fills of fresh memory (`MALLOC_PERTURB_`
/// 85 and 170): both answers must be the same pixels, or the same error. (Under ASan, whose
/// allocator ignores the variable, both fills are ASan's own and the check proves nothing.)
final class HEIFHeapFillTests: XCTestCase {
    private func fixture(_ path: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(path).path
    }

    /// `imagekit decode --sha256 path`'s line (its SHA-256 of the pixels, or its error) in a
    /// process whose fresh heap blocks glibc fills from `perturb`.
    private func decodeLine(_ path: String, perturb: Int) throws -> String {
        let process = Process()
        process.executableURL = BuiltProducts.imagekit
        process.arguments = ["decode", "--sha256", path]
        process.environment = ProcessInfo.processInfo.environment.merging(["MALLOC_PERTURB_": "\(perturb)"]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, path)
        return output
    }

    /// Damaged HEVC streams that libde265 decodes without a warning, in pictures with SAO on,
    /// which libde265 allocates through its default allocation functions: their unwritten
    /// blocks showed the heap's fill (other pixels under 85 than under 170) until ImageKit
    /// pointed those functions at its zeroing ones (decode/heif/heif_hevc.c). The SHA-256 of the
    /// pixels each decodes to, the unwritten blocks a fixed value (zero Y, Cb and Cr, converted).
    private let damagedSAOPictures = [
        // A mutation of heic/rainbow-451x461.heic (six bytes of its slice zeroed, made by
        // scripts/heif_leftover_memory.py): the slice's data ends early.
        ("fuzz-regressions/heif-sao-picture-slice-ends-early.heic", "451x461",
         "bc5d222a84918e1de852badadc3abc51cf26eee48bd55d014f0c88496e3de7c6"),
        // fuzz_heif's heap-fill differential (Fuzz/fuzz_heap_fill.h), from its seeds in a minute.
        ("fuzz-regressions/heif-sao-picture-unwritten-blocks.heic", "72x72",
         "0ebd014157b7fcd73ec0ceb71c383aac5be14e666bd6db48d1711ce1529ab827"),
    ]

    func testDamagedSAOPicturesDecodeToTheSamePixelsUnderAnyHeapFill() throws {
        for (file, size, _) in damagedSAOPictures {
            let path = fixture(file)
            let lines = try [85, 170].map { try decodeLine(path, perturb: $0) }
            XCTAssertTrue(lines[0].hasPrefix("\(path)\tHEIC\t\(size)\t1\t"), lines[0])
            XCTAssertEqual(lines[0], lines[1], "\(file): the unwritten blocks show the heap's fill")
        }
    }

    /// In this process too, the unwritten blocks are a fixed value: the same pixels every time.
    func testTheUnwrittenBlocksOfDamagedSAOPicturesAreAFixedValue() throws {
        for (file, _, sha256) in damagedSAOPictures {
            let image = try ImageDecoder().decode(try Data(contentsOf: URL(fileURLWithPath: fixture(file))))
            XCTAssertEqual(FixtureReferences.sha256(image), sha256, file)
        }
    }

    /// Undamaged files (with and without SAO, 8 and 10 bits, grids, alpha) decode alike under
    /// both fills, and the damaged file libde265 warns about fails alike.
    func testEveryHEIFFixtureDecodesAlikeUnderBothHeapFills() throws {
        let paths = ["heic/MIAF002.heic", "heic/colors-with-alpha.heic", "heic-built/no-sao.heic",
                     "heic-built/grid-2x2.heic", "fuzz-regressions/heif-damaged-stream-unwritten-rows.heic",
                     "fuzz-regressions/heif-grid-tile-without-ispe-canvas-unwritten.heic"].map(fixture)
        for path in paths {
            let lines = try [85, 170].map { try decodeLine(path, perturb: $0) }
            XCTAssertTrue(lines[0].hasPrefix(path + "\t"), lines[0])
            XCTAssertEqual(lines[0], lines[1], path)
        }
    }
}
