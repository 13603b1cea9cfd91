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

extension RGBColor {
    /// The colour written `#rrggbb` or `rrggbb` (hexadecimal digits, either case), as keys,
    /// command lines and query strings write it; nil for anything else.
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring(hex)
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else {
            return nil
        }
        self.init(red: UInt8(value >> 16), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
    }
}
