import CImageCore
import Foundation
@testable import ImageKit
import ImageKitTestSupport
import XCTest

/// A large sequential JPEG decoded full size with ``DecodeOptions/usesHelperThread`` (the
/// bottom third on a helper thread, through a second decompression that skips the rows
/// above) gives the pixels of a decode on one thread, and fails as it does: the same code
/// and message for a corrupt or truncated file wherever the damage is. With the helper-yield
/// flag raised before the helper has skipped to its rows, it gives them back and the caller
/// decodes them: the same pixels and failures again.
final class JPEGHelperThreadTests: XCTestCase {
    /// Over two million pixels, so the helper thread is used; 4:2:0 and 4:4:4 (the bands meet
    /// inside an iMCU row of 16 rows and of 8). The tall ones skip in several steps (1,024 rows
    /// a step at 4:2:0, 512 at 4:4:4), the helper-yield flag read between them.
    private static let files: [(String, [UInt8])] = [
        ("4:2:0", makeJPEG(SyntheticPhoto.rgba(width: 1800, height: 1250, seed: 7), width: 1800, height: 1250)),
        ("4:4:4", makeJPEG(SyntheticPhoto.rgba(width: 1500, height: 1401, seed: 8), width: 1500, height: 1401,
                           subsampling: 444)),
        ("tall 4:2:0", makeJPEG(SyntheticPhoto.rgba(width: 700, height: 3333, seed: 9), width: 700, height: 3333)),
        ("tall 4:4:4", makeJPEG(SyntheticPhoto.rgba(width: 660, height: 3205, seed: 10), width: 660, height: 3205,
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

    /// Decodes through the C core with the helper thread and `signal` as the helper-yield flag,
    /// raised from another thread `delay` µs after the decode starts when given. The outcome and
    /// the rows the helper decoded.
    private func decode(_ bytes: [UInt8], yield signal: AtomicFlag,
                        raisedAfter delay: Int? = nil) -> (DecodeOutcome, UInt32) {
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        o.use_helper_thread = 1
        o.helper_yield_flag = signal.pointer
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        var stats = ic_decode_stats()
        if let delay {
            Thread {
                usleep(useconds_t(delay))
                signal.set(true)
            }.start()
        }
        let st = ic_decode(bytes, bytes.count, &o, &out, &stats, &err)
        return (DecodeOutcome(status: st, image: out, error: err), stats.helper_rows)
    }

    func testTheHelperDecodesTheBottomThirdUnlessToldToYield() {
        for (name, bytes) in Self.files {
            let expected = DecodeOutcome.decode(bytes)
            XCTAssertEqual(expected.status, IC_OK, name)
            let signal = AtomicFlag()
            let (helped, rows) = decode(bytes, yield: signal)
            XCTAssertEqual(helped, expected, "\(name): the helper's pixels")
            XCTAssertEqual(Int(rows), expected.height / 3, "\(name): the helper decodes the bottom third")
            signal.set(true)
            let (given, none) = decode(bytes, yield: signal)
            XCTAssertEqual(given, expected, "\(name): the rows given back")
            XCTAssertEqual(none, 0, "\(name): the helper was told to yield and decoded rows")
        }
    }

    /// Raised from another thread at moments from before the helper starts to after it is done:
    /// whether it gave its rows back or not, the pixels are one thread's.
    func testYieldingMidSkipGivesTheSamePixels() {
        for (name, bytes) in Self.files where name.hasPrefix("tall") {
            let expected = DecodeOutcome.decode(bytes)
            var gaveBack = 0
            // When the raising thread runs is up to the scheduler (on a loaded machine, or under
            // a sanitizer, a whole sweep can miss the skip): sweeps repeat until one gives back.
            for _ in 0..<20 where gaveBack == 0 {
                for delay in [0, 250, 500, 1000, 2000, 4000, 8000, 16000, 40000] {
                    let (got, rows) = decode(bytes, yield: AtomicFlag(), raisedAfter: delay)
                    XCTAssertEqual(got, expected, "\(name), raised after \(delay) µs")
                    XCTAssertTrue(rows == 0 || Int(rows) == expected.height / 3, "\(name): \(rows) rows")
                    if rows == 0 { gaveBack += 1 }
                }
            }
            XCTAssertGreaterThan(gaveBack, 0, "\(name): the helper never gave its rows back")
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

    /// The rows given back are the caller's to decode: a file damaged or cut in them fails as
    /// on one thread.
    func testDamagedFilesFailAlikeWhenTheHelperYields() {
        let signal = AtomicFlag()
        signal.set(true)
        var rng = SplitMix(seed: 12)
        for (name, bytes) in Self.files {
            for fraction in [0.55, 0.9, 0.999] {
                let cut = Array(bytes.prefix(Int(Double(bytes.count) * fraction)))
                XCTAssertEqual(decode(cut, yield: signal).0, DecodeOutcome.decode(cut), "\(name) cut at \(fraction)")
            }
            for at in [0.5, 0.8, 0.95] {
                var damaged = bytes
                let i = Int(Double(bytes.count) * at)
                for k in 0..<4 { damaged[i + k * 97] ^= UInt8(1 + rng.next() % 255) }
                XCTAssertEqual(decode(damaged, yield: signal).0, DecodeOutcome.decode(damaged), "\(name) damaged at \(at)")
            }
        }
    }
}
