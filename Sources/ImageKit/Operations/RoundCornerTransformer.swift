import CImageCore

/// Rounds the corners of the image, optionally inside a border — SDWebImage's
/// `SDImageRoundCornerTransformer`; ``circle(borderWidth:borderColor:)`` cuts a circle.
///
/// Outside the rounded rectangle the result is transparent. The edge is anti-aliased: a
/// pixel's coverage is 0.5 minus the signed distance from its centre to the edge, clamped to
/// 0…1, and scales the premultiplied pixel (no dark fringe). A border lies along the inside of
/// the edge, `borderWidth` wide, with its inner corners rounded by `radius - borderWidth`; the
/// image shows only inside it. (SDWebImage clips the image to the rectangle inset by the border
/// width and strokes a line of that width centred about a width in, over the image, which leaves
/// about half a width transparent outside its border; here the border reaches the edge.)
/// Every frame of an animation is rounded alike.
///
/// ```swift
/// let avatar = RoundCornerTransformer.circle(borderWidth: 2, borderColor: .white)
/// let card = RoundCornerTransformer(radius: 16, corners: [.topLeft, .topRight])
/// ```
public struct RoundCornerTransformer: CancellableImageTransformer, Hashable {
    /// Which corners are rounded — SDWebImage's `SDRectCorner`.
    public struct Corners: OptionSet, Sendable, Hashable {
        /// The corners as bits: 1 top left, 2 top right, 4 bottom left, 8 bottom right.
        public let rawValue: UInt32

        /// The corners whose bits are set in `rawValue`.
        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// The top-left corner.
        public static let topLeft = Corners(rawValue: UInt32(IC_CORNER_TOP_LEFT))
        /// The top-right corner.
        public static let topRight = Corners(rawValue: UInt32(IC_CORNER_TOP_RIGHT))
        /// The bottom-left corner.
        public static let bottomLeft = Corners(rawValue: UInt32(IC_CORNER_BOTTOM_LEFT))
        /// The bottom-right corner.
        public static let bottomRight = Corners(rawValue: UInt32(IC_CORNER_BOTTOM_RIGHT))
        /// All four corners.
        public static let all: Corners = [.topLeft, .topRight, .bottomLeft, .bottomRight]
    }

    /// The corner radius in pixels; one larger than half the shorter side is reduced to it.
    /// Ignored by a circle.
    public var radius: Double
    /// The corners rounded (a circle rounds all four).
    public var corners: Corners
    /// The border's width in pixels; 0 for no border.
    public var borderWidth: Double
    /// The border's colour.
    public var borderColor: RGBColor
    /// Whether the image is first cropped to its centred square, then rounded to a circle
    /// (radius half the square's side).
    public var isCircle: Bool

    /// A transformer rounding `corners` with `radius` pixels, inside a border of `borderWidth`
    /// pixels in `borderColor` (none when 0).
    public init(radius: Double, corners: Corners = .all, borderWidth: Double = 0, borderColor: RGBColor = .black) {
        self.radius = radius
        self.corners = corners
        self.borderWidth = borderWidth
        self.borderColor = borderColor
        isCircle = false
    }

    /// A transformer keeping the largest centred circle of the image (its centred square,
    /// rounded by half its side), inside a border of `borderWidth` pixels in `borderColor`.
    public static func circle(borderWidth: Double = 0, borderColor: RGBColor = .black) -> RoundCornerTransformer {
        var transformer = RoundCornerTransformer(radius: 0, borderWidth: borderWidth, borderColor: borderColor)
        transformer.isCircle = true
        return transformer
    }

    /// `round(R,CORNERS[,border=W,#rrggbb])` or `circle([border=W,#rrggbb])`, CORNERS being
    /// `all` or the corners (`tl`, `tr`, `bl`, `br`) joined by `+`.
    public var key: String {
        let border = borderWidth == 0 ? "" : "border=\(Operations.keyNumber(borderWidth)),\(Operations.keyColor(borderColor))"
        if isCircle { return "circle(\(border))" }
        let names: [(Corners, String)] = [(.topLeft, "tl"), (.topRight, "tr"), (.bottomLeft, "bl"), (.bottomRight, "br")]
        let which = corners == .all ? "all" : names.filter { corners.contains($0.0) }.map(\.1).joined(separator: "+")
        return "round(\(Operations.keyNumber(radius)),\(which.isEmpty ? "none" : which)\(border.isEmpty ? "" : ",")\(border))"
    }

    /// The image with its corners rounded (or cut to a circle); every frame alike. Fails when
    /// the radius or border width is negative or not finite, or a corner bit is unknown.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        guard radius.isFinite, radius >= 0, borderWidth.isFinite, borderWidth >= 0 else {
            throw ImageKitError.invalidArgument(
                "round corners: the radius \(radius) and the border width \(borderWidth) must be finite and not negative")
        }
        guard Corners.all.isSuperset(of: corners) else {
            throw ImageKitError.invalidArgument("round corners: unknown corner bits \(corners.rawValue)")
        }
        var source = image
        var radius = radius
        var corners = corners
        if isCircle {
            let side = min(image.width, image.height)
            if image.width != image.height {
                source = try ImageResizer.crop(
                    image, to: PixelRect(x: (image.width - side) / 2, y: (image.height - side) / 2, width: side, height: side))
            }
            radius = Double(side) / 2
            corners = .all
        }
        let border: [UInt8] = [borderColor.red, borderColor.green, borderColor.blue, 255]
        return try Operations.run(cancellation) { cancel, out, err in
            ic_round_corners(source.raw, radius, corners.rawValue, borderWidth, border, cancel, out, err)
        }
    }
}
