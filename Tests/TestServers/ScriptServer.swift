import Foundation

/// The Python test server (`http_test_server.py serve`) on 127.0.0.1 (or ::1): the
/// misbehaving answers (slow, reset, short, gated, held) and request counts.
public final class ScriptServer: Sendable {
    /// The port it listens on.
    public let port: Int
    /// The address it listens on, as a URL writes it (`127.0.0.1`, `[::1]`).
    public let host: String
    private let child: ChildProcess

    /// Starts the server on `address` (127.0.0.1, or an IPv6 address such as ::1) and waits for its port.
    public init(address: String = "127.0.0.1") throws {
        host = address.contains(":") ? "[\(address)]" : address
        child = try ChildProcess(["python3", Self.script, "serve", address])
        let line = try child.readLine()
        guard let port = Int(line) else {
            child.stop()
            throw ServerError("the test server printed \"\(line)\" instead of its port")
        }
        self.port = port
    }

    /// `http://HOST:port` followed by `pathAndQuery`.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: "http://\(host):\(port)\(pathAndQuery)")!
    }

    /// How many requests used `key` (a route's `key` query item, else its name), and
    /// whether a held response's client went away before the body was complete.
    public func stats(_ key: String) throws -> (count: Int, aborted: Bool) {
        let body = try Loopback.get(port: port, "/stats?of=\(key)")
        struct Stats: Decodable { let count: Int; let aborted: Bool }
        let s = try JSONDecoder().decode(Stats.self, from: Data(body))
        return (s.count, s.aborted)
    }

    /// Releases every gated request (and later ones) for `key`.
    public func open(_ key: String) throws {
        _ = try Loopback.get(port: port, "/open?of=\(key)")
    }

    /// Stops the server.
    public func stop() {
        child.stop()
    }

    /// The Python script beside this file.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("http_test_server.py").path
    }
}
