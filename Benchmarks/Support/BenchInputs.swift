import CAnchors
import Foundation
import ImageKitTestSupport
import XCTest

/// The built-in benchmark inputs: photo-like pictures encoded at fixed settings
/// by the codec libraries, made on first use and cached on disk (deterministic,
/// no downloads). `IMAGEKIT_BENCH_INPUTS` overrides the cache directory.
enum BenchInputs {
    /// Where encoded inputs are cached between runs.
    static var directory: URL {
        if let dir = ProcessInfo.processInfo.environment["IMAGEKIT_BENCH_INPUTS"] {
            return URL(fileURLWithPath: dir)
        }
        return BenchRecorder.packageRoot.appendingPathComponent(".build/bench-inputs")
    }

    /// The user's own files (`make bench INPUT=dir`), if given; the built-in
    /// decode and thumbnail sections then make way for them.
    static var userDirectory: URL? {
        guard let dir = ProcessInfo.processInfo.environment["IMAGEKIT_BENCH_INPUT_DIR"], !dir.isEmpty else { return nil }
        return URL(fileURLWithPath: dir)
    }

    /// Skips a built-in benchmark when the user's files are being measured instead.
    static func skipIfUserInput() throws {
        if let dir = userDirectory { throw XCTSkip("measuring the files in \(dir.path) instead") }
    }

    /// An encoded input: its bytes and the size of the picture.
    struct Input: Sendable {
        let name: String
        let bytes: [UInt8]
        let width: Int
        let height: Int

        var megapixels: Double { Double(width * height) / 1e6 }
    }

    /// A photo of about 100 KB as a service downloads it: 960×720 baseline 4:2:0 JPEG, quality 90.
    static var jpeg100KB: Input { jpeg("jpeg-100kb-960x720-baseline", 960, 720, progressive: false) }

