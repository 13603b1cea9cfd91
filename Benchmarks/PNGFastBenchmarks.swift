import CImageCore
import CImageCore.Testing
import XCTest

/// The PNG fast path (libdeflate, our unfiltering) against ImageKit's libpng path, both
/// through ic_decode_png_path on the same bytes in the same process: full decodes and
/// 256 px thumbnails of the built-in 8 MP inputs. (DecodeBenchmarks compares the full
/// decode with libpng's simplified API.)
final class PNGFastBenchmarks: BenchmarkCase {
    override func setUpWithError() throws { try BenchInputs.skipIfUserInput() }

    private func compare(_ input: BenchInputs.Input, section: String, thumbnail: UInt32) throws {
        var options = ic_decode_options()
        ic_decode_options_init(&options)
        options.thumbnail_width = thumbnail
        options.thumbnail_height = thumbnail
        try input.bytes.withUnsafeBufferPointer { bytes in
            func decode(_ path: ic_png_path) throws {
                var image: UnsafeMutablePointer<ic_image>?
                var err = ic_error()
                guard ic_decode_png_path(bytes.baseAddress, bytes.count, &options, path, &image, nil, &err) == IC_OK else {
                    throw XCTSkip("\(input.name) does not decode")
                }
                ic_image_free(image)
            }
            try BenchRecorder.compare(self, section: section, name: input.name + " (fast path)",
                                      megapixels: input.megapixels, anchorName: "ImageKit's libpng path",
                                      target: 0.70, ours: { try decode(IC_PNG_PATH_FAST) },
                                      anchor: { try decode(IC_PNG_PATH_LIBPNG) })
        }
    }

    func testPNG8MPRGBFull() throws { try compare(BenchInputs.png8MPRGB, section: "decode", thumbnail: 0) }

    func testPNG8MPRGBAFull() throws { try compare(BenchInputs.png8MPRGBA, section: "decode", thumbnail: 0) }

    func testPNG8MPRGBThumbnail() throws {
        try compare(BenchInputs.png8MPRGB, section: "thumbnail 256 px", thumbnail: 256)
    }

    func testPNG8MPRGBAThumbnail() throws {
        try compare(BenchInputs.png8MPRGBA, section: "thumbnail 256 px", thumbnail: 256)
    }
}
