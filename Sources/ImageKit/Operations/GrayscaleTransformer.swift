import CImageCore

/// Turns the image grey: each colour becomes its Rec. 709 luma,
/// Y = 0.2126 R + 0.7152 G + 0.0722 B on the sRGB-encoded values (CSS `grayscale(1)`);
/// alpha is kept. libvips's `b-w` differs: it weighs linear-light values and encodes the
/// result again, so mid-tone colours come out darker there.
///
/// The same as ``ColorAdjustTransformer`` with saturation 0 up to rounding (CSS's saturate
/// matrix rounds the weights to 0.213, 0.715, 0.072), with a key of its own.
///
/// ```swift
/// let context = ImageContext(imageTransformer: GrayscaleTransformer())
/// ```
public struct GrayscaleTransformer: CancellableImageTransformer, Hashable {
    /// A grayscale transformer.
    public init() {}

    /// `grayscale`.
    public var key: String { "grayscale" }

    /// The image in shades of grey; every frame of an animation alike.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        try Operations.run(cancellation) { cancel, out, err in ic_grayscale(image.raw, cancel, out, err) }
    }
}
