import CImageCore

/// Trims a border: crops the image to the smallest rectangle holding every pixel that differs
/// from the background by more than a threshold (libvips's `find_trim`, imgproxy's `trim`).
///
/// A pixel differs when one of its premultiplied samples (red, green, blue or alpha) is more
/// than ``threshold`` away from the background's, so a transparent border is trimmed whatever
/// colour it hides. Unlike libvips, no median filter runs first: a lone speck in the border
/// keeps the border up to it (a JPEG's noise stays within a threshold of 10 or so). The frames
/// of an animation are cropped alike, to one box holding every frame's. An image that is all
/// background comes back unchanged.
///
/// ```swift
/// let trimmed = TrimTransformer()                                  // background: the top-left pixel
/// let onWhite = TrimTransformer(threshold: 20, background: .white)
/// ```
public struct TrimTransformer: CancellableImageTransformer, Hashable {
    /// The largest difference a border pixel may have from the background in any sample,
    /// 0…255 (0: only the exact background is trimmed).
    public var threshold: Double
    /// The border's colour (opaque); nil takes the top-left pixel of the first frame.
    public var background: RGBColor?

    /// A transformer trimming a border of `background` (nil: the top-left pixel's colour) and
    /// of pixels within `threshold` of it.
    public init(threshold: Double = 10, background: RGBColor? = nil) {
        self.threshold = threshold
        self.background = background
    }

    /// `trim(THRESHOLD)`, or `trim(THRESHOLD,#rrggbb)` with a background colour.
    public var key: String {
        let t = Operations.keyNumber(threshold)
        return background.map { "trim(\(t),\(Operations.keyColor($0)))" } ?? "trim(\(t))"
    }

    /// The rectangle ``transform(_:cancellation:)`` crops to, one for all frames; nil when the
    /// image is all background. Fails when the threshold is not within 0…255.
    public func bounds(in image: Image, cancellation: DecodeCancellation = DecodeCancellation()) throws -> PixelRect? {
        try validate()
        var box = ic_trim_box()
        var err = ic_error()
        let rgba = background.map { [$0.red, $0.green, $0.blue, 255] }
        let st = withExtendedLifetime(cancellation) {
            if let rgba {
                return ic_find_trim(image.raw, threshold, rgba, cancellation.pointer, &box, &err)
            }
            return ic_find_trim(image.raw, threshold, nil, cancellation.pointer, &box, &err)
        }
        guard st == IC_OK else { throw ImageKitError(status: st, error: err) }
        guard box.width > 0 else { return nil }
        return PixelRect(x: Int(box.x), y: Int(box.y), width: Int(box.width), height: Int(box.height))
    }

    /// The trimmed image (the image itself, copied, when it is all background). Fails when the
    /// threshold is not within 0…255.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        try validate()
        let rgba = background.map { [$0.red, $0.green, $0.blue, 255] }
        return try Operations.run(cancellation) { cancel, out, err in
            if let rgba { return ic_trim(image.raw, threshold, rgba, cancel, out, err) }
            return ic_trim(image.raw, threshold, nil, cancel, out, err)
        }
    }

    /// Fails unless the threshold is within 0…255.
    private func validate() throws {
        guard threshold.isFinite, (0...IC_TRIM_MAX_THRESHOLD).contains(threshold) else {
            throw ImageKitError.invalidArgument("trim: the threshold \(threshold) is not within 0...255")
        }
    }
}
