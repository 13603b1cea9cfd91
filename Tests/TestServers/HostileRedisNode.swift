import Foundation

/// A fake Redis node on 127.0.0.1 (`hostile_redis_node.py`) that answers every read with a
/// reply no client should buffer: a 2 GB bulk string sent as fast as the socket takes it
/// (``Behaviour/flood``), or a 1 MB one dripped a byte every 5 ms (``Behaviour/drip``).
public final class HostileRedisNode: Sendable {
    /// How the node answers a `GET` or `GETRANGE`.
    public enum Behaviour: String, Sendable {
        /// `$2000000000`, then bytes as fast as the socket takes them.
        case flood
        /// `$1000000`, then one byte every 5 ms for 3 s, then the connection closes.
        case drip
    }

    /// The port it listens on.
    public let port: Int
    private let child: ChildProcess

    /// Starts a node answering as `behaviour` says and waits for its port.
    public init(_ behaviour: Behaviour) throws {
        child = try ChildProcess(["python3", Self.script, behaviour.rawValue])
        let line = try child.readLine()
        guard let port = Int(line) else {
            child.stop()
            throw ServerError("the hostile Redis node printed \"\(line)\" instead of its port")
        }
        self.port = port
    }

    /// `redis://127.0.0.1:port`.
    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Stops the node.
    public func stop() {
        child.stop()
    }

    /// The Python script beside this file.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("hostile_redis_node.py").path
    }
}
