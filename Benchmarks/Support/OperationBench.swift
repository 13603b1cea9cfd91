import CAnchors
import ImageKit
import XCTest

/// What every image operation's benchmark does: the operation on a decoded 12 MP photo or on
/// its 256 px thumbnail, against libvips's nearest operation on the same pixels (already in
/// memory on both sides), in the "operations" section.
enum OperationBench {
    /// The 12 MP baseline JPEG decoded whole, or to a 256 px thumbnail.
    static func photo(thumbnail: Bool) throws -> Image {
        let options = thumbnail ? DecodeOptions(thumbnailPixelSize: PixelSize(square: 256)) : DecodeOptions()
        return try ImageDecoder(options: options).decode(BenchInputs.jpeg12MP.bytes)
    }

    /// Records one row: `ours` on the photo against `peer` on the same pixels wrapped by
    /// libvips. With `threads` 1 (the target, ≤ 1.0×) libvips runs on one thread as ours does;
    /// with more, libvips may use that many threads and the row is recorded without a target
    /// (ours stays on one thread: a service runs one operation per worker thread). `input`
    /// makes the image both sides get from the photo (e.g. a border added for trimming).
    static func row(_ test: XCTestCase, _ name: String, thumbnail: Bool, anchorName: String, threads: Int = 1,
                    input: (Image) throws -> Image = { $0 },
                    ours: (Image) throws -> Void, peer: (UnsafeMutableRawPointer, Image) -> Int32) throws {
        let image = try input(photo(thumbnail: thumbnail))
        let pixels = image.packedPixels()
        try pixels.withUnsafeBufferPointer { buffer in
            guard let vipsImage = anchors_vips_image_rgba(buffer.baseAddress, Int32(image.width), Int32(image.height),
                                                          image.width * 4) else {
                let why = anchors_vips_start().map { String(cString: $0) } ?? "libvips refused the pixels"
                throw VipsPeer.Missing(description: "peer missing: " + why)
            }
            defer { anchors_vips_image_free(vipsImage) }
            anchors_vips_set_concurrency(Int32(threads))
            defer { anchors_vips_set_concurrency(1) }
            let anchor = "\(anchorName), \(threads == 1 ? "1 thread" : "\(threads) threads")"
            try BenchRecorder.compare(
                test, section: "operations",
                name: "\(name), \(thumbnail ? "256 px" : "12 MP")\(threads == 1 ? "" : ", libvips threaded")",
                megapixels: Double(image.width * image.height) / 1e6, anchorName: anchor,
                target: threads == 1 ? 1.0 : nil,
                ours: { try ours(image) },
                anchor: {
                    guard peer(vipsImage, image) == 0 else { throw VipsPeer.Missing(description: "libvips failed: \(anchor)") }
                })
        }
    }
}
