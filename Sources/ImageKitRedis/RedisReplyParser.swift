import ImageKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads one RESP2 reply (simple string, error, integer, bulk string, nil, arrays of those) out
/// of the bytes a node has sent so far. Pure: bytes in, a reply or "need more" or an error out.
///
/// Every length is checked as soon as its header is read, before anything of that size is
/// allocated or waited for: a bulk string longer than ``Limits/maxStringBytes``, a reply longer
/// than ``Limits/maxReplyBytes`` in all, more than ``Limits/maxElements`` array elements or
/// arrays nested deeper than ``Limits/maxDepth`` are refused at once.
struct RedisReplyParser: Sendable {
    /// What one reply may cost.
    struct Limits: Sendable, Equatable {
        /// The longest bulk string.
        var maxStringBytes: Int
        /// The longest reply as sent, headers and nested elements included.
        var maxReplyBytes: Int
        /// The longest line: a simple string, an error or a header, without its CRLF.
        var maxLineBytes = 64 << 10
        /// The most array elements in one reply, nested ones included.
        var maxElements = 65_536
        /// The deepest nesting of arrays (an array of strings is depth 1).
        var maxDepth = 8

        /// Strings of at most `maxStringBytes` bytes, in a reply of at most that plus 1 MiB
        /// (room for the headers of a `SCAN` page or a pipelined array).
        init(maxStringBytes: Int) {
            self.maxStringBytes = maxStringBytes
            maxReplyBytes = maxStringBytes + (1 << 20)
        }
    }

    /// What the bytes held.
    enum Outcome: Equatable {
        /// A whole reply, the first `length` bytes.
        case reply(RedisReply, length: Int)
        /// Part of a reply: it is at least `atLeast` bytes long (never more than the limits allow).
        case needMore(atLeast: Int)
    }

    /// The limits every reply is held to.
    let limits: Limits

    /// A parser holding replies to `limits`.
    init(limits: Limits) {
        self.limits = limits
    }

    /// The reply at the start of `bytes[start...]`, or how many bytes (counted from `start`) it
    /// needs at least.
    ///
    /// - Throws: ``ImageKitError/responseTooLarge(_:)`` for a reply over the limits;
    ///   ``ImageKitError/invalidResponse(_:)`` for bytes that are not RESP.
    func parse(_ bytes: [UInt8], from start: Int = 0) throws(ImageKitError) -> Outcome {
        var elements = 0
        switch try value(bytes, at: start, start: start, depth: 0, elements: &elements) {
        case .value(let reply, let end):
            return .reply(reply, length: end - start)
        case .incomplete(let end):
            try checkLength(end - start)
            return .needMore(atLeast: end - start)
        }
    }

    /// A reply (ending at index `end`), or a part of one that needs bytes up to index `end`.
    private enum Step {
        case value(RedisReply, end: Int)
        case incomplete(end: Int)
    }

    private static let cr: UInt8 = 13, lf: UInt8 = 10

    /// The value at `index`, the reply having begun at `start`.
    private func value(_ bytes: [UInt8], at index: Int, start: Int, depth: Int,
                       elements: inout Int) throws(ImageKitError) -> Step {
        guard index < bytes.count else { return .incomplete(end: index + 1) }
        let kind = bytes[index]
        guard let line = try self.line(bytes, from: index + 1, start: start) else {
            return .incomplete(end: bytes.count + 1)
        }
        let next = line.upperBound + 2
        switch kind {
        case UInt8(ascii: "+"):
            return .value(.status(String(decoding: bytes[line], as: UTF8.self)), end: next)
        case UInt8(ascii: "-"):
            return .value(.error(String(decoding: bytes[line], as: UTF8.self)), end: next)
        case UInt8(ascii: ":"):
            return .value(.integer(try Self.integer(bytes[line])), end: next)
        case UInt8(ascii: "$"):
            let length = try Self.integer(bytes[line])
            if length == -1 { return .value(.null, end: next) }
            guard length >= 0 else { throw .invalidResponse("a bulk string of length \(length)") }
            guard length <= limits.maxStringBytes else {
                throw .responseTooLarge("a bulk string of \(length) bytes, more than the \(limits.maxStringBytes) allowed")
            }
            let end = next + Int(length) + 2
            try checkLength(end - start)
            guard end <= bytes.count else { return .incomplete(end: end) }
            guard bytes[end - 2] == Self.cr, bytes[end - 1] == Self.lf else {
                throw .invalidResponse("a bulk string of \(length) bytes not followed by CRLF")
            }
            return .value(.string(Data(bytes[next..<end - 2])), end: end)
        case UInt8(ascii: "*"):
            let count = try Self.integer(bytes[line])
            if count == -1 { return .value(.null, end: next) }
            guard count >= 0 else { throw .invalidResponse("an array of length \(count)") }
            guard depth < limits.maxDepth else {
                throw .responseTooLarge("arrays nested more than \(limits.maxDepth) deep")
            }
            guard count <= limits.maxElements - elements else {
                throw .responseTooLarge("an array of \(count) elements, more than the \(limits.maxElements) allowed in a reply")
            }
            elements += Int(count)
            var items: [RedisReply] = []
            var position = next
            for _ in 0..<count {
                switch try value(bytes, at: position, start: start, depth: depth + 1, elements: &elements) {
                case .value(let item, let end):
                    items.append(item)
                    position = end
                case .incomplete(let end):
                    return .incomplete(end: end)
                }
            }
            return .value(.array(items), end: position)
        default:
            throw .invalidResponse("a reply starting with byte \(kind), which is no RESP2 type")
        }
    }

    /// The line starting at `index` (without its CRLF), or nil when its end has not arrived yet.
    private func line(_ bytes: [UInt8], from index: Int, start: Int) throws(ImageKitError) -> Range<Int>? {
        let limit = min(bytes.count, index + limits.maxLineBytes + 1)
        var i = index
        while i < limit {
            switch bytes[i] {
            case Self.cr:
                guard i + 1 < bytes.count else { return nil }
                guard bytes[i + 1] == Self.lf else { throw .invalidResponse("a CR not followed by LF in a line") }
                try checkLength(i + 2 - start)
                return index..<i
            case Self.lf:
                throw .invalidResponse("an LF not preceded by CR in a line")
            default:
                i += 1
            }
        }
        guard limit < bytes.count || bytes.count - index > limits.maxLineBytes else { return nil }
        throw .responseTooLarge("a line longer than the \(limits.maxLineBytes) bytes allowed")
    }

    /// Throws unless a reply of `length` bytes is within the limits.
    private func checkLength(_ length: Int) throws(ImageKitError) {
        guard length <= limits.maxReplyBytes else {
            throw .responseTooLarge("a reply of at least \(length) bytes, more than the \(limits.maxReplyBytes) allowed")
        }
    }

    /// The decimal integer `digits` (an optional minus, then 1 to 19 digits).
    private static func integer(_ digits: ArraySlice<UInt8>) throws(ImageKitError) -> Int64 {
        let negative = digits.first == UInt8(ascii: "-")
        let body = negative ? digits.dropFirst() : digits
        guard !body.isEmpty, body.count <= 19 else {
            throw .invalidResponse("\"\(String(decoding: digits.prefix(24), as: UTF8.self))\" is not an integer")
        }
        var value: Int64 = 0
        for byte in body {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                throw .invalidResponse("\"\(String(decoding: digits.prefix(24), as: UTF8.self))\" is not an integer")
            }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else {
                throw .invalidResponse("\"\(String(decoding: digits, as: UTF8.self))\" is out of range")
            }
            value = sum
        }
        return negative ? -value : value
    }
}
