import CAnchors
import ImageKit

/// Reference pixel maths for tests, written independently of the C core.
enum Pixels {
    /// Premultiplies straight RGBA with p = (c*a + 127) / 255.
    static func premultiplied(_ rgba: [UInt8]) -> [UInt8] {
        var out = rgba
        for i in stride(from: 0, to: out.count, by: 4) {
            let a = Int(out[i + 3])
            for c in 0..<3 { out[i + c] = UInt8((Int(out[i + c]) * a + 127) / 255) }
        }
        return out
    }

    /// A smooth, deterministic test picture (straight RGBA) with optional alpha.
    static func pattern(width: Int, height: Int, alpha: Bool = false, seed: Int = 0) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                out[i] = UInt8((x * 255 / max(1, width - 1) + seed) & 0xFF)
                out[i + 1] = UInt8((y * 255 / max(1, height - 1) + seed * 3) & 0xFF)
                out[i + 2] = UInt8(((x + y) * 4 + (x * y) % 17 + seed) & 0xFF)
                out[i + 3] = alpha ? UInt8((x * 7 + y * 13 + seed) % 256) : 255
            }
        }
        return out
    }

    /// Applies an EXIF orientation to tightly packed RGBA; returns pixels and new size.
    static func oriented(_ px: [UInt8], width w: Int, height h: Int, orientation o: Int)
        -> (pixels: [UInt8], width: Int, height: Int) {
        let swap = o >= 5
        let dw = swap ? h : w, dh = swap ? w : h
        var out = [UInt8](repeating: 0, count: px.count)
        for y in 0..<dh {
            for x in 0..<dw {
                let (sx, sy): (Int, Int)
                switch o {
                case 2: (sx, sy) = (w - 1 - x, y)
                case 3: (sx, sy) = (w - 1 - x, h - 1 - y)
                case 4: (sx, sy) = (x, h - 1 - y)
                case 5: (sx, sy) = (y, x)
                case 6: (sx, sy) = (y, h - 1 - x)
                case 7: (sx, sy) = (w - 1 - y, h - 1 - x)
                case 8: (sx, sy) = (w - 1 - y, x)
                default: (sx, sy) = (x, y)
                }
                for c in 0..<4 { out[(y * dw + x) * 4 + c] = px[(sy * w + sx) * 4 + c] }
            }
        }
        return (out, dw, dh)
    }
}

/// Calls a CAnchors function that returns a malloc'd buffer and copies it out.
func anchorBytes(_ call: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>) -> Int32)
    -> [UInt8]? {
    var out: UnsafeMutablePointer<UInt8>?
    var size = 0
    guard call(&out, &size) == 0, let out else { return nil }
    defer { anchors_free(out) }
    return Array(UnsafeBufferPointer(start: out, count: size))
}

/// Encodes straight RGBA as JPEG through TurboJPEG.
func makeJPEG(_ rgba: [UInt8], width: Int, height: Int, quality: Int32 = 90, progressive: Bool = false,
              subsampling: Int32 = 420) -> [UInt8] {
    anchorBytes { out, size in
        anchors_encode_jpeg(rgba, Int32(width), Int32(height), quality, progressive ? 1 : 0, subsampling, out, size)
    }!
}

/// Encodes straight RGBA as WebP through libwebp: lossless when `quality` < 0, else lossy.
func makeWebP(_ rgba: [UInt8], width: Int, height: Int, quality: Float) -> [UInt8] {
    anchorBytes { out, size in anchors_encode_webp(rgba, Int32(width), Int32(height), quality, out, size) }!
}

/// Decodes with bare TurboJPEG (the reference for our JPEG path): straight RGBA and size.
func turboDecode(_ jpeg: [UInt8], denominator: Int32 = 1) -> (pixels: [UInt8], width: Int, height: Int)? {
    var out: UnsafeMutablePointer<UInt8>?
    var w: Int32 = 0, h: Int32 = 0
    guard anchors_decode_jpeg_turbo(jpeg, jpeg.count, denominator, &out, &w, &h) == 0, let out else { return nil }
    defer { anchors_free(out) }
    return (Array(UnsafeBufferPointer(start: out, count: Int(w * h * 4))), Int(w), Int(h))
}
