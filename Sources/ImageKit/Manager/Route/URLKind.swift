/// What an absolute URL string is to the manager, read off its bytes in one pass.
///
/// `URL.scheme` and `URL.host` parse the URL again on every call, which was a quarter of a
/// warm memory hit's cost; the manager only needs the scheme (case-insensitively) and, for
/// http(s), whether the authority names a host.
enum URLKind: Equatable {
    /// `http:` or `https:`, with or without a host (not empty once `user@` and `:port` are
    /// set aside; `[]` is no IPv6 host).
    case web(hasHost: Bool)
    case file
    case other

    /// The kind of `string`, an absolute URL's string.
    init(_ string: String) {
        var string = string
        self = string.withUTF8 { Self.parse($0) }
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> URLKind {
        let colon = b.prefix(8).firstIndex(of: UInt8(ascii: ":")) ?? b.count
        func scheme(_ name: StaticString) -> Bool {
            colon == name.utf8CodeUnitCount
                && (0..<colon).allSatisfy { b[$0] | 0x20 == name.utf8Start[$0] }
        }
        if scheme("file") { return .file }
        guard scheme("http") || scheme("https") else { return .other }
        var i = colon + 1
        guard i + 1 < b.count, b[i] == UInt8(ascii: "/"), b[i + 1] == UInt8(ascii: "/") else {
            return .web(hasHost: false)
        }
        i += 2
        var start = i
        while i < b.count, b[i] != UInt8(ascii: "/"), b[i] != UInt8(ascii: "?"), b[i] != UInt8(ascii: "#") {
            if b[i] == UInt8(ascii: "@") { start = i + 1 }
            i += 1
        }
        guard start < i else { return .web(hasHost: false) }
        if b[start] == UInt8(ascii: "[") { return .web(hasHost: i - start > 2) }  // [IPv6]
        return .web(hasHost: b[start] != UInt8(ascii: ":"))
    }
}
