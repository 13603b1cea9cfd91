/// Whether `name` has a path segment that is exactly `..`, spelt plainly or percent-encoded
/// (`%2e`), between separators that may be encoded too (`/`, `\`, `%2f`, `%5c`): such a name
/// would climb out of the origin's folder. Dots inside a segment (`cat..jpg`, `...`) climb
/// nowhere. (A byte scan: the hot path avoids Foundation's decoding.)
func climbsOut(_ name: String) -> Bool {
    var dots = 0, others = 0, bytes = Array(name.utf8)[...]
    func endOfSegment() -> Bool {
        defer { dots = 0; others = 0 }
        return dots == 2 && others == 0
    }
    while let byte = bytes.popFirst() {
        var escaped: UInt8?
        if byte == UInt8(ascii: "%"), bytes.count >= 2,
           let high = hexValue(bytes[bytes.startIndex]), let low = hexValue(bytes[bytes.startIndex + 1]) {
            escaped = high << 4 | low
            bytes = bytes.dropFirst(2)
        }
        switch escaped ?? byte {
        case UInt8(ascii: "/"), UInt8(ascii: "\\"):
            if endOfSegment() { return true }
        case UInt8(ascii: "."):
            dots += 1
        default:
            others += 1
        }
    }
    return endOfSegment()
}

/// The value of an ASCII hex digit, or nil.
private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}
