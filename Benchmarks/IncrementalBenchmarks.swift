import CImageCore
import CImageCore.Testing
import XCTest

/// The CPU cost of decoding while the bytes arrive: the incremental decode fed
/// in 64 KiB pieces (as a download delivers them) against ic_decode of the
/// whole body, same options, same process.
///
/// PNG is held against the whole-body decode that inflates with zlib, as the incremental
/// engine must (ImageKit's libpng path): libdeflate, which the whole-body fast path uses, cannot
/// inflate a stream piece by piece, and is about 1.8 x faster than zlib on these rows. Against
/// the fast path the row would measure zlib against libdeflate, not what streaming costs.
final class IncrementalBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private static let piece = 64 * 1024

    private func options(thumbnail: UInt32) -> ic_decode_options {
        var o = ic_decode_options()
        ic_decode_options_init(&o)
        o.thumbnail_width = thumbnail
        o.thumbnail_height = thumbnail
        return o
    }

    private func compare(_ input: BenchInputs.Input, thumbnail: UInt32, pngPath: ic_png_path = IC_PNG_PATH_AUTO) {
        var o = options(thumbnail: thumbnail)
        let name = input.name + (thumbnail > 0 ? ", \(thumbnail) px thumbnail" : "") + ", 64 KiB pieces"
        let anchorName = pngPath == IC_PNG_PATH_LIBPNG ? "ic_decode of the whole body, zlib (libpng path)"
            : "ic_decode of the whole body"
        input.bytes.withUnsafeBufferPointer { body in
            BenchRecorder.compare(self, section: "incremental decode", name: name, megapixels: input.megapixels,
                                  anchorName: anchorName, target: 1.05, ours: {
                var inc: OpaquePointer?
                var err = ic_error()
                XCTAssertEqual(ic_incremental_new(&o, &inc, &err), IC_OK)
                var at = 0
                while at < body.count {
                    let n = min(Self.piece, body.count - at)
                    XCTAssertEqual(ic_incremental_feed(inc, body.baseAddress! + at, n, &err), IC_OK)
                    at += n
                }
                var out: UnsafeMutablePointer<ic_image>?
                XCTAssertEqual(ic_incremental_finish(inc, &out, nil, &err), IC_OK)
                ic_image_free(out)
                ic_incremental_free(inc)
            }, anchor: {
                var out: UnsafeMutablePointer<ic_image>?
                var err = ic_error()
                XCTAssertEqual(ic_decode_png_path(body.baseAddress, body.count, &o, pngPath, &out, nil, &err), IC_OK)
                ic_image_free(out)
            })
        }
    }

    func testJPEG12MPBaseline() { compare(BenchInputs.jpeg12MP, thumbnail: 0) }

    func testJPEG12MPBaselineThumbnail() { compare(BenchInputs.jpeg12MP, thumbnail: 256) }

    func testJPEG12MPProgressiveThumbnail() { compare(BenchInputs.jpeg12MPProgressive, thumbnail: 256) }

    func testPNG8MPRGB() { compare(BenchInputs.png8MPRGB, thumbnail: 0, pngPath: IC_PNG_PATH_LIBPNG) }

    func testWebP12MPLossy() { compare(BenchInputs.webpLossy, thumbnail: 0) }

    func testWebP12MPLossyThumbnail() { compare(BenchInputs.webpLossy, thumbnail: 256) }
}
