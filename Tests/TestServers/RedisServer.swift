import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// `redis-server` on 127.0.0.1 with no persistence, under the supervisor that stops it when the
/// test process goes away. Tests stop, kill, suspend (SIGSTOP) and resume (SIGCONT) it.
public final class RedisServer: Sendable {
    /// The TCP port it listens on.
    public let port: Int
    /// The redis-server process (not the supervisor's).
    public let pid: pid_t
    private let supervisor: ChildProcess
    private let stopped = Atomic<Bool>(false)

    /// Starts redis-server on `port` (a free one when nil) with `arguments` added to its command
    /// line (`["--maxmemory", "1mb"]`, `["--requirepass", "secret"]`).
    public init(port: Int? = nil, arguments: [String] = []) throws {
        var lastError = ""
        for _ in 0..<3 {
            let port = try port ?? Loopback.freePort()
            let child = try ChildProcess([
                // Through `sh -c exec` (same pid) so redis-server's banner does not reach the pipe the
                // supervisor prints the pid on.
                "python3", ScriptServer.script, "supervise", "--",
                "sh", "-c", "exec redis-server \"$@\" >/dev/null 2>&1", "redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--daemonize", "no", "--loglevel", "warning",
            ] + arguments)
            let line = try child.readLine()
            if let pid = pid_t(line), Loopback.waitUntilListening(port, child: child) {
                self.port = port
                self.pid = pid
                supervisor = child
                return
            }
            child.stop()
            lastError = "redis-server on port \(port) did not start (supervisor said \"\(line)\")"
        }
        throw ServerError(lastError)
    }

    deinit {
        stop()
    }

    /// `redis://127.0.0.1:port`.
    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Freezes the server (SIGSTOP): connections are accepted by the kernel, nothing answers.
    public func suspend() {
        kill(pid, SIGSTOP)
    }

    /// Lets a frozen server go on (SIGCONT).
    public func resume() {
        kill(pid, SIGCONT)
    }

    /// Kills the server at once (SIGKILL), as a crash would, and waits for it.
    public func crash() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        kill(pid, SIGKILL)
        supervisor.stop()
    }

    /// Stops the server and waits for it; safe to call twice. SIGKILL, frozen or not: it
    /// persists nothing, and a SIGTERM'd redis-server with clients connected can take the
    /// supervisor's whole 10 s grace period.
    public func stop() {
        crash()
    }
}
