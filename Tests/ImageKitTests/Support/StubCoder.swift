import Foundation
import ImageKit

/// A coder for tests: claims the bytes starting with `signature`, decodes them to a 1x1 image
/// whose red channel is `red` (or throws `error`), and counts its calls.
final class StubCoder: ImageCoding {
    let signature: [UInt8]
    let red: UInt8
    let error: (any Error)?
    let encodes: Set<ImageFormat>
    private let calls = Locked<[String]>([])

    convenience init(_ signature: String, red: UInt8 = 0, error: (any Error)? = nil,
                     encodes: Set<ImageFormat> = []) {
        self.init(bytes: Array(signature.utf8), red: red, error: error, encodes: encodes)
    }

    init(bytes signature: [UInt8], red: UInt8 = 0, error: (any Error)? = nil, encodes: Set<ImageFormat> = []) {
        self.signature = signature
        self.red = red
        self.error = error
        self.encodes = encodes
    }

    /// The calls so far: "decode", "encode FORMAT".
    var log: [String] { calls.withLock { $0 } }

    func canDecode(_ data: Data) -> Bool { data.starts(with: signature) }

    func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws -> Image {
        calls.withLock { $0.append("decode") }
        if let error { throw error }
        return try Image(width: 1, height: 1, frames: [[red, 0, 0, 255]])
    }

    func canEncode(_ format: ImageFormat) -> Bool { encodes.contains(format) }

    /// The built-in coder's PNG at compression level 0, whatever the format's settings.
    func encode(_ image: Image, as format: EncodeFormat) throws -> EncodedImage {
        calls.withLock { $0.append("encode \(format.imageFormat)") }
        if let error { throw error }
        return try BuiltInImageCoder().encode(image, as: .png(compressionLevel: 0))
    }
}
