import CImageCore

/// Keeps one rectangle of the image: a given one, or a window of a given size placed by a
/// gravity — a compass point, a focal point, or where the interest is (``Gravity/smart``).
public struct CroppingTransformer: CancellableImageTransformer, Hashable {
    /// The rectangle to keep. With a ``gravity`` only its size counts (its origin is 0, 0).
    public var rect: PixelRect
    /// `nil`: keep ``rect`` as it is, which must lie inside the image. Otherwise: cut a window
    /// of ``rect``'s size (each side clamped to the image) placed by this gravity.
    public var gravity: Gravity?

    /// A transformer keeping `rect`.
    public init(rect: PixelRect) {
        self.rect = rect
        gravity = nil
    }

    /// A transformer cutting a `size` window (each side clamped to the image) placed by
    /// `gravity`: compass points put it against that edge or corner, a focal point centres it
    /// there as far as it stays inside, ``Gravity/smart`` centres it on the most interesting
    /// part (edges, saturated colour, skin tones; see `ic_attention_window`). Every frame of an
    /// animation is cut alike (smart: chosen on the first frame).
    public init(size: PixelSize, gravity: Gravity = .center) {
        rect = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        self.gravity = gravity
    }

    /// `crop(x,y,WxH)` for a rectangle, `crop(WxH,gravity)` (``Gravity/key``) for a placed window.
    public var key: String {
        guard let gravity else { return "crop(\(rect.x),\(rect.y),\(rect.width)x\(rect.height))" }
        return "crop(\(rect.width)x\(rect.height),\(gravity.key))"
    }

    /// The part of `image` kept; fails when a rectangle is not inside the image, a window's
    /// size is not positive or a focal point is outside 0…1. A smart window's choice stops once
    /// `cancellation` is cancelled.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        guard let gravity else { return try ImageResizer.crop(image, to: rect) }
        guard rect.width > 0, rect.height > 0 else {
            throw ImageKitError.invalidArgument("crop: the window \(rect.width)x\(rect.height) is empty")
        }
        try gravity.validate("crop")
        let width = UInt32(clamping: rect.width), height = UInt32(clamping: rect.height)
        guard var placement = gravity.cValue else {
            return try Operations.run(cancellation) { cancel, out, err in
                ic_crop_placed(image.raw, width, height, nil, cancel, out, err)
            }
        }
        return try Operations.run(cancellation) { cancel, out, err in
            ic_crop_placed(image.raw, width, height, &placement, cancel, out, err)
        }
    }
}
