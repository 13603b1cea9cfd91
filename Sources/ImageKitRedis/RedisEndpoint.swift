import ImageKit

/// One Redis node: a host and a TCP port.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The node's host name or IP address.
    public let host: String
    /// The node's TCP port.
    public let port: Int

    /// The node at `host`:`port`.
    public init(host: String, port: Int = 6379) {
        self.host = host
        self.port = port
    }

    /// The node a `redis://HOST[:PORT]` URL names (port 6379 when absent).
    ///
    /// - Throws: ``ImageKitError/invalidArgument(_:)`` when `url` is not of that form (other
    ///   schemes, a path, credentials: give those in ``RedisTierConfiguration``).
    public init(url: String) throws(ImageKitError) {
        let prefix = "redis://"
        let shown = MessageURL.describe(url)  // without the credentials it may wrongly hold
        guard url.lowercased().hasPrefix(prefix) else {
            throw .invalidArgument("\"\(shown)\" is not a redis:// URL")
        }
        var rest = Substring(url.dropFirst(prefix.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@") else {
            throw .invalidArgument("\"\(shown)\" must be redis://HOST[:PORT] (credentials go in the configuration)")
        }
        var port = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let parsed = Int(rest[rest.index(after: colon)...]), (1...65535).contains(parsed) else {
                throw .invalidArgument("\"\(shown)\" has no valid port (1-65535)")
            }
            port = parsed
            rest = rest[..<colon]
        }
        if rest.hasPrefix("["), rest.hasSuffix("]") { rest = rest.dropFirst().dropLast() }
        guard !rest.isEmpty else { throw .invalidArgument("\"\(shown)\" has no host") }
        self.init(host: String(rest), port: port)
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }
}
