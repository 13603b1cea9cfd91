/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Repeated names stay repeated, in the order they were added or received.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name as written (lookups ignore ASCII case).
        public var name: String
        /// The value, without surrounding white space.
        public var value: String

        /// A field named `name` with `value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Headers with the given fields, in order.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// Headers from `(name, value)` pairs, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value for `name` (any case), or nil. Setting replaces every field of that name.
    public subscript(name: String) -> String? {
        get { fields.first { Self.same($0.name, name) }?.value }
        set {
            remove(name: name)
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    /// Every value for `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field named `name` (any case).
    public mutating func remove(name: String) {
        fields.removeAll { Self.same($0.name, name) }
    }

    /// Whether a field named `name` (any case) exists.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.same($0.name, name) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// The fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// These headers with `other`'s fields replacing the fields of the same names.
    func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        var merged = HTTPHeaders(fields.filter { field in !other.contains(field.name) })
        merged.fields.append(contentsOf: other.fields)
        return merged
    }

    /// Compares two header names ignoring ASCII case, without allocating.
    static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8) { x, y in lowerASCII(x) == lowerASCII(y) }
    }

    private static func lowerASCII(_ c: UInt8) -> UInt8 {
        c >= 0x41 && c <= 0x5A ? c | 0x20 : c
    }
}
