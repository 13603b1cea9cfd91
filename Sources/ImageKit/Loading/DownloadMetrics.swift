import CImageCore

/// Timing and size figures of one transfer, from libcurl.
///
/// Times run from the start of the transfer; a figure for a step that did not
/// happen (TLS on plain HTTP, connecting on a reused connection) is zero.
public struct DownloadMetrics: Sendable, Hashable {
    /// Host name resolved.
    public var nameLookup: Duration
    /// TCP connection established.
    public var connect: Duration
    /// TLS handshake completed.
    public var tlsHandshake: Duration
    /// First response byte received.
    public var firstByte: Duration
    /// Whole transfer, redirects included.
    public var total: Duration
    /// Time spent following redirects.
    public var redirectTime: Duration
    /// Redirects followed.
    public var redirectCount: Int
    /// Body bytes received (after content decoding).
    public var bodyBytes: Int64
    /// Body bytes as they came over the wire (fewer than `bodyBytes` when compressed).
    public var wireBodyBytes: Int64
    /// Header bytes received, every response together.
    public var headerBytes: Int64
    /// Connections opened for this transfer (0: an open connection was reused).
    public var newConnections: Int
    /// How many callers shared this transfer when it ended (coalesced requests).
    public var sharedBy: Int

    /// Metrics with every figure given.
    init(nameLookup: Duration, connect: Duration, tlsHandshake: Duration, firstByte: Duration,
                total: Duration, redirectTime: Duration, redirectCount: Int, bodyBytes: Int64,
                wireBodyBytes: Int64, headerBytes: Int64, newConnections: Int, sharedBy: Int) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
        self.redirectTime = redirectTime
        self.redirectCount = redirectCount
        self.bodyBytes = bodyBytes
        self.wireBodyBytes = wireBodyBytes
        self.headerBytes = headerBytes
        self.newConnections = newConnections
        self.sharedBy = sharedBy
    }
}

extension DownloadMetrics {
    /// The figures the C engine measured, for a transfer shared by `sharedBy` callers.
    init(_ m: ic_fetch_metrics, sharedBy: Int) {
        func time(_ us: UInt64) -> Duration { .microseconds(Int64(clamping: us)) }
        self.init(nameLookup: time(m.dns_us), connect: time(m.connect_us), tlsHandshake: time(m.tls_us),
                  firstByte: time(m.first_byte_us), total: time(m.total_us),
                  redirectTime: time(m.redirect_us), redirectCount: Int(m.redirects),
                  bodyBytes: Int64(clamping: m.body_bytes), wireBodyBytes: Int64(clamping: m.wire_body_bytes),
                  headerBytes: Int64(clamping: m.header_bytes),
                  newConnections: Int(m.new_connections), sharedBy: sharedBy)
    }
}
