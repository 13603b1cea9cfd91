import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request with the configuration applied: everything that goes on the wire.
///
/// Two callers whose requests resolve equal share one transfer, so every
/// request-affecting option is part of this value (the URL alone is not the key:
/// different headers or validators mean different transfers). The hash is worked
/// out once, since the value is looked up several times per download.
struct ResolvedRequest: Hashable, Sendable {
    /// What goes on the wire.
    struct Wire: Hashable, Sendable {
        var url: String
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
        var clientCertificate: ClientCertificate?
        var destinationPolicy: DestinationPolicy
        var proxy: String?
    }

    /// The configuration's part, converted and checked once per downloader.
    struct Defaults: Sendable {
        let wire: Wire
        let headers: HTTPHeaders
        /// The configuration's destination policy, built once.
        let policy: CompiledDestinationPolicy

        /// Checks and converts `c`; fails on a default header, user name, certificate, proxy or
        /// destination policy that cannot be used.
        init(_ c: DownloaderConfiguration) throws(ImageKitError) {
            headers = c.defaultHeaders
            policy = try CompiledDestinationPolicy(c.destinationPolicy)
            try ResolvedRequest.check(c.tls.clientCertificate)
            if let proxy = c.proxy { try ResolvedRequest.checkText(proxy, "proxy") }
            var username: String?
            if let cred = c.credentials {
                try ResolvedRequest.checkText(cred.username, "user name")
                username = cred.username
            }
            wire = Wire(url: "", method: .get, headerLines: try ResolvedRequest.lines(c.defaultHeaders),
                        connectTimeoutMs: ResolvedRequest.milliseconds(c.connectTimeout),
                        timeoutMs: ResolvedRequest.milliseconds(c.timeout),
                        lowSpeedBytes: UInt32(clamping: c.lowSpeedLimit?.bytesPerSecond ?? 0),
                        lowSpeedSeconds: UInt32(clamping: c.lowSpeedLimit?.seconds ?? 0),
                        maxRedirects: UInt32(clamping: c.maxRedirects), acceptEncoding: c.acceptsCompressedResponses,
                        verifiesPeer: c.tls.verifiesPeer, caFile: c.tls.caFile, cookies: c.usesCookies,
                        maxBodyBytes: UInt64(clamping: max(1, c.maxBodyBytes)),
                        statusMin: Int32(clamping: c.acceptableStatusCodes.lowerBound),
                        statusEnd: Int32(clamping: c.acceptableStatusCodes.upperBound),
                        range: nil, ifNoneMatch: nil, ifModifiedSince: nil, username: username,
                        password: c.credentials?.password, clientCertificate: c.tls.clientCertificate,
                        destinationPolicy: c.destinationPolicy, proxy: c.proxy)
        }
    }

    let wire: Wire
    /// The destination policy in force: the configuration's, or the request's own.
    let policy: CompiledDestinationPolicy
    /// `host:port`, what the per-host limit counts.
    let authority: String
    private let hash: Int

    /// The URL as sent.
    var url: String { wire.url }

    /// Whether the request carries validators, so that 304 means "not modified".
    var isConditional: Bool { wire.ifNoneMatch != nil || wire.ifModifiedSince != nil }

    /// Applies the configuration's `defaults` to `request`; fails on values that cannot go on the wire.
    init(_ request: DownloadRequest, defaults: Defaults) throws(ImageKitError) {
        var w = defaults.wire
        w.url = request.url.absoluteString
        w.method = request.method
        if request.headers.count > 0 {
            w.headerLines = try Self.lines(defaults.headers.merging(request.headers))
        }
        if let timeout = request.timeout { w.timeoutMs = Self.milliseconds(timeout) }
        if let tls = request.tls {
            try Self.check(tls.clientCertificate)
            w.verifiesPeer = tls.verifiesPeer
            w.caFile = tls.caFile
            w.clientCertificate = tls.clientCertificate
        }
        if let policy = request.destinationPolicy, policy != defaults.wire.destinationPolicy {
            self.policy = try CompiledDestinationPolicy(policy)
            w.destinationPolicy = policy
        } else {
            self.policy = defaults.policy
        }
        if let cookies = request.usesCookies { w.cookies = cookies }
        if let r = request.byteRange {
            guard r.lowerBound >= 0 else { throw .invalidArgument("download: byte range \(r) starts below 0") }
            w.range = "\(r.lowerBound)-\(r.upperBound)"
        }
        if let v = request.validators {
            if let tag = v.entityTag {
                try Self.checkText(tag, "entity tag")
                w.ifNoneMatch = tag
            }
            if let date = v.lastModified {
                try Self.checkText(date, "Last-Modified date")
                w.ifModifiedSince = date
            }
        }
        wire = w
        let defaultPort = request.url.scheme?.lowercased() == "https" ? 443 : 80
        authority = "\(request.url.host ?? ""):\(request.url.port ?? defaultPort)"
        hash = w.hashValue
    }

