/// What fills canvas an operation adds around the image (a rotation by an angle that is not a
/// quarter turn, padding): a colour, or nothing (transparent).
public enum Background: Sendable, Hashable {
    /// Transparent pixels: the output has alpha.
    case transparent
    /// An opaque colour.
    case color(RGBColor)

    /// How the background is written in transformer keys: `transparent` or `#rrggbb`.
    public var key: String {
        switch self {
        case .transparent: "transparent"
        case .color(let c): Operations.keyColor(c)
        }
    }

    /// Premultiplied red, green, blue and alpha, as the C operations take it.
    var premultipliedRGBA: [UInt8] {
        switch self {
        case .transparent: [0, 0, 0, 0]
        case .color(let c): [c.red, c.green, c.blue, 255]
        }
    }
}
