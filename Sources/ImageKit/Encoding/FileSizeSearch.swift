#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The search behind ``ImageEncoder``'s `maxFileSize`: the highest quality whose file fits,
/// at the full size first, then at half, a quarter and an eighth of it.
///
/// It works over any "encode this image at quality q" step, so a lossy format joins it by
/// naming its quality range in ``EncodeFormat/qualityRange`` and ``EncodeFormat/atQuality(_:)``.
struct FileSizeSearch {
    /// A file that fits, and what it took.
    struct Outcome {
        /// The file.
        var data: Data
        /// Its size in pixels.
        var pixelSize: PixelSize
        /// The quality it was encoded at (`nil` for a lossless format).
        var quality: Int?
        /// How many times the dimensions were halved (0: the size asked for).
        var halvings: Int
        /// How many encodes the search ran, the fitting one included.
        var encodes: Int
    }

    /// How many times the dimensions are halved before the search gives up (to 1/8 a side).
    static let maxHalvings = 3

    /// The format and its settings; a lossy format's quality is the highest tried.
    let format: EncodeFormat
    /// The largest file, in bytes.
    let budget: Int
    /// Encodes an image in a format: the step the search repeats.
    let encode: (Image, EncodeFormat) throws(ImageKitError) -> Data

    /// The file for `image` (see ``ImageEncoder/encode(_:as:frame:iccProfile:maxPixelSize:maxFileSize:)``).
    func run(_ image: Image) throws(ImageKitError) -> Outcome {
        var encodes = 0
        var smallest = Int.max
        var current = image
        for halving in 0...Self.maxHalvings {
            if halving > 0 {
                let size = PixelSize(width: max(1, image.width >> halving), height: max(1, image.height >> halving))
                if size.width == current.width && size.height == current.height { break }
                do {
                    current = try ImageResizer(size: size, mode: .stretch).resize(image)
                } catch {
                    throw ImageKitError(wrapping: error)
                }
            }
            let pixelSize = PixelSize(width: current.width, height: current.height)
            let top = try encode(current, format)
            encodes += 1
            smallest = min(smallest, top.count)
            guard let range = format.qualityRange else {
                if top.count <= budget {
                    return Outcome(data: top, pixelSize: pixelSize, quality: nil, halvings: halving, encodes: encodes)
                }
                continue
            }
            if top.count <= budget {
                return Outcome(data: top, pixelSize: pixelSize, quality: range.upperBound, halvings: halving,
                               encodes: encodes)
            }
            // Bisection over the lower qualities: the highest that fits, in at most
            // ⌈log2(count + 1)⌉ encodes (7 for JPEG's 1…99).
            var low = range.lowerBound, high = range.upperBound - 1
            var best: (quality: Int, data: Data)?
            while low <= high {
                let mid = (low + high) / 2
                let data = try encode(current, format.atQuality(mid))
                encodes += 1
                smallest = min(smallest, data.count)
                if data.count <= budget {
                    best = (mid, data)
                    low = mid + 1
                } else {
                    high = mid - 1
                }
            }
            if let best {
                return Outcome(data: best.data, pixelSize: pixelSize, quality: best.quality, halvings: halving,
                               encodes: encodes)
            }
        }
        let lowest = format.qualityRange.map { " at quality \($0.lowerBound)" } ?? ""
        throw ImageKitError.limitExceeded(
            "encode: no \(format.imageFormat) file fits the \(budget)-byte budget: the smallest reached is "
                + "\(smallest) bytes\(lowest) at \(current.width)x\(current.height) "
                + "(\(encodes) encodes; dimensions halved up to \(Self.maxHalvings) times)")
    }
}
