import Foundation
import ImageKit

/// Image comparison for tests.
enum Quality {
    /// PSNR in dB over all four channels of two same-sized images' frame 0.
    static func psnr(_ a: Image, _ b: Image) -> Double {
        precondition(a.width == b.width && a.height == b.height, "sizes differ: \(a.width)x\(a.height) vs \(b.width)x\(b.height)")
        let pa = a.packedPixels(), pb = b.packedPixels()
        var sum = 0.0
        for i in 0..<pa.count {
            let d = Double(pa[i]) - Double(pb[i])
            sum += d * d
        }
        let mse = sum / Double(pa.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
