import ImageKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One connection to a node. Used only on ``RedisNodeClient``'s threads, by one operation at a
/// time.
///
/// A command ends by its deadline, reading included, however the node answers. Replies are read
/// through a ``RedisReplyParser``: a reply over its limits is refused as soon as its header
/// arrives, and nothing past a reply's limit is received or allocated.
///
/// `@unchecked Sendable`: its buffer is not thread-safe, but a connection is only ever used by
/// the one operation that took it from its node's pool (under the pool's lock) until it puts it
/// back (under the lock again), so no two threads touch it at once.
final class RedisConnection: @unchecked Sendable {
    private let socket: RedisSocket
    /// The node, for error messages.
    let endpoint: RedisEndpoint
    /// Bytes received and not parsed yet, from `start` on.
    private var received: [UInt8] = []
    private var start = 0
    /// Where `recv` writes before the bytes join `received`.
    private let scratch: UnsafeMutableRawBufferPointer
    /// Whether the connection has failed (an I/O error, a timeout, a reply refused part-way) and
    /// must not be reused.
    private(set) var isBroken = false

    /// Connects to `endpoint`, then authenticates and selects the database as `configuration`
    /// says, all within `timeout`.
    ///
    /// - Throws: ``ImageKitError/connectFailed(_:)`` when the node cannot be reached in time or
    ///   refuses the credentials.
    init(to endpoint: RedisEndpoint, timeout: Duration, configuration: RedisTierConfiguration) throws(ImageKitError) {
        let deadline = ContinuousClock.now + timeout
        self.endpoint = endpoint
        socket = try RedisSocket(to: endpoint, deadline: deadline)
        scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        if let password = configuration.password {
            let arguments = [Data("AUTH".utf8)] + (configuration.username.map { [Data($0.utf8)] } ?? []) + [Data(password.utf8)]
            let reply = try pipeline([arguments], deadline: deadline, maxBytes: 1024)[0]
            if case .error(let message) = reply { throw .connectFailed("Redis \(endpoint): AUTH failed: \(message)") }
        }
        if configuration.database != 0 {
            let reply = try pipeline([[Data("SELECT".utf8), Data(String(configuration.database).utf8)]],
                                     deadline: deadline, maxBytes: 1024)[0]
            if case .error(let message) = reply { throw .connectFailed("Redis \(endpoint): SELECT failed: \(message)") }
        }
    }

    deinit {
        scratch.deallocate()
    }

    /// Sends `arguments` as one command and waits up to `timeout` for the reply, whose bulk
    /// strings may be at most `maxBytes` long.
    ///
    /// - Throws: ``ImageKitError/timedOut(_:)`` or ``ImageKitError/network(_:)`` when the node did
    ///   not answer in time (the connection is then broken); ``ImageKitError/responseTooLarge(_:)``
    ///   for a longer string, ``ImageKitError/invalidResponse(_:)`` for a reply that is not RESP
    ///   (the connection is broken too: the rest of the reply is left unread).
    func command(_ arguments: [Data], timeout: Duration, maxBytes: Int) throws(ImageKitError) -> RedisReply {
        try pipeline([arguments], deadline: .now + timeout, maxBytes: maxBytes)[0]
    }

    /// Sends every command of `commands` at once (one write), then reads their replies in order,
    /// all within `timeout`; bulk strings may be at most `maxBytes` long.
    ///
    /// - Throws: as ``command(_:timeout:maxBytes:)``.
    func pipeline(_ commands: [[Data]], timeout: Duration, maxBytes: Int) throws(ImageKitError) -> [RedisReply] {
        try pipeline(commands, deadline: .now + timeout, maxBytes: maxBytes)
    }

    /// ``pipeline(_:timeout:maxBytes:)`` ending at `deadline`; any error breaks the connection.
    private func pipeline(_ commands: [[Data]], deadline: ContinuousClock.Instant,
                          maxBytes: Int) throws(ImageKitError) -> [RedisReply] {
        guard !isBroken else { throw .network("Redis \(endpoint): the connection failed earlier") }
        let parser = RedisReplyParser(limits: RedisReplyParser.Limits(maxStringBytes: maxBytes))
        do throws(ImageKitError) {
            try socket.send(Self.encoded(commands), deadline: deadline)
            var replies: [RedisReply] = []
            replies.reserveCapacity(commands.count)
            for _ in commands { replies.append(try reply(parser, deadline: deadline)) }
            return replies
        } catch {
            isBroken = true
            throw error
        }
    }

    /// The next reply, received until it is whole, before `deadline`.
    private func reply(_ parser: RedisReplyParser, deadline: ContinuousClock.Instant) throws(ImageKitError) -> RedisReply {
        while true {
            let outcome: RedisReplyParser.Outcome
            do throws(ImageKitError) {
                outcome = try parser.parse(received, from: start)
            } catch {
                throw ImageKitError(code: error.code, message: "Redis \(endpoint) sent \(error.message)")
            }
            switch outcome {
            case .reply(let reply, let length):
                start += length
                if start == received.count {
                    received.removeAll(keepingCapacity: received.capacity <= scratch.count)
                    start = 0
                }
                return reply
            case .needMore(let atLeast):
                try receive(atLeast: atLeast, limit: parser.limits.maxReplyBytes, deadline: deadline)
            }
        }
    }

    /// Receives more of the reply in `received[start...]`, which needs at least `atLeast` bytes
    /// and may have at most `limit`: the bytes it still lacks, or up to 64 KiB when it lacks fewer
    /// (the next replies of a pipeline may follow), never past `limit`.
    private func receive(atLeast: Int, limit: Int, deadline: ContinuousClock.Instant) throws(ImageKitError) {
        if start > 0 {
            received.removeFirst(start)
            start = 0
        }
        let room = min(max(atLeast - received.count, scratch.count), limit - received.count)
        if received.capacity < received.count + room { received.reserveCapacity(received.count + room) }
        let count = try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: scratch[..<min(room, scratch.count)]),
                                       deadline: deadline)
        received.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
    }

    /// `commands` in RESP: each an array of bulk strings.
    private static func encoded(_ commands: [[Data]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(commands.reduce(0) { total, arguments in arguments.reduce(total + 16) { $0 + $1.count + 16 } })
        for arguments in commands {
            bytes.append(contentsOf: "*\(arguments.count)\r\n".utf8)
            for argument in arguments {
                bytes.append(contentsOf: "$\(argument.count)\r\n".utf8)
                bytes.append(contentsOf: argument)
                bytes.append(contentsOf: [13, 10])
            }
        }
        return bytes
    }
}
