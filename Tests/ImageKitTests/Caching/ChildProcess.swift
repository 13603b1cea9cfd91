import Foundation
import Glibc
import XCTest

/// A child process with its standard output piped to us: the
/// ImageKitTestHelper executable (built next to the test bundle) or a system tool.
struct ChildProcess {
    let pid: pid_t
    /// Read end of the child's standard output.
    let output: Int32

    /// The helper's path: beside the test bundle in the build directory.
    static var helper: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("ImageKitTestHelper").path
    }

    /// Starts `path` (the helper by default) with `arguments`.
    static func start(_ arguments: [String], path: String = helper) throws -> ChildProcess {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("\(path) is not there to run")
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL)
        }
        return ChildProcess(pid: pid, output: fds[0])
    }

    /// Reads output until a newline (or end of output); returns the line without it.
    func readLine() -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(output, &byte, 1) == 1, byte != 0x0A { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits for the child to end; returns the raw wait status.
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(output)
        return status
    }

    /// Runs the helper to completion and returns its first line of output.
    static func run(_ arguments: [String]) throws -> String {
        let process = try start(arguments)
        let line = process.readLine()
        process.wait()
        return line
    }

    /// Runs `path` to completion and returns its wait status (0 = exited with 0).
    static func status(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = try start(arguments, path: path)
        while process.readLine() != "" {}
        return process.wait()
    }

    /// "key value key value …" output as a dictionary.
    static func fields(_ line: String) -> [String: Int] {
        let words = line.split(separator: " ").map(String.init)
        var result: [String: Int] = [:]
        for i in stride(from: 0, to: words.count - 1, by: 2) { result[words[i]] = Int(words[i + 1]) }
        return result
    }
}
