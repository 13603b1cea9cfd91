/// An opaque 8-bit RGB colour.
public struct RGBColor: Sendable, Hashable {
    /// Red, 0…255.
    public var red: UInt8
    /// Green, 0…255.
    public var green: UInt8
    /// Blue, 0…255.
    public var blue: UInt8

    /// The colour (`red`, `green`, `blue`).
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// White.
    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    /// Black.
    public static let black = RGBColor(red: 0, green: 0, blue: 0)
}
