import CImageCore
import ImageKit

/// SHA-256 of an image's frame 0 with rows tightly packed (no row padding).
enum PixelDigest {
    static func sha256Hex(of image: Image, frame: Int = 0) -> String {
        var ctx = ic_sha256()
        ic_sha256_init(&ctx)
        image.withUnsafeBytes(frame: frame) { pixels in
            for y in 0..<image.height {
                ic_sha256_update(&ctx, pixels.baseAddress! + y * image.bytesPerRow, image.width * 4)
            }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        ic_sha256_final(&ctx, &digest)
        let hex = Array("0123456789abcdef")
        return String(digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] })
    }
}
