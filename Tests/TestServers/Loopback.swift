import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Plain-socket helpers for talking to test servers on 127.0.0.1 without the code under test.
public enum Loopback {
    /// A TCP port that was free a moment ago.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket failed: errno \(errno)") }
        defer { close(fd) }
        var addr = address(port: 0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard ok else { throw ServerError("bind failed: errno \(errno)") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Whether something accepts connections on `port`.
    public static func isListening(_ port: Int) -> Bool {
        guard let fd = connected(port) else { return false }
        close(fd)
        return true
    }

    /// Sends `GET path` over HTTP/1.0 and returns the body (the server closes the connection).
    public static func get(port: Int, _ path: String) throws -> [UInt8] {
        guard let fd = connected(port) else { throw ServerError("nothing listens on port \(port)") }
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            throw ServerError("send failed: errno \(errno)")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, response.count - 3)).first(where: {
            Array(response[$0..<$0 + 4]) == separator
        }) else { throw ServerError("malformed response from port \(port)") }
        return Array(response[(end + 4)...])
    }

    /// Waits until `port` accepts connections or `child` exits; false on exit or timeout.
    public static func waitUntilListening(_ port: Int, child: ChildProcess, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if isListening(port) { return true }
            if child.hasExited() { return false }
            usleep(10_000)
        }
        return false
    }

    private static func address(port: Int) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return addr
    }

    private static func connected(_ port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = address(port: port)
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if ok { return fd }
        close(fd)
        return nil
    }
}
