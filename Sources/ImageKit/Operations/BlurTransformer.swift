import CImageCore

/// Blurs the image with a Gaussian of standard deviation ``sigma`` pixels — SDWebImage's
/// `SDImageBlurTransformer`, libvips's `gaussblur`, imgproxy's `blur:%sigma`.
///
/// The kernel is exp(-x²/2σ²) cut off where it falls below 1 % of its peak (a radius of
/// about 3σ) and normalised; pixels past an edge repeat the edge pixel. Premultiplied
/// channels are blurred alike, so transparent areas never darken their neighbours. Every
/// frame of an animation is blurred alike; the cost grows with sigma (about 6σ + 1 taps a pass).
///
/// ```swift
/// let blurred = try BlurTransformer(sigma: 4).transform(image)
/// ```
public struct BlurTransformer: CancellableImageTransformer, Hashable {
    /// The largest sigma accepted, in pixels.
    public static let maximumSigma = IC_BLUR_MAX_SIGMA

    /// Standard deviation of the Gaussian, in pixels (above 0, at most ``maximumSigma``;
    /// under about 0.33 the image is unchanged).
    public var sigma: Double

    /// A transformer blurring with a Gaussian of standard deviation `sigma` pixels.
    public init(sigma: Double) {
        self.sigma = sigma
    }

    /// `blur(sigma)`, sigma as Swift prints a `Double` (`blur(2.0)`, `blur(0.5)`).
    public var key: String { "blur(\(sigma))" }

    /// The image blurred; throws ``ImageKitError/Code/invalidArgument`` for a sigma that
    /// is not a number above 0 and at most ``maximumSigma``.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        guard sigma > 0, sigma <= Self.maximumSigma else {
            throw ImageKitError.invalidArgument(
                "blur: sigma \(sigma) is not a number of pixels above 0 and at most \(Self.maximumSigma)")
        }
        return try Operations.run(cancellation) { cancel, out, err in ic_blur(image.raw, sigma, cancel, out, err) }
    }
}
