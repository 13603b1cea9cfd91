import CImageCore

/// Pads the image: every frame placed on a larger canvas of one background, either with a
/// number of pixels added on each side or extended the shorter way to an aspect ratio
/// (imgproxy's `padding` and `extend_aspect_ratio`).
///
/// ```swift
/// let framed = PaddingTransformer(top: 10, right: 20, bottom: 10, left: 20, background: .color(.white))
/// let square = PaddingTransformer(aspectRatio: 1, gravity: .center, background: .transparent)
/// ```
public struct PaddingTransformer: CancellableImageTransformer, Hashable {
    /// How the canvas is sized.
    public enum Form: Sendable, Hashable {
        /// The given pixels added on each side.
        case sides(top: Int, right: Int, bottom: Int, left: Int)
        /// The canvas widened or heightened (never both) until its width / height is `ratio`,
        /// the image placed on it by `gravity`.
        case aspectRatio(Double, gravity: Gravity)
    }

    /// How the canvas is sized.
    public var form: Form
    /// What fills the canvas around the image.
    public var background: Background

    /// A transformer adding `top`, `right`, `bottom` and `left` pixels (each 0 or more) of
    /// `background` around the image.
    public init(top: Int, right: Int, bottom: Int, left: Int, background: Background) {
        self.form = .sides(top: top, right: right, bottom: bottom, left: left)
        self.background = background
    }

    /// A transformer extending the canvas the shorter way until its width / height is
    /// `aspectRatio` (its new side rounded to the nearest pixel; an image already of that ratio
    /// is only copied), with the image placed by `gravity` (offsets rounded down; not
    /// ``Gravity/smart``).
    public init(aspectRatio: Double, gravity: Gravity = .center, background: Background) {
        self.form = .aspectRatio(aspectRatio, gravity: gravity)
        self.background = background
    }

    /// `pad(TOP,RIGHT,BOTTOM,LEFT,BACKGROUND)` or `extend(RATIO,GRAVITY,BACKGROUND)`, e.g.
    /// `pad(10,20,10,20,#ffffff)`, `extend(1.5,center,transparent)`.
    public var key: String {
        switch form {
        case .sides(let top, let right, let bottom, let left):
            "pad(\(top),\(right),\(bottom),\(left),\(background.key))"
        case .aspectRatio(let ratio, let gravity):
            "extend(\(Operations.keyNumber(ratio)),\(gravity.key),\(background.key))"
        }
    }

    /// The padded image; every frame alike, delays and loop count kept. Fails when a side is
    /// negative, the ratio is not a positive number, the gravity is smart or a focal point
    /// outside 0…1, or the canvas would be over the pixel limit (64 Mi pixels).
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        let place = try placement(width: image.width, height: image.height)
        let rgba = background.premultipliedRGBA
        return try Operations.run(cancellation) { cancel, out, err in
            ic_embed(image.raw, UInt32(place.width), UInt32(place.height), UInt32(place.x), UInt32(place.y), rgba,
                     cancel, out, err)
        }
    }

    /// The canvas (its size) and where the image's top-left corner goes on it (its origin).
    private func placement(width: Int, height: Int) throws -> PixelRect {
        let canvas: PixelRect
        switch form {
        case .sides(let top, let right, let bottom, let left):
            let limit = Int(UInt32.max)
            guard [top, right, bottom, left].allSatisfy({ (0...limit).contains($0) }) else {
                throw ImageKitError.invalidArgument(
                    "pad: the padding (\(top), \(right), \(bottom), \(left)) is not within 0...\(limit) pixels a side")
            }
            canvas = PixelRect(x: left, y: top, width: width + left + right, height: height + top + bottom)
        case .aspectRatio(let ratio, let gravity):
            canvas = try extended(width: width, height: height, ratio: ratio, gravity: gravity)
        }
        let limit = Self.maximumPixels
        guard Double(canvas.width) * Double(canvas.height) <= Double(limit) else {
            throw ImageKitError.limitExceeded(
                "\(operation): the canvas \(canvas.width)x\(canvas.height) is over the limit of \(limit) pixels")
        }
        return canvas
    }

    /// The largest canvas, in pixels: the core's default pixel limit, as decoding and resizing
    /// keep to it.
    public static var maximumPixels: Int { DecodeLimits().maxPixels }

    /// The operation's name in messages.
    private var operation: String {
        if case .sides = form { return "pad" }
        return "extend"
    }

    /// The canvas of the aspect-ratio form and the image's place on it.
    private func extended(width: Int, height: Int, ratio: Double, gravity: Gravity) throws -> PixelRect {
        guard ratio.isFinite, ratio > 0 else {
            throw ImageKitError.invalidArgument("extend: the aspect ratio \(ratio) is not a positive number")
        }
        try gravity.validate("extend")
        guard var g = gravity.cValue else {
            throw ImageKitError.invalidArgument(
                "extend: smart gravity finds a window to cut from an image; padding places the image by a compass point or a focal point")
        }
        let w = Double(width), h = Double(height)
        // The new side, never below the old one; at most the limit on one side, so it converts.
        let cap = Double(Self.maximumPixels) + 1
        let outerW = w / h < ratio ? min(cap, max(w, (h * ratio).rounded())) : w
        let outerH = w / h > ratio ? min(cap, max(h, (w / ratio).rounded())) : h
        var x = 0.0, y = 0.0
        ic_gravity_place(&g, outerW, outerH, w, h, &x, &y)
        return PixelRect(x: Int(x.rounded(.down)), y: Int(y.rounded(.down)), width: Int(outerW), height: Int(outerH))
    }
}
