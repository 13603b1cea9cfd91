import CImageCore
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The head of the final HTTP response of a download (after redirects).
public struct DownloadResponse: Sendable, Hashable {
    /// The HTTP protocol version a response came over.
    public enum HTTPVersion: Sendable, Hashable {
        /// HTTP/1.0.
        case http1_0
        /// HTTP/1.1.
        case http1_1
        /// HTTP/2 (multiplexed streams over TLS).
        case http2
        /// HTTP/3 (QUIC).
        case http3
        /// A version libcurl did not name.
        case unknown
    }

    /// The URL that answered: the request's, or the last redirect's target.
    public var url: URL
    /// The HTTP status, e.g. 200.
    public var statusCode: Int
    /// The response headers in the order received.
    public var headers: HTTPHeaders
    /// The protocol version.
    public var httpVersion: HTTPVersion

    /// A response head.
    public init(url: URL, statusCode: Int, headers: HTTPHeaders, httpVersion: HTTPVersion) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.httpVersion = httpVersion
    }

    /// The media type of Content-Type, lowercased, without parameters (`"image/png"`), or nil.
    public var mimeType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        let trimmed = String(type.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The `ETag` validator, if any.
    public var entityTag: String? { headers["ETag"] }

    /// The `Last-Modified` validator, if any.
    public var lastModified: String? { headers["Last-Modified"] }
}

extension DownloadResponse {
    /// The response head the C engine reported; `requestURL` stands in for the
    /// answering URL when it is the request's own (no redirect).
    init(_ head: ic_fetch_head, requestURL: URL, requestURLString: String) {
        if let answered = head.url, requestURLString.withCString({ strcmp($0, answered) }) != 0 {
            url = URL(string: String(cString: answered)) ?? requestURL
        } else {
            url = requestURL
        }
        statusCode = Int(head.status)
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(head.header_count)
        for i in 0..<head.header_count {
            let h = head.headers[i]
            fields.append(HTTPHeaders.Field(name: Self.text(h.name, h.name_len),
                                            value: Self.text(h.value, h.value_len)))
        }
        headers = HTTPHeaders(fields)
        switch head.http_version {
        case 10: httpVersion = .http1_0
        case 11: httpVersion = .http1_1
        case 20: httpVersion = .http2
        case 30: httpVersion = .http3
        default: httpVersion = .unknown
        }
    }

    private static func text(_ p: UnsafePointer<CChar>?, _ count: Int) -> String {
        guard let p, count > 0 else { return "" }
        return p.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }
}