    /// 24 MP (6000×4000) baseline 4:2:0 JPEG, quality 90.
    static var jpeg24MP: Input { jpeg("jpeg-24mp-baseline", 6000, 4000, progressive: false) }
    /// The same picture as a progressive JPEG.
    static var jpeg24MPProgressive: Input { jpeg("jpeg-24mp-progressive", 6000, 4000, progressive: true) }
    /// A progressive photo of about 2 MB: 5000×3400 progressive 4:2:0, quality 90.
    static var jpeg17MPProgressive: Input { jpeg("jpeg-17mp-progressive", 5000, 3400, progressive: true) }
    /// 12 MP (4000×3000) baseline 4:2:0 JPEG, quality 90.
    static var jpeg12MP: Input { jpeg("jpeg-12mp-baseline", 4000, 3000, progressive: false) }
    /// The 12 MP baseline JPEG with the Display P3 profile of Tests/Fixtures/color/p3.jpg in an
    /// APP2 segment after SOI (the colour benchmarks' input, here and in Benchmarks/Peers).
    static var jpeg12MPP3: Input {
        cached("jpeg-12mp-p3", 4000, 3000, ext: "jpg") {
            let plain = jpeg12MP.bytes
            let payload = Array("ICC_PROFILE".utf8) + [0, 1, 1] + p3Profile
            let length = payload.count + 2
            return Array(plain[0..<2]) + [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
                + Array(plain[2...])
        }
    }

    /// The Display P3 profile embedded in Tests/Fixtures/color/p3.jpg, read by libjpeg.
    static let p3Profile: [UInt8] = {
        let url = BenchRecorder.packageRoot.appendingPathComponent("Tests/Fixtures/color/p3.jpg")
        guard let data = try? Data(contentsOf: url) else { fatalError("\(url.path) is missing") }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        let rc = [UInt8](data).withUnsafeBufferPointer { anchors_jpeg_icc_profile($0.baseAddress, $0.count, &out, &size) }
        guard rc == 0, let out else { fatalError("\(url.path) has no readable profile") }
        defer { anchors_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }()
    /// 12 MP progressive JPEG.
    static var jpeg12MPProgressive: Input { jpeg("jpeg-12mp-progressive", 4000, 3000, progressive: true) }
    /// 8 MP (3264×2448) PNG, RGB.
    static var png8MPRGB: Input { png("png-8mp-rgb", 3264, 2448, alpha: false) }
    /// 8 MP PNG, RGBA with a soft alpha vignette.
    static var png8MPRGBA: Input { png("png-8mp-rgba", 3264, 2448, alpha: true) }
    /// 12 MP lossy WebP, quality 80.
    static var webpLossy: Input { webp("webp-12mp-lossy", 4000, 3000, quality: 80) }
    /// 2 MP lossless WebP with alpha.
    static var webpLossless: Input { webp("webp-2mp-lossless", 1600, 1250, quality: -1, alpha: true) }
    /// 23.6 MP (5952×3968) lossy WebP, quality 80: the performance issue's larger WebP.
    static var webpLossy24MP: Input { webp("webp-23.6mp-lossy", 5952, 3968, quality: 80) }
    /// 16.8 MP (4752×3536) lossless WebP with alpha: the performance issue's other WebP (whose
    /// kind the issue does not say; lossless with alpha is the case unlike the lossy ones).
    static var webpLossless17MP: Input { webp("webp-16.8mp-lossless", 4752, 3536, quality: -1, alpha: true) }
    /// 12 MP HEIC (libheif's x265 encoder, built into Debian's libheif, quality 80), opaque with
    /// no alpha plane, as a camera's.
    static var heic12MP: Input {
        cached("heic-12mp-rgb", 4000, 3000, ext: "heic") {
            let px = SyntheticPhoto.rgba(width: 4000, height: 3000, seed: 4)
            return encoded { anchors_encode_heic(px, 4000, 3000, 80, $0, $1) }
        }
    }
    /// 12 MP lossy JPEG XL (libjxl's JxlEncoder, distance 1, effort 3).
    static var jxl12MP: Input {
        cached("jxl-12mp-lossy", 4000, 3000, ext: "jxl") {
            let px = SyntheticPhoto.rgba(width: 4000, height: 3000, seed: 5)
            return encoded { anchors_encode_jxl(px, 4000, 3000, 1.0, 3, $0, $1) }
        }
    }
    /// 2 MP (1600×1250) animated GIF, 8 frames.
    static var gifAnimated: Input {
        cached("gif-2mp-8frames", 1600, 1250, ext: "gif") {
            let frames = (0..<8).map { SyntheticPhoto.rgba(width: 1600, height: 1250, seed: 10 + UInt64($0)) }
            let copies = frames.map { f -> UnsafePointer<UInt8>? in
                let p = UnsafeMutablePointer<UInt8>.allocate(capacity: f.count)
                p.initialize(from: f, count: f.count)
                return UnsafePointer(p)
            }
            defer { copies.forEach { UnsafeMutablePointer(mutating: $0)?.deallocate() } }
            return encoded { anchors_encode_gif(copies, Int32(frames.count), 1600, 1250, 8, $0, $1) }
        }
    }

    /// 2 MP (1600×1250) APNG, 8 frames with alpha, each blended over the canvas
    /// (libpng-encoded PNGs put together by APNGAssembler).
    static var apngAnimated: Input {
        cached("apng-2mp-8frames", 1600, 1250, ext: "png") {
            let pngs = (0..<8).map { i -> [UInt8] in
                let px = SyntheticPhoto.rgba(width: 1600, height: 1250, seed: 20 + UInt64(i), alpha: true)
                return encoded { anchors_encode_png(px, 1600, 1250, 1, $0, $1) }
            }
            return APNGAssembler.assemble(pngs, width: 1600, height: 1250)
        }
    }

    private static func jpeg(_ name: String, _ w: Int, _ h: Int, progressive: Bool) -> Input {
        cached(name, w, h, ext: "jpg") {
            let px = SyntheticPhoto.rgba(width: w, height: h)
            return encoded { anchors_encode_jpeg(px, Int32(w), Int32(h), 90, progressive ? 1 : 0, 420, $0, $1) }
        }
    }

    private static func png(_ name: String, _ w: Int, _ h: Int, alpha: Bool) -> Input {
        cached(name, w, h, ext: "png") {
            let px = SyntheticPhoto.rgba(width: w, height: h, seed: 2, alpha: alpha)
            return encoded { anchors_encode_png(px, Int32(w), Int32(h), alpha ? 1 : 0, $0, $1) }
        }
    }

    private static func webp(_ name: String, _ w: Int, _ h: Int, quality: Float, alpha: Bool = false) -> Input {
        cached(name, w, h, ext: "webp") {
            let px = SyntheticPhoto.rgba(width: w, height: h, seed: 3, alpha: alpha)
            return encoded { anchors_encode_webp(px, Int32(w), Int32(h), quality, $0, $1) }
        }
    }

    private static func encoded(_ call: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>) -> Int32) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard call(&out, &size) == 0, let out else { fatalError("benchmark input could not be encoded") }
        defer { anchors_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    private static func cached(_ name: String, _ w: Int, _ h: Int, ext: String, make: () -> [UInt8]) -> Input {
        let url = directory.appendingPathComponent("\(name).\(ext)")
        if let data = try? Data(contentsOf: url) {
            return Input(name: name, bytes: [UInt8](data), width: w, height: h)
        }
        print("[bench] making input \(name) (\(w)x\(h), first run only)")
        let bytes = make()
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let tmp = url.appendingPathExtension("tmp-\(getpid())")
        if (try? Data(bytes).write(to: tmp)) != nil {
            _ = try? FileManager.default.replaceItemAt(url, withItemAt: tmp)
            if !FileManager.default.fileExists(atPath: url.path) { try? FileManager.default.moveItem(at: tmp, to: url) }
        }
        return Input(name: name, bytes: bytes, width: w, height: h)
    }
}
