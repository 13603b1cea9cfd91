import CImageCore

/// Draws a mark — a logo, a watermark — over the image: once, placed by a gravity and
/// offsets, or tiled over the whole image; with an opacity, optionally scaled to a fraction of
/// the image's width. imgproxy's `watermark`.
///
/// The mark is drawn with Porter-Duff "over" on premultiplied pixels
/// (out = mark · opacity + image · (1 − mark alpha · opacity)); the parts outside the image are
/// clipped. Every frame of an animation gets the same mark (the mark's first frame).
///
/// The transformer never looks at the mark's pixels to compare or name itself: `markKey` names
/// the mark. Two transformers with the same `markKey` and parameters are equal and share a
/// ``key`` (and so cache entries), so give a changed mark a new key (`logo-v4`).
///
/// ```swift
/// let watermark = OverlayTransformer(mark: logo, markKey: "logo-v3", offset: (x: 10, y: 10),
///                                    opacity: 0.5, scale: 0.25)
/// ```
public struct OverlayTransformer: CancellableImageTransformer, Hashable {
    /// The picture drawn over the image (its first frame).
    public var mark: Image
    /// The mark's identity in keys and comparisons: 1…200 characters without `(`, `)`, `,`.
    public var markKey: String
    /// Where the mark sits (``Gravity/smart`` is refused). When tiling, one tile sits there.
    public var gravity: Gravity
    /// Pixels away from the edge the gravity names (imgproxy's x offset): south-east moves
    /// the mark left; along a centred axis, positive moves it right.
    public var offsetX: Int
    /// Pixels away from the edge the gravity names (imgproxy's y offset): south moves the mark
    /// up; along a centred axis, positive moves it down.
    public var offsetY: Int
    /// How much of the mark shows, 0…1.
    public var opacity: Double
    /// The mark's width as a fraction of the image's width (the height follows the mark's
    /// aspect ratio), or nil for the mark at its own size.
    public var scale: Double?
    /// Pixels between tiles when the mark is repeated over the whole image, 0…65536; nil for
    /// one mark.
    public var tileSpacing: Int?

    /// A transformer drawing `mark` (named by `markKey`) at `gravity` moved by `offset`, with
    /// `opacity`, scaled to `scale` of the image's width (nil: its own size), and repeated
    /// over the image with `tile` pixels between tiles (nil: once).
    public init(mark: Image, markKey: String, gravity: Gravity = .southEast, offset: (x: Int, y: Int) = (0, 0),
                opacity: Double = 1, scale: Double? = nil, tile: Int? = nil) {
        self.mark = mark
        self.markKey = markKey
        self.gravity = gravity
        self.offsetX = offset.x
        self.offsetY = offset.y
        self.opacity = opacity
        self.scale = scale
        self.tileSpacing = tile
    }

    /// `overlay(MARK,GRAVITY,X,Y,OPACITY)` followed by `,scale=S` and `,tile=N` when set, e.g.
    /// `overlay(logo-v3,southeast,10,10,0.5,scale=0.25)`.
    public var key: String {
        var parts = [markKey, gravity.key, "\(offsetX)", "\(offsetY)", Operations.keyNumber(opacity)]
        if let scale { parts.append("scale=\(Operations.keyNumber(scale))") }
        if let tileSpacing { parts.append("tile=\(tileSpacing)") }
        return "overlay(\(parts.joined(separator: ",")))"
    }

    /// Equal when the mark keys and every parameter are (the mark's pixels are not compared).
    public static func == (lhs: OverlayTransformer, rhs: OverlayTransformer) -> Bool {
        lhs.key == rhs.key
    }

    /// Hashes the key: the mark key and every parameter.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
    }

    /// The image with the mark drawn over every frame. Fails for a mark key that is empty,
    /// longer than 200 characters or holds `(`, `)` or `,`; smart gravity or a focal point
    /// outside 0…1; offsets beyond ±1048576; an opacity outside 0…1; a scale that is not
    /// positive and finite or makes the mark larger than the default pixel limit (64 Mi); a tile spacing outside
    /// 0…65536.
    public func transform(_ image: Image, cancellation: DecodeCancellation) throws -> Image {
        try validate()
        guard let place = gravity.cValue else {
            throw ImageKitError.invalidArgument("overlay: smart gravity is not available for an overlay; name a place")
        }
        let drawn = try scaledMark(for: image)
        var options = ic_composite_options()
        options.gravity = place
        options.offset_x = Int32(offsetX)
        options.offset_y = Int32(offsetY)
        options.opacity = opacity
        options.tile = tileSpacing == nil ? 0 : 1
        options.spacing = UInt32(tileSpacing ?? 0)
        return try withExtendedLifetime(drawn) {
            try Operations.run(cancellation) { cancel, out, err in
                ic_composite(image.raw, drawn.raw, &options, cancel, out, err)
            }
        }
    }

    /// Fails unless every parameter but the scale is one the operation accepts.
    private func validate() throws {
        guard !markKey.isEmpty, markKey.count <= 200, !markKey.contains(where: { "(),".contains($0) }) else {
            throw ImageKitError.invalidArgument(
                "overlay: the mark key \"\(markKey.prefix(40))\" is not 1...200 characters without '(', ')' or ','")
        }
        try gravity.validate("overlay")
        let maxOffset = Int(IC_COMPOSITE_MAX_OFFSET)
        guard offsetX.magnitude <= maxOffset.magnitude, offsetY.magnitude <= maxOffset.magnitude else {
            throw ImageKitError.invalidArgument("overlay: the offset (\(offsetX), \(offsetY)) is beyond \(maxOffset) pixels")
        }
        guard opacity.isFinite, (0...1).contains(opacity) else {
            throw ImageKitError.invalidArgument("overlay: the opacity \(opacity) is not within 0...1")
        }
        if let tileSpacing, !(0...Int(IC_COMPOSITE_MAX_SPACING)).contains(tileSpacing) {
            throw ImageKitError.invalidArgument(
                "overlay: the tile spacing \(tileSpacing) is not within 0...\(IC_COMPOSITE_MAX_SPACING) pixels")
        }
    }

    /// The mark at its size over `image`: ``scale`` of the image's width, the height following
    /// the mark's aspect ratio (at least one pixel each), resized on premultiplied pixels.
    private func scaledMark(for image: Image) throws -> Image {
        guard let scale else { return mark }
        guard scale.isFinite, scale > 0 else {
            throw ImageKitError.invalidArgument("overlay: the scale \(scale) is not a positive fraction of the width")
        }
        let width = max(1, (scale * Double(image.width)).rounded())
        let height = max(1, (width * Double(mark.height) / Double(mark.width)).rounded())
        let limit = DecodeLimits().maxPixels
        guard width * height <= Double(limit) else {
            throw ImageKitError.invalidArgument(
                "overlay: the mark scaled by \(scale) would have more than \(limit) pixels")
        }
        if Int(width) == mark.width && Int(height) == mark.height { return mark }
        return try ImageResizer(size: PixelSize(width: Int(width), height: Int(height)), mode: .stretch).resize(mark)
    }
}
