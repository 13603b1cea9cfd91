import Foundation
import ImageKit
import XCTest

/// The shape of ``ImageKitError``: codes that can grow, details, equality, and the foreign
/// error kept when one is wrapped.
final class ImageKitErrorTests: XCTestCase {
    private struct UserError: Error, CustomStringConvertible {
        var reason: String
        var description: String { "user error: \(reason)" }
    }

    /// What a user's code writes: a switch over the code, which needs `default:` (the codes
    /// are not an enum, so new ones can be added without breaking it).
    private func describe(_ error: ImageKitError) -> String {
        switch error.code {
        case .httpStatus: "status \(error.httpStatus ?? 0)"
        case .timedOut, .connectFailed: "retry"
        case .cancelled: "cancelled"
        default: "other \(error.code)"
        }
    }

    func testSwitchingOverTheCodeWithADefaultMatches() {
        XCTAssertEqual(describe(.httpStatus(404, "HTTP 404")), "status 404")
        XCTAssertEqual(describe(.timedOut("connect timed out")), "retry")
        XCTAssertEqual(describe(.connectFailed("refused")), "retry")
        XCTAssertEqual(describe(.cancelled), "cancelled")
        XCTAssertEqual(describe(.corrupt("PNG: IDAT: CRC error")), "other corrupt")
    }

    func testCodesKeepTheirNumbersAndNames() {
        let table: [(ImageKitError.Code, Int, String)] = [
            (.invalidArgument, 1, "invalid_argument"), (.unknownFormat, 2, "unknown_format"),
            (.unsupportedFormat, 3, "unsupported_format"), (.unsupportedFeature, 4, "unsupported_feature"),
            (.limitExceeded, 5, "limit_exceeded"), (.corrupt, 6, "corrupt"), (.truncated, 7, "truncated"),
            (.outOfMemory, 8, "out_of_memory"), (.io, 9, "io"), (.cancelled, 10, "cancelled"),
            (.encodeFailed, 11, "encode_failed"), (.noSpace, 12, "no_space"), (.internal, 14, "internal"),
            (.httpStatus, 20, "http_status"), (.network, 21, "network"), (.timedOut, 22, "timed_out"),
            (.dnsFailed, 23, "dns_failed"), (.connectFailed, 24, "connect_failed"), (.tlsFailed, 25, "tls_failed"),
            (.responseTooLarge, 26, "response_too_large"), (.tooManyRedirects, 27, "too_many_redirects"),
            (.disallowedProtocol, 28, "disallowed_protocol"), (.invalidURL, 29, "invalid_url"),
            (.unacceptableContentType, 30, "unacceptable_content_type"), (.invalidResponse, 31, "invalid_response"),
            (.transferFailed, 32, "transfer_failed"), (.destinationRefused, 33, "destination_refused"),
            (.blocklisted, 50, "blocklisted"), (.notInCache, 51, "not_in_cache"),
            (.deadlineExceeded, 52, "deadline_exceeded"), (.vetoed, 53, "vetoed"),
            (.transformFailed, 54, "transform_failed"), (.overloaded, 55, "overloaded"), (.shutDown, 56, "shut_down"),
        ]
        for (code, number, name) in table {
            XCTAssertEqual(code.rawValue, number, name)
            XCTAssertEqual(code.name, name)
            XCTAssertEqual("\(code)", name)
        }
        XCTAssertEqual(Set(table.map(\.0)).count, table.count, "every code is distinct")
    }

    func testTheFactoriesCarryTheirDetails() {
        let status = ImageKitError.httpStatus(410, "HTTP 410 Gone")
        XCTAssertEqual(status.code, .httpStatus)
        XCTAssertEqual(status.httpStatus, 410)
        XCTAssertEqual(status.message, "HTTP 410 Gone")
        XCTAssertEqual("\(status)", "HTTP 410 Gone")
        XCTAssertNil(status.format)
        XCTAssertNil(status.underlying)

        let tiff = ImageKitError.unsupportedFormat(.tiff, "unsupported format: TIFF")
        XCTAssertEqual(tiff.code, .unsupportedFormat)
        XCTAssertEqual(tiff.format, .tiff)
        XCTAssertNil(tiff.httpStatus)

        let curl = ImageKitError.transferFailed(curlCode: 56, "recv failure")
        XCTAssertEqual(curl.code, .transferFailed)
        XCTAssertEqual(curl.curlCode, 56)

        let blocked = ImageKitError.blocklisted("refused until it expires", original: status)
        XCTAssertEqual(blocked.code, .blocklisted)
        XCTAssertEqual(blocked.original, status)
        XCTAssertEqual(blocked.suggestedHTTPStatus, 410, "a blocklisted URL answers as its original failure")
        XCTAssertNil(ImageKitError(code: .internal, message: "x", underlying: status).original,
                     "only a blocklisted error has an original")

        XCTAssertEqual(ImageKitError.cancelled.code, .cancelled)
        XCTAssertEqual(ImageKitError.cancelled.message, "cancelled")
    }

