import ImageKit
import ImageKitTestSupport
import XCTest

/// A large sequential JPEG decoded full size with ``DecodeOptions/usesHelperThread`` (the
/// bottom third on a helper thread, through a second decompression that skips the rows
/// above) gives the pixels of a decode on one thread, and fails as it does: the same code
/// and message for a corrupt or truncated file wherever the damage is.
final class JPEGHelperThreadTests: XCTestCase {
    /// Over two million pixels, so the helper thread is used; 4:2:0 and 4:4:4 (the bands meet
    /// inside an iMCU row of 16 rows and of 8).
    private static let files: [(String, [UInt8])] = [
        ("4:2:0", makeJPEG(SyntheticPhoto.rgba(width: 1800, height: 1250, seed: 7), width: 1800, height: 1250)),
        ("4:4:4", makeJPEG(SyntheticPhoto.rgba(width: 1500, height: 1401, seed: 8), width: 1500, height: 1401,
                           subsampling: 444)),
    ]

    private let one = ImageDecoder(options: DecodeOptions())
    private let two = ImageDecoder(options: DecodeOptions(usesHelperThread: true))

    /// Pixels, or the failure's code and message.
    private func outcome(_ decoder: ImageDecoder, _ bytes: [UInt8]) -> Result<[UInt8], ImageKitError> {
        do {
            return .success(try decoder.decode(bytes).packedPixels())
        } catch {
            return .failure(error as! ImageKitError)
        }
    }

    private func assertSameOutcome(_ bytes: [UInt8], _ what: String) {
        switch (outcome(one, bytes), outcome(two, bytes)) {
        case let (.success(a), .success(b)):
            XCTAssertTrue(a == b, "\(what): pixels differ")
        case let (.failure(a), .failure(b)):
            XCTAssertEqual(a.code, b.code, what)
            XCTAssertEqual(a.message, b.message, what)
        case let (a, b):
            XCTFail("\(what): one thread \(a.map(\.count)), helper thread \(b.map(\.count))")
        }
    }

    func testHelperThreadGivesTheSamePixels() throws {
        for (name, bytes) in Self.files {
            let image = try two.decode(bytes)
            XCTAssertTrue(image.isOpaque)
            assertSameOutcome(bytes, name)
        }
    }

    func testDamagedFilesFailAlike() {
        var rng = SplitMix(seed: 11)
        for (name, bytes) in Self.files {
            // Cut short in the caller's rows, the helper's, and just before the end.
            for fraction in [0.3, 0.55, 0.7, 0.9, 0.999] {
                assertSameOutcome(Array(bytes.prefix(Int(Double(bytes.count) * fraction))), "\(name) cut at \(fraction)")
            }
            // Bytes flipped in the entropy-coded data, above and below the helper's first row.
            for at in [0.2, 0.5, 0.8, 0.95] {
                var damaged = bytes
                let i = Int(Double(bytes.count) * at)
                for k in 0..<4 { damaged[i + k * 97] ^= UInt8(1 + rng.next() % 255) }
                assertSameOutcome(damaged, "\(name) damaged at \(at)")
            }
        }
    }
}
