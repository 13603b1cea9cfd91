import CImageCore
import Foundation
import ImageKit
import XCTest

/// A fresh directory under the system temporary directory, deleted with its contents on deinit.
final class TemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init(_ name: String = "imagekit-cache-test") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(name)-\(getpid())-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// Names of the files in the directory (hidden ones included), sorted.
    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }
}

/// A NUL-terminated C character array (or fixed-size tuple field) as a String.
func cString<T>(_ field: T) -> String {
    withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}

/// Deterministic test pictures: smooth gradients with a little noise, so
/// filters and LZ4 see photo-like rows; `opaque: false` adds an alpha ramp
/// with a transparent band. Pixels are premultiplied.
enum TestPixels {
    static func rgba(width: Int, height: Int, seed: UInt64 = 1, opaque: Bool = true) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                let noise = Int(state % 7) - 3
                let a = opaque ? 255 : (y % 16 < 3 ? 0 : min(255, 40 + (x * 215) / max(1, width - 1)))
                let i = (y * width + x) * 4
                for c in 0..<3 {
                    let base = (x * (c + 1) * 3 + y * (3 - c) * 2 + Int(seed) * 17) % 256
                    let v = max(0, min(255, base + noise))
                    out[i + c] = UInt8((v * a + 127) / 255)
                }
                out[i + 3] = UInt8(a)
            }
        }
        return out
    }

    static func image(width: Int, height: Int, seed: UInt64 = 1, opaque: Bool = true) -> Image {
        // The pixels are valid by construction.
        try! Image(width: width, height: height, premultipliedRGBA: rgba(width: width, height: height, seed: seed,
                                                                         opaque: opaque))
    }
}

/// A C image (caller frees with ic_image_free) holding `TestPixels` in every frame.
func makeCImage(width: Int, height: Int, frames: Int = 1, seed: UInt64 = 1, opaque: Bool = true)
    -> UnsafeMutablePointer<ic_image> {
    var out: UnsafeMutablePointer<ic_image>?
    var err = ic_error()
    precondition(ic_image_create(UInt32(width), UInt32(height), UInt32(frames), &out, &err) == IC_OK)
    let img = out!
    for f in 0..<frames {
        let pixels = TestPixels.rgba(width: width, height: height, seed: seed &+ UInt64(f), opaque: opaque)
        let frame = ic_image_frame(img, UInt32(f))!
        for y in 0..<height {
            pixels.withUnsafeBytes { src in
                (frame + y * img.pointee.stride).update(
                    from: src.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * width * 4, count: width * 4)
            }
            // Padding bytes get a pattern the store must not keep.
            for p in (width * 4)..<img.pointee.stride { frame[y * img.pointee.stride + p] = 0xA5 }
        }
        if frames > 1 { img.pointee.frame_delays_ms[f] = UInt32(40 + f * 10) }
    }
    img.pointee.is_opaque = opaque ? 1 : 0
    img.pointee.source_format = IC_FORMAT_PNG
    img.pointee.source_width = UInt32(width * 2)
    img.pointee.source_height = UInt32(height * 2)
    img.pointee.orientation = 6
    img.pointee.orientation_applied = 1
    img.pointee.loop_count = frames > 1 ? 3 : 0
    return img
}

/// Whether two C images have the same size, facts and visible pixels (padding ignored).
func sameImage(_ a: UnsafePointer<ic_image>, _ b: UnsafePointer<ic_image>) -> Bool {
    let x = a.pointee, y = b.pointee
    guard x.width == y.width, x.height == y.height, x.frame_count == y.frame_count,
          x.is_opaque == y.is_opaque, x.source_format == y.source_format, x.source_width == y.source_width,
          x.source_height == y.source_height, x.orientation == y.orientation,
          x.orientation_applied == y.orientation_applied, x.loop_count == y.loop_count
    else { return false }
    for f in 0..<Int(x.frame_count) {
        if x.frame_count > 1, x.frame_delays_ms[f] != y.frame_delays_ms[f] { return false }
        for row in 0..<Int(x.height) {
            let p = ic_image_frame(a, UInt32(f))! + row * x.stride
            let q = ic_image_frame(b, UInt32(f))! + row * y.stride
            if memcmp(p, q, Int(x.width) * 4) != 0 { return false }
        }
    }
    return true
}

/// Encodes `image` for `key` in memory with the C store, with options `configure` adjusts.
func encodeEntry(_ image: UnsafePointer<ic_image>, key: String = "key", filter: ic_store_filter = IC_STORE_FILTER_AUTO,
                 chunkBytes: UInt32 = 0, configure: (inout ic_store_write_options) -> Void = { _ in },
                 file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
    var options = ic_store_write_options()
    ic_store_write_options_init(&options)
    options.filter = Int32(filter.rawValue)
    options.chunk_bytes = chunkBytes
    configure(&options)
    var entry = ic_store_entry()
    entry.kind = IC_STORE_KIND_BITMAP
    entry.image = image
    var out: UnsafeMutablePointer<UInt8>?
    var size = 0
    var err = ic_error()
    let st = key.withCString { k -> ic_status in
        entry.key = k
        entry.key_length = strlen(k)
        return ic_store_encode(&entry, &options, &out, &size, &err)
    }
    XCTAssertEqual(st, IC_OK, "encode failed", file: file, line: line)
    defer { free(out) }
    return out.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
}

/// Decodes `bytes` as the bitmap entry for `key`; returns the status and the record. With
/// `threads` > 1 a large entry is split into parts that run on Dispatch's threads at once.
func decodeEntry(_ bytes: [UInt8], key: String = "key", kind: ic_store_kind = IC_STORE_KIND_BITMAP,
                 threads: Int32 = 1, maxBytes: UInt64 = 0) -> (ic_status, ic_store_record) {
    var options = ic_store_read_options()
    ic_store_read_options_init(&options)
    options.threads = threads
    options.run_parts = { _, count, part, arg in
        let address = Int(bitPattern: arg)  // the store keeps it valid until run_parts returns
        DispatchQueue.concurrentPerform(iterations: Int(count)) { part!(UnsafeMutableRawPointer(bitPattern: address), UInt32($0)) }
    }
    if maxBytes > 0 { options.max_bytes = maxBytes }
    var record = ic_store_record()
    var err = ic_error()
    let st = key.withCString { k in
        bytes.withUnsafeBufferPointer { b in
            ic_store_decode(b.baseAddress, b.count, kind, k, strlen(k), &options, &record, &err)
        }
    }
    return (st, record)
}