    func testEqualityComparesCodeMessageAndDetailsButNotAForeignUnderlyingError() {
        XCTAssertEqual(ImageKitError.corrupt("bad"), .corrupt("bad"))
        XCTAssertNotEqual(ImageKitError.corrupt("bad"), .corrupt("worse"), "the message counts")
        XCTAssertNotEqual(ImageKitError.corrupt("bad"), .truncated("bad"), "the code counts")
        XCTAssertNotEqual(ImageKitError.httpStatus(404, "HTTP error"), .httpStatus(410, "HTTP error"),
                          "the details count")
        XCTAssertNotEqual(ImageKitError.unsupportedFormat(.tiff, "unsupported"),
                          .unsupportedFormat(.heic, "unsupported"))
        XCTAssertNotEqual(ImageKitError.blocklisted("refused", original: .httpStatus(404, "HTTP 404")),
                          .blocklisted("refused", original: .httpStatus(410, "HTTP 404")),
                          "an underlying ImageKitError (the original) counts")
        // A foreign error cannot be compared: two errors saying the same are equal whatever they wrap.
        XCTAssertEqual(ImageKitError(code: .internal, message: "x", underlying: UserError(reason: "a")),
                       ImageKitError(code: .internal, message: "x", underlying: UserError(reason: "b")))
        XCTAssertEqual(ImageKitError(code: .internal, message: "x", underlying: UserError(reason: "a")),
                       ImageKitError.internal("x"))
    }

    func testCancelledStillMatchesAsAPatternAndInACatch() {
        func cancelledWork() throws(ImageKitError) { throw ImageKitError(wrapping: CancellationError()) }
        // The expression patterns compare with ==: every cancellation is the same error.
        let error = ImageKitError(wrapping: CancellationError())
        guard case .cancelled = error else { return XCTFail("\(error)") }
        do {
            try cancelledWork()
        } catch ImageKitError.cancelled {
        } catch {
            XCTFail("\(error)")
        }
        do {
            try cancelledWork()
        } catch .cancelled {
        } catch {
            XCTFail("\(error)")
        }
    }

    func testWrappingKeepsTheForeignErrorAndItsSentence() {
        let wrapped = ImageKitError(wrapping: UserError(reason: "no thumbnails on Sundays"))
        XCTAssertEqual(wrapped.code, .internal)
        XCTAssertEqual(wrapped.message, "user error: no thumbnails on Sundays")
        XCTAssertEqual((wrapped.underlying as? UserError)?.reason, "no thumbnails on Sundays")
        // An ImageKitError is itself, not wrapped again.
        let own = ImageKitError.noSpace("disk full")
        let again = ImageKitError(wrapping: own)
        XCTAssertEqual(again, own)
        XCTAssertNil(again.underlying)
    }

    func testTheSynchronousCallsThrowImageKitErrorStatically() throws {
        // No cast: `error` is an ImageKitError because the calls declare `throws(ImageKitError)`.
        do {
            _ = try ImageDecoder().decode(Data("not an image".utf8))
            XCTFail("text decoded")
        } catch {
            XCTAssertEqual(error.code, .unknownFormat)
        }
        do {
            _ = try ImageDecoder.info(Array("still not an image".utf8))
            XCTFail("text probed")
        } catch {
            XCTAssertEqual(error.code, .unknownFormat, error.message)
        }
        do {
            _ = try Image(width: 2, height: 2, premultipliedRGBA: [0, 0, 0])
            XCTFail("3 bytes made a 2x2 image")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        let image = try Image(width: 1, height: 1, premultipliedRGBA: [0, 0, 0, 255])
        do {
            _ = try ImageEncoder.encode(image, as: .png(), frame: 1)
            XCTFail("frame 1 of 1 encoded")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
    }
}
