import CImageCore

/// Sharpens the image with an unsharp mask: the classic one of Photoshop, GIMP, ImageMagick's
/// `-unsharp` and Pillow's `UnsharpMask`.
///
/// With `B` the Gaussian blur of the image (``BlurTransformer``'s kernel, ``sigma``) and
/// `d = pixel - B` per colour channel, each channel becomes `pixel + amount * d` where
/// `|d| > threshold` and stays as it is elsewhere. Colours are compared unpremultiplied (the
/// neighbours' colour is weighted by their alpha), so transparent areas add no halo, and alpha
/// is kept. Every frame of an animation is sharpened alike.
///
/// libvips's `sharpen` (and imgproxy's `sharpen:%sigma`, which calls it) works on the L* of
/// CIELAB with a piecewise curve: `SharpenTransformer(sigma: s, amount: m)` is close to
/// `vips_sharpen` with sigma `s`, `x1` 0, `m1` = `m2` = `m` and `y2` = `y3` = 100; imgproxy's
/// defaults (`x1` 2, `m1` 0, `m2` 3, clamped to `y2` 10, `y3` 20) are a gentler, cored mask,
/// nearest to `amount: 1, threshold: 6` (53 dB from it on IJG's testorig.jpg at sigma 0.5,
/// where the unsharpened photo is 47 dB from it).
///
/// ```swift
/// let crisp = try SharpenTransformer(sigma: 1, amount: 0.8, threshold: 2).transform(image)
/// ```
public struct SharpenTransformer: CancellableImageTransformer, Hashable {
    /// The largest amount accepted.
    public static let maximumAmount = IC_SHARPEN_MAX_AMOUNT

    /// Standard deviation of the blur the image is compared with, in pixels (above 0, at most
    /// ``BlurTransformer/maximumSigma``): the size of the details that are sharpened.
    public var sigma: Double
    /// How much of the difference is added: 1 is 100 % (0...``maximumAmount``).
    public var amount: Double
    /// The smallest difference from the blur, in levels (0...255), that is sharpened; 0
    /// sharpens everything, a few levels leave noise and smooth areas alone.
    public var threshold: Int

    /// A transformer sharpening details of about `sigma` pixels by `amount`, where they
    /// differ from their surroundings by more than `threshold` levels.
    public init(sigma: Double = 1, amount: Double = 1, threshold: Int = 0) {
        self.sigma = sigma
        self.amount = amount
        self.threshold = threshold
    }

    /// `sharpen(sigma,amount,threshold)`, numbers as Swift prints them (`sharpen(1.0,0.8,2)`).
    public var key: String { "sharpen(\(sigma),\(amount),\(threshold))" }

    /// The image sharpened; throws ``ImageKitError/Code/invalidArgument`` for a parameter
    /// out of its range.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        guard sigma > 0, sigma <= BlurTransformer.maximumSigma else {
            throw ImageKitError.invalidArgument(
                "sharpen: sigma \(sigma) is not a number of pixels above 0 and at most \(BlurTransformer.maximumSigma)")
        }
        guard amount >= 0, amount <= Self.maximumAmount else {
            throw ImageKitError.invalidArgument("sharpen: amount \(amount) is not between 0 and \(Self.maximumAmount)")
        }
        guard (0...255).contains(threshold) else {
            throw ImageKitError.invalidArgument("sharpen: threshold \(threshold) is not a level between 0 and 255")
        }
        return try Operations.run(cancellation) { cancel, out, err in
            ic_sharpen(image.raw, sigma, amount, Int32(threshold), cancel, out, err)
        }
    }
}
