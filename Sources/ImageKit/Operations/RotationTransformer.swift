import CImageCore

/// Rotates the image clockwise: by quarter turns exactly (pixels are moved, not resampled), or
/// by any angle with a bicubic interpolator — SDWebImage's `SDImageRotationTransformer`,
/// libvips's `rotate`, imgproxy's `rotate`.
///
/// Angles are degrees clockwise on screen, as libvips and imgproxy take them. SDWebImage's
/// `angle` is radians counter-clockwise: pass `-radians * 180 / .pi`. With ``fitSize`` the canvas
/// grows to hold the whole rotated image (ceil(W·|cos θ| + H·|sin θ|) by ceil(W·|sin θ| + H·|cos θ|));
/// without, it keeps the source size and the corners are cut. Uncovered canvas is the
/// ``background``, and the image's edge is anti-aliased against it. Pixels are sampled with
/// the Catmull-Rom bicubic on premultiplied colour, so transparent areas never darken their
/// neighbours. An angle that is a multiple of 90° takes the exact path (and key) of
/// ``init(quarterTurns:)``. Every frame of an animation is rotated alike.
///
/// ```swift
/// let tilted = try RotationTransformer(angle: 12.5, background: .color(RGBColor(red: 255, green: 255, blue: 255)))
///     .transform(image)
/// ```
public struct RotationTransformer: CancellableImageTransformer, Hashable {
    /// The rotation in degrees clockwise, within 0..<360 (a multiple of 90 for quarter turns).
    public let angle: Double
    /// Whether the canvas grows to hold the whole rotated image (else it keeps the source size).
    public let fitSize: Bool
    /// What fills the canvas the rotated image does not cover.
    public let background: Background
    /// Bounds on the rotated canvas, checked before it is allocated (its pixels a frame against
    /// `maxPixels`, the bytes of every frame against `maxMemoryBytes`). Not part of the ``key``.
    public let limits: DecodeLimits

    /// A transformer rotating by `quarterTurns` × 90° clockwise (−1 is a quarter turn counter-clockwise).
    public init(quarterTurns: Int) {
        angle = Double(((quarterTurns % 4) + 4) % 4) * 90
        fitSize = true
        background = .transparent
        limits = DecodeLimits()
    }

    /// A transformer rotating by `angle` degrees clockwise (any finite angle; it is reduced to
    /// 0..<360), growing the canvas to fit when `fitSize`, uncovered canvas filled with
    /// `background`. A multiple of 90° that keeps every pixel (with `fitSize`, or a half turn)
    /// is the exact quarter-turn rotation.
    public init(angle: Double, fitSize: Bool = true, background: Background = .transparent,
                limits: DecodeLimits = DecodeLimits()) {
        var degrees = angle.truncatingRemainder(dividingBy: 360)
        if degrees < 0 { degrees += 360 }
        if degrees == 360 { degrees = 0 }
        let exact = degrees.truncatingRemainder(dividingBy: 90) == 0
            && (fitSize || degrees.truncatingRemainder(dividingBy: 180) == 0)
        self.angle = degrees.isNaN ? angle : degrees + 0.0
        self.fitSize = exact || fitSize
        self.background = exact ? .transparent : background
        self.limits = limits
    }

    /// Whether the rotation moves pixels exactly (a multiple of 90° keeping every pixel).
    public var isExact: Bool {
        fitSize && angle.truncatingRemainder(dividingBy: 90) == 0
    }

    /// The whole quarter turns clockwise in ``angle``, 0…3: the whole rotation when ``isExact``.
    public var quarterTurns: Int {
        angle.isFinite ? Int(angle / 90) : 0
    }

    /// `rotate(90)`, `rotate(180)`, `rotate(270)` or `rotate(0)` for the exact rotations; else
    /// `rotate(angle,fit|crop,background)`, e.g. `rotate(12.5,fit,transparent)` or
    /// `rotate(30.0,crop,#ffffff)`.
    public var key: String {
        if isExact { return "rotate(\(quarterTurns * 90))" }
        return "rotate(\(Operations.keyNumber(angle)),\(fitSize ? "fit" : "crop"),\(background.key))"
    }

    /// The image rotated; every frame of an animation alike. Throws
    /// ``ImageKitError/Code/invalidArgument`` for an angle that is not a finite number and
    /// ``ImageKitError/Code/limitExceeded`` when the grown canvas would pass ``limits``.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        guard angle.isFinite else {
            throw ImageKitError.invalidArgument("rotate: the angle \(angle) is not a finite number of degrees")
        }
        if isExact {
            switch quarterTurns {
            case 1: return try image.oriented(.right)
            case 2: return try image.oriented(.down)
            case 3: return try image.oriented(.left)
            default: return image
            }
        }
        let fill = background.premultipliedRGBA, bounds = limits.cValue
        return try Operations.run(cancellation) { cancel, out, err in
            withUnsafePointer(to: bounds) { ic_rotate(image.raw, angle, fitSize ? 1 : 0, fill, $0, cancel, out, err) }
        }
    }
}
