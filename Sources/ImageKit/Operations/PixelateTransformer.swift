import CImageCore

/// Pixelates the image: squares of ``blockSize`` pixels from the top-left corner (cut by the
/// right and bottom edges), each filled with the average of its premultiplied pixels, so
/// transparent pixels add no colour.
///
/// ```swift
/// let censored = PixelateTransformer(blockSize: 16)
/// ```
public struct PixelateTransformer: CancellableImageTransformer, Hashable {
    /// The side of a block in pixels, 1…65536 (1 changes nothing; one larger than the image
    /// makes the whole image one block).
    public var blockSize: Int

    /// A transformer pixelating with blocks of `blockSize` pixels.
    public init(blockSize: Int) {
        self.blockSize = blockSize
    }

    /// `pixelate(N)`.
    public var key: String { "pixelate(\(blockSize))" }

    /// The pixelated image; every frame of an animation alike. Fails when the block size is
    /// not within 1…65536.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        let limit = Int(IC_PIXELATE_MAX_BLOCK)
        guard (1...limit).contains(blockSize) else {
            throw ImageKitError.invalidArgument("pixelate: the block size \(blockSize) is not within 1...\(limit) pixels")
        }
        return try Operations.run(cancellation) { cancel, out, err in ic_pixelate(image.raw, UInt32(blockSize), cancel, out, err) }
    }
}
