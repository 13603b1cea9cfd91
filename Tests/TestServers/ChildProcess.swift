import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process with a pipe on its stdin and one on its stdout: the test
/// servers, and the test helper executable the cache and memory tests run.
///
/// The servers started here exit when their stdin closes, so a test run that
/// dies leaves nothing behind.
public struct ChildProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    private let stdinFD: Int32
    private let stdoutFD: Int32

    /// Starts `arguments[0]` (looked up on PATH) with the rest as its arguments.
    public init(_ arguments: [String]) throws {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw ServerError("pipe failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawnp(&child, arguments[0], &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard rc == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw ServerError("cannot start \(arguments[0]): \(String(cString: strerror(rc)))")
        }
        // Our ends must not leak into later children (they would keep stdin open).
        _ = fcntl(toChild[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fromChild[0], F_SETFD, FD_CLOEXEC)
        pid = child
        stdinFD = toChild[1]
        stdoutFD = fromChild[0]
    }

    /// Runs `arguments` to the end with its output discarded; throws unless it exits 0.
    public static func run(_ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawnp(&child, arguments[0], &actions, nil, argv, environ)
        guard rc == 0 else { throw ServerError("cannot start \(arguments[0]): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw ServerError("\(arguments.joined(separator: " ")) failed (status \(status))") }
    }

    /// The next line the child prints, waiting up to `timeout` seconds.
    public func readLine(timeout: Double = 20) throws -> String {
        var line: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var pfd = pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard poll(&pfd, 1, left) > 0 else { throw ServerError("child \(pid) printed no line in \(timeout) s") }
            var byte: UInt8 = 0
            guard read(stdoutFD, &byte, 1) == 1 else { throw ServerError("child \(pid) exited before printing a line") }
            if byte == 0x0A { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Whether the child has exited (reaping it if so).
    public func hasExited() -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    /// Closes the child's stdin (a server exits), then waits for it; returns its raw
    /// wait status (the signal that ended it in the low 7 bits, if one did).
    @discardableResult
    public func stop() -> Int32 {
        close(stdinFD)
        close(stdoutFD)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

/// A failure to start or talk to a test server.
public struct ServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
