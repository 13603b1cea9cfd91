import CImageCore

/// Where a window is placed in an image: cropping and filling a box keep the part of the image
/// it names, padding puts the image there on the larger canvas, an overlay sits there on the
/// image. imgproxy's gravity.
public enum Gravity: Sendable, Hashable {
    /// The middle.
    case center
    /// The top edge, centred across.
    case north
    /// The top-right corner.
    case northEast
    /// The right edge, centred down.
    case east
    /// The bottom-right corner.
    case southEast
    /// The bottom edge, centred across.
    case south
    /// The bottom-left corner.
    case southWest
    /// The left edge, centred down.
    case west
    /// The top-left corner.
    case northWest
    /// Centred on the point (`x`, `y`), fractions 0…1 of the width and height, as far as the
    /// window can be while staying inside.
    case focalPoint(x: Double, y: Double)
    /// Where the interest is — edges, saturated colour, skin tones — found in the image itself
    /// (only where a window is cut from an image: cropping and filling).
    case smart

    /// How the gravity is written in transformer keys: `center`, `north`, `northeast`, …,
    /// `focus(0.25,0.5)`, `smart`.
    public var key: String {
        switch self {
        case .center: "center"
        case .north: "north"
        case .northEast: "northeast"
        case .east: "east"
        case .southEast: "southeast"
        case .south: "south"
        case .southWest: "southwest"
        case .west: "west"
        case .northWest: "northwest"
        case .focalPoint(let x, let y): "focus(\(Operations.keyNumber(x)),\(Operations.keyNumber(y)))"
        case .smart: "smart"
        }
    }

    /// The gravity a key names (``key``'s inverse, also for command lines and query strings);
    /// nil for anything else, a focal point outside 0…1 included.
    public init?(key: String) {
        let named: [String: Gravity] = [
            "center": .center, "north": .north, "northeast": .northEast, "east": .east,
            "southeast": .southEast, "south": .south, "southwest": .southWest, "west": .west,
            "northwest": .northWest, "smart": .smart,
        ]
        if let gravity = named[key] {
            self = gravity
            return
        }
        guard key.hasPrefix("focus("), key.hasSuffix(")") else { return nil }
        let numbers = key.dropFirst(6).dropLast().split(separator: ",", omittingEmptySubsequences: false)
        guard numbers.count == 2, let x = Double(numbers[0]), let y = Double(numbers[1]),
              (0...1).contains(x), (0...1).contains(y)
        else { return nil }
        self = .focalPoint(x: x, y: y)
    }

    /// Fails unless a focal point lies within 0…1 on both axes.
    func validate(_ operation: String) throws(ImageKitError) {
        if case .focalPoint(let x, let y) = self, !((0...1).contains(x) && (0...1).contains(y)) {
            throw ImageKitError.invalidArgument(
                "\(operation): the focal point (\(x), \(y)) is not within 0...1 on both axes")
        }
    }

    /// The C placement; nil for ``smart``, which the caller resolves from the image.
    var cValue: ic_gravity? {
        let kind: ic_gravity_kind
        switch self {
        case .center: kind = IC_GRAVITY_CENTRE
        case .north: kind = IC_GRAVITY_NORTH
        case .northEast: kind = IC_GRAVITY_NORTH_EAST
        case .east: kind = IC_GRAVITY_EAST
        case .southEast: kind = IC_GRAVITY_SOUTH_EAST
        case .south: kind = IC_GRAVITY_SOUTH
        case .southWest: kind = IC_GRAVITY_SOUTH_WEST
        case .west: kind = IC_GRAVITY_WEST
        case .northWest: kind = IC_GRAVITY_NORTH_WEST
        case .focalPoint(let x, let y): return ic_gravity(kind: IC_GRAVITY_FOCUS, x: x, y: y)
        case .smart: return nil
        }
        return ic_gravity(kind: kind, x: 0.5, y: 0.5)
    }
}