    static func == (a: ResolvedRequest, b: ResolvedRequest) -> Bool {
        a.hash == b.hash && a.wire == b.wire
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// `Name: value` lines of `headers`, checked.
    private static func lines(_ headers: HTTPHeaders) throws(ImageKitError) -> [String] {
        var lines: [String] = []
        lines.reserveCapacity(headers.count)
        for field in headers {
            try checkToken(field.name, "header name")
            try checkText(field.value, "value of header \(field.name)")
            lines.append("\(field.name): \(field.value)")
        }
        return lines
    }

    /// Calls `body` with the C request; its strings live until `body` returns.
    func withCRequest<R>(_ body: (inout ic_fetch_request) -> R) -> R {
        var pack = StringPack()
        let urlAt = pack.add(wire.url)
        let headerAt = wire.headerLines.map { pack.add($0) }
        let caAt = wire.caFile.map { pack.add($0) }
        let rangeAt = wire.range.map { pack.add($0) }
        let inmAt = wire.ifNoneMatch.map { pack.add($0) }
        let imsAt = wire.ifModifiedSince.map { pack.add($0) }
        let userAt = wire.username.map { pack.add($0) }
        let passAt = wire.password.map { pack.add($0) }
        let certAt = wire.clientCertificate.map { pack.add($0.certificateFile) }
        let keyAt = wire.clientCertificate?.keyFile.map { pack.add($0) }
        let keyPasswordAt = wire.clientCertificate?.keyPassword.map { pack.add($0) }
        let proxyAt = wire.proxy.map { pack.add($0) }
        return pack.bytes.withUnsafeBufferPointer { bytes in
            // UInt8 and CChar may alias each other.
            let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            func at(_ offset: Int?) -> UnsafePointer<CChar>? { offset.map { base + $0 } }
            let headerPointers: [UnsafePointer<CChar>?] = headerAt.map { base + $0 }
            return headerPointers.withUnsafeBufferPointer { hp in
                var req = ic_fetch_request()
                ic_fetch_request_init(&req)
                req.url = base + urlAt
                req.method = wire.method == .head ? IC_FETCH_HEAD : IC_FETCH_GET
                req.headers = hp.baseAddress
                req.header_count = hp.count
                req.connect_timeout_ms = wire.connectTimeoutMs
                req.timeout_ms = wire.timeoutMs
                req.low_speed_bytes = wire.lowSpeedBytes
                req.low_speed_seconds = wire.lowSpeedSeconds
                req.max_redirects = wire.maxRedirects
                req.accept_encoding = wire.acceptEncoding ? 1 : 0
                req.insecure = wire.verifiesPeer ? 0 : 1
                req.ca_file = at(caAt)
                req.cookies = wire.cookies ? 1 : 0
                req.max_body_bytes = wire.maxBodyBytes
                req.status_min = wire.statusMin
                req.status_end = wire.statusEnd
                req.range = at(rangeAt)
                req.if_none_match = at(inmAt)
                req.if_modified_since = at(imsAt)
                req.username = at(userAt)
                req.password = at(passAt)
                req.client_cert = at(certAt)
                req.client_key = at(keyAt)
                req.client_key_password = at(keyPasswordAt)
                req.proxy = at(proxyAt)
                req.policy = policy.pointer
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

    /// Rejects a client certificate whose file names or password cannot reach libcurl whole.
    private static func check(_ certificate: ClientCertificate?) throws(ImageKitError) {
        guard let certificate else { return }
        try checkText(certificate.certificateFile, "client certificate file name")
        if let key = certificate.keyFile { try checkText(key, "client key file name") }
        if let password = certificate.keyPassword { try checkText(password, "client key password") }
    }

    /// Rejects text that would break the header block (CR, LF, NUL).
    fileprivate static func checkText(_ s: String, _ what: String) throws(ImageKitError) {
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
    var bytes: [UInt8] = []

    mutating func add(_ s: String) -> Int {
        let offset = bytes.count
        bytes.append(contentsOf: s.utf8)
        bytes.append(0)
        return offset
    }
}
