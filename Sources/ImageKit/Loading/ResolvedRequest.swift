import CImageCore
import Foundation

/// A request with the configuration applied: everything that goes on the wire.
///
/// Two callers whose requests resolve equal share one transfer, so every
/// request-affecting option is part of this value (the URL alone is not the key:
/// different headers or validators mean different transfers).
struct ResolvedRequest: Hashable, Sendable {
    var url: String
    /// `host:port`, what the per-host limit counts.
    var authority: String
    var method: DownloadRequest.Method
    var headerLines: [String]
    var connectTimeoutMs: UInt32
    var timeoutMs: UInt32
    var lowSpeedBytes: UInt32
    var lowSpeedSeconds: UInt32
    var maxRedirects: UInt32
    var acceptEncoding: Bool
    var verifiesPeer: Bool
    var caFile: String?
    var cookies: Bool
    var maxBodyBytes: UInt64
    var statusMin: Int32
    var statusEnd: Int32
    var range: String?
    var ifNoneMatch: String?
    var ifModifiedSince: String?
    var username: String?
    var password: String?

    /// Whether the request carries validators, so that 304 means "not modified".
    var isConditional: Bool { ifNoneMatch != nil || ifModifiedSince != nil }

    /// Applies `configuration` to `request`; fails on values that cannot go on the wire.
    init(_ request: DownloadRequest, configuration c: DownloaderConfiguration) throws(ImageKitError) {
        url = request.url.absoluteString
        let defaultPort = request.url.scheme?.lowercased() == "https" ? 443 : 80
        authority = "\(request.url.host ?? ""):\(request.url.port ?? defaultPort)"
        method = request.method
        let headers = c.defaultHeaders.merging(request.headers)
        headerLines = []
        headerLines.reserveCapacity(headers.count)
        for field in headers {
            try Self.checkToken(field.name, "header name")
            try Self.checkText(field.value, "value of header \(field.name)")
            headerLines.append("\(field.name): \(field.value)")
        }
        connectTimeoutMs = Self.milliseconds(c.connectTimeout)
        timeoutMs = Self.milliseconds(request.timeout ?? c.timeout)
        lowSpeedBytes = UInt32(clamping: c.lowSpeedLimit?.bytesPerSecond ?? 0)
        lowSpeedSeconds = UInt32(clamping: c.lowSpeedLimit?.seconds ?? 0)
        maxRedirects = UInt32(clamping: c.maxRedirects)
        acceptEncoding = c.acceptsCompressedResponses
        let tls = request.tls ?? c.tls
        verifiesPeer = tls.verifiesPeer
        caFile = tls.caFile
        cookies = c.usesCookies
        maxBodyBytes = UInt64(clamping: max(1, c.maxBodyBytes))
        statusMin = Int32(clamping: c.acceptableStatusCodes.lowerBound)
        statusEnd = Int32(clamping: c.acceptableStatusCodes.upperBound)
        if let r = request.byteRange {
            guard r.lowerBound >= 0 else { throw .invalidArgument("download: byte range \(r) starts below 0") }
            range = "\(r.lowerBound)-\(r.upperBound)"
        }
        if let v = request.validators {
            if let tag = v.entityTag {
                try Self.checkText(tag, "entity tag")
                ifNoneMatch = tag
            }
            if let date = v.lastModified {
                try Self.checkText(date, "Last-Modified date")
                ifModifiedSince = date
            }
        }
        if let cred = c.credentials {
            try Self.checkText(cred.username, "user name")
            username = cred.username
            password = cred.password
        }
    }

    /// Calls `body` with the C request; its strings live until `body` returns.
    func withCRequest<R>(_ body: (inout ic_fetch_request) -> R) -> R {
        var pack = StringPack()
        let urlAt = pack.add(url)
        let headerAt = headerLines.map { pack.add($0) }
        let caAt = caFile.map { pack.add($0) }
        let rangeAt = range.map { pack.add($0) }
        let inmAt = ifNoneMatch.map { pack.add($0) }
        let imsAt = ifModifiedSince.map { pack.add($0) }
        let userAt = username.map { pack.add($0) }
        let passAt = password.map { pack.add($0) }
        return pack.bytes.withUnsafeBufferPointer { bytes in
            let base = bytes.baseAddress!
            func at(_ offset: Int?) -> UnsafePointer<CChar>? { offset.map { base + $0 } }
            let headerPointers: [UnsafePointer<CChar>?] = headerAt.map { base + $0 }
            return headerPointers.withUnsafeBufferPointer { hp in
                var req = ic_fetch_request()
                ic_fetch_request_init(&req)
                req.url = base + urlAt
                req.method = method == .head ? IC_FETCH_HEAD : IC_FETCH_GET
                req.headers = hp.baseAddress
                req.header_count = hp.count
                req.connect_timeout_ms = connectTimeoutMs
                req.timeout_ms = timeoutMs
                req.low_speed_bytes = lowSpeedBytes
                req.low_speed_seconds = lowSpeedSeconds
                req.max_redirects = maxRedirects
                req.accept_encoding = acceptEncoding ? 1 : 0
                req.insecure = verifiesPeer ? 0 : 1
                req.ca_file = at(caAt)
                req.cookies = cookies ? 1 : 0
                req.max_body_bytes = maxBodyBytes
                req.status_min = statusMin
                req.status_end = statusEnd
                req.range = at(rangeAt)
                req.if_none_match = at(inmAt)
                req.if_modified_since = at(imsAt)
                req.username = at(userAt)
                req.password = at(passAt)
                return body(&req)
            }
        }
    }

    /// Whole milliseconds of `d`, at least 1 for a positive duration, 0 for none.
    static func milliseconds(_ d: Duration) -> UInt32 {
        let (seconds, attoseconds) = d.components
        guard seconds > 0 || attoseconds > 0 else { return 0 }
        let ms = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return UInt32(clamping: max(1, ms))
    }

    /// Rejects text that would break the header block (CR, LF, NUL).
    private static func checkText(_ s: String, _ what: String) throws(ImageKitError) {
        if s.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw .invalidArgument("download: the \(what) contains a line break or NUL")
        }
    }

    /// Rejects an empty header name or one with separators, spaces or control characters.
    private static func checkToken(_ s: String, _ what: String) throws(ImageKitError) {
        let bad = s.isEmpty || s.utf8.contains { c in
            c <= 0x20 || c >= 0x7F || c == UInt8(ascii: ":")
        }
        if bad { throw .invalidArgument("download: \"\(s)\" is not a valid \(what)") }
    }
}

/// NUL-terminated strings packed into one buffer, addressed by offset.
private struct StringPack {
    var bytes: [CChar] = []

    mutating func add(_ s: String) -> Int {
        let offset = bytes.count
        bytes.append(contentsOf: s.utf8.map { CChar(bitPattern: $0) })
        bytes.append(0)
        return offset
    }
}
