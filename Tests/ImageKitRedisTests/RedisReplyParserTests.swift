import Foundation
import ImageKit
@testable import ImageKitRedis
import XCTest

/// The RESP reader on its own: every reply type, replies cut anywhere, malformed bytes, and
/// lengths over the limits refused from their header.
final class RedisReplyParserTests: XCTestCase {
    private let parser = RedisReplyParser(limits: .init(maxStringBytes: 1000))

    private func parse(_ text: String, _ parser: RedisReplyParser? = nil) throws -> RedisReplyParser.Outcome {
        try (parser ?? self.parser).parse(Array(text.utf8))
    }

    /// The error `text` makes the parser throw, or nil.
    private func failure(_ text: String, _ parser: RedisReplyParser? = nil) -> ImageKitError? {
        do throws(ImageKitError) {
            _ = try (parser ?? self.parser).parse(Array(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    func testEveryReplyType() throws {
        let cases: [(String, RedisReply)] = [
            ("+OK\r\n", .status("OK")),
            ("+\r\n", .status("")),
            ("-ERR unknown command\r\n", .error("ERR unknown command")),
            (":0\r\n", .integer(0)),
            (":-42\r\n", .integer(-42)),
            (":9223372036854775807\r\n", .integer(.max)),
            ("$5\r\nhello\r\n", .string(Data("hello".utf8))),
            ("$0\r\n\r\n", .string(Data())),
            ("$4\r\na\r\nb\r\n", .string(Data("a\r\nb".utf8))),
            ("$-1\r\n", .null),
            ("*-1\r\n", .null),
            ("*0\r\n", .array([])),
            ("*3\r\n$1\r\na\r\n:7\r\n$-1\r\n", .array([.string(Data("a".utf8)), .integer(7), .null])),
            ("*2\r\n$1\r\n0\r\n*2\r\n$2\r\nk1\r\n$2\r\nk2\r\n",
             .array([.string(Data("0".utf8)), .array([.string(Data("k1".utf8)), .string(Data("k2".utf8))])])),
            ("*2\r\n*1\r\n*1\r\n+deep\r\n-ERR x\r\n", .array([.array([.array([.status("deep")])]), .error("ERR x")])),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try parse(text), .reply(expected, length: text.utf8.count), text.debugDescription)
        }
    }

    func testOnlyTheFirstReplyIsTakenAndTheRestIsLeft() throws {
        let bytes = Array("+OK\r\n:1\r\n$1\r\n".utf8)
        XCTAssertEqual(try parser.parse(bytes), .reply(.status("OK"), length: 5))
        XCTAssertEqual(try parser.parse(bytes, from: 5), .reply(.integer(1), length: 4))
        XCTAssertEqual(try parser.parse(bytes, from: 9), .needMore(atLeast: 7))
    }

    func testEveryCutOfAReplyNeedsMoreAndTheWholeReplyParses() throws {
        let text = "*4\r\n$5\r\nhello\r\n:12\r\n*2\r\n+OK\r\n$-1\r\n-ERR no\r\n"
        let bytes = Array(text.utf8)
        for cut in 0..<bytes.count {
            guard case .needMore(let atLeast) = try parser.parse(Array(bytes[..<cut])) else {
                return XCTFail("\(cut) bytes of \(text.debugDescription) parsed as a whole reply")
            }
            XCTAssertGreaterThan(atLeast, cut)
            XCTAssertLessThanOrEqual(atLeast, bytes.count, "cut at \(cut)")
        }
        // The same bytes arriving one at a time after other data (a reader's buffer).
        let prefix = Array("junk".utf8)
        XCTAssertEqual(try parser.parse(prefix + bytes, from: prefix.count),
                       .reply(.array([.string(Data("hello".utf8)), .integer(12), .array([.status("OK"), .null]),
                                      .error("ERR no")]), length: bytes.count))
    }

    func testABulkStringNeedsExactlyItsBytes() throws {
        XCTAssertEqual(try parse("$1000\r\n"), .needMore(atLeast: 7 + 1000 + 2))
        XCTAssertEqual(try parse("$1000\r\nabc"), .needMore(atLeast: 7 + 1000 + 2))
        XCTAssertEqual(try parse("$3\r\nabc\r"), .needMore(atLeast: 9))
    }

    func testLengthsOverTheLimitAreRefusedFromTheirHeader() {
        // The reply: only the header has arrived.
        let huge = failure("$2000000000\r\n")
        XCTAssertEqual(huge?.code, .responseTooLarge)
        XCTAssertEqual(huge?.message, "a bulk string of 2000000000 bytes, more than the 1000 allowed")
        XCTAssertEqual(failure("$1001\r\n")?.code, .responseTooLarge)
        XCTAssertNotNil(try? parse("$1000\r\n"))
        // Inside an array, and an array whose strings together pass the reply's limit.
        XCTAssertEqual(failure("*2\r\n$1\r\na\r\n$1001\r\n")?.code, .responseTooLarge)
        let small = RedisReplyParser(limits: {
            var limits = RedisReplyParser.Limits(maxStringBytes: 100)
            limits.maxReplyBytes = 150
            return limits
        }())
        XCTAssertNil(failure("*2\r\n$100\r\n", small))
        let twoStrings = "*2\r\n$100\r\n" + String(repeating: "a", count: 100) + "\r\n$100\r\n"
        XCTAssertEqual(failure(twoStrings, small)?.code, .responseTooLarge)
    }

    func testArrayCountsAndNestingOverTheLimitAreRefusedFromTheirHeader() {
        XCTAssertEqual(failure("*2000000000\r\n")?.code, .responseTooLarge)
        XCTAssertEqual(failure("*65537\r\n")?.code, .responseTooLarge)
        XCTAssertNotNil(try? parse("*65536\r\n"))
        // The count is for the whole reply: two arrays of 40,000 are too many together.
        XCTAssertEqual(failure("*2\r\n*40000\r\n" + String(repeating: ":1\r\n", count: 40000) + "*40000\r\n")?.code,
                       .responseTooLarge)
        XCTAssertNotNil(try? parse(String(repeating: "*1\r\n", count: 8) + ":1\r\n"))
        XCTAssertEqual(failure(String(repeating: "*1\r\n", count: 9))?.code, .responseTooLarge)
        XCTAssertEqual(failure(String(repeating: "*1\r\n", count: 100_000))?.code, .responseTooLarge)
    }

    func testALineWithoutItsEndIsRefusedOnceItPassesTheLimit() {
        let long = String(repeating: "a", count: 64 << 10)
        XCTAssertEqual(try parse("+" + long), .needMore(atLeast: (64 << 10) + 2))
        XCTAssertEqual(try parse("+" + long + "\r\n"), .reply(.status(long), length: (64 << 10) + 3))
        XCTAssertEqual(failure("+" + long + "a")?.code, .responseTooLarge)
        XCTAssertEqual(failure("$" + String(repeating: "1", count: 70_000))?.code, .responseTooLarge)
    }

    func testMalformedRepliesAreErrors() {
        let malformed = [
            "?1\r\n",             // no RESP2 type
            "%1\r\n",             // a RESP3 map: never asked for
            "+OK\n",              // LF without CR
            "+O\rK\r\n",          // CR without LF
            ":\r\n",              // no digits
            ":12a\r\n",           // not a number
            ":99999999999999999999\r\n",  // out of range
            "$-2\r\n",            // negative length
            "$ 1\r\n",
            "*-5\r\n",
            "$3\r\nabcde\r\n",    // the string does not end where its length says
            "*1\r\n!\r\n",        // a bad element
        ]
        for text in malformed {
            XCTAssertEqual(failure(text)?.code, .invalidResponse, text.debugDescription)
        }
    }
}
