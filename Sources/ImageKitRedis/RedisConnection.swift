import CHiredis
import Glibc
import ImageKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One blocking hiredis connection to a node. Used only on ``RedisNodeClient``'s threads, by one
/// operation at a time.
///
/// `@unchecked Sendable`: the hiredis context is not thread-safe, but a connection is only ever
/// used by the one operation that took it from its node's pool (under the pool's lock) until it
/// puts it back (under the lock again), so no two threads touch it at once.
final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    /// The node, for error messages.
    let endpoint: RedisEndpoint

    /// Connects to `endpoint` within `timeout`, then authenticates and selects the database as
    /// `configuration` says.
    ///
    /// - Throws: ``ImageKitError/connectFailed(_:)`` when the node cannot be reached in time or
    ///   refuses the credentials.
    init(to endpoint: RedisEndpoint, timeout: Duration, configuration: RedisTierConfiguration) throws(ImageKitError) {
        self.endpoint = endpoint
        guard let context = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), Self.timeval(timeout)) else {
            throw .outOfMemory("cannot allocate a Redis connection to \(endpoint)")
        }
        self.context = context
        if context.pointee.err != 0 {
            throw .connectFailed("Redis \(endpoint): \(errorText)")
        }
        redisEnableKeepAlive(context)
        if let password = configuration.password {
            let arguments = [Data("AUTH".utf8)] + (configuration.username.map { [Data($0.utf8)] } ?? []) + [Data(password.utf8)]
            let reply = try command(arguments, timeout: timeout, maxBytes: 1024)
            if case .error(let message) = reply { throw .connectFailed("Redis \(endpoint): AUTH failed: \(message)") }
        }
        if configuration.database != 0 {
            let reply = try command([Data("SELECT".utf8), Data(String(configuration.database).utf8)],
                                    timeout: timeout, maxBytes: 1024)
            if case .error(let message) = reply { throw .connectFailed("Redis \(endpoint): SELECT failed: \(message)") }
        }
    }

    deinit {
        redisFree(context)
    }

    /// Whether the connection has failed (an I/O error or a timeout) and must not be reused.
    var isBroken: Bool { context.pointee.err != 0 }

    /// Sends `arguments` as one command and waits up to `timeout` for the reply, whose strings
    /// may be at most `maxBytes` long.
    ///
    /// - Throws: ``ImageKitError/timedOut(_:)`` or ``ImageKitError/network(_:)`` when the node did
    ///   not answer (the connection is then broken); ``ImageKitError/responseTooLarge(_:)`` for a
    ///   longer string.
    func command(_ arguments: [Data], timeout: Duration, maxBytes: Int) throws(ImageKitError) -> RedisReply {
        try pipeline([arguments], timeout: timeout, maxBytes: maxBytes)[0]
    }

    /// Sends every command of `commands` at once (one write), then reads their replies in order,
    /// each within `timeout`; strings may be at most `maxBytes` long.
    ///
    /// - Throws: as ``command(_:timeout:maxBytes:)``; after an error the connection is broken
    ///   (replies may be left unread), so it must not be reused.
    func pipeline(_ commands: [[Data]], timeout: Duration, maxBytes: Int) throws(ImageKitError) -> [RedisReply] {
        guard redisSetTimeout(context, Self.timeval(timeout)) == REDIS_OK else {
            throw .network("Redis \(endpoint): cannot set the socket timeout: \(errorText)")
        }
        for arguments in commands where append(arguments) != REDIS_OK {
            throw .network("Redis \(endpoint): cannot queue a command: \(errorText)")
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
                let text = errorText
                if context.pointee.err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || text.contains("temporarily")) {
                    throw .timedOut("Redis \(endpoint) did not answer within \(timeout)")
                }
                throw .network("Redis \(endpoint): \(text)")
            }
            defer { freeReplyObject(raw) }
            do {
                replies.append(try Self.convert(raw.assumingMemoryBound(to: redisReply.self), maxBytes: maxBytes,
                                                endpoint: endpoint))
            } catch {
                // Replies after this one would stay unread: the connection must not be reused.
                if replies.count + 1 < commands.count { context.pointee.err = REDIS_ERR_PROTOCOL }
                throw error
            }
        }
        return replies
    }

    /// Queues `arguments` as one command in hiredis's output buffer.
    private func append(_ arguments: [Data]) -> Int32 {
        var lengths = arguments.map(\.count)
        var buffer = [UInt8]()
        buffer.reserveCapacity(lengths.reduce(0, +))
        for argument in arguments { buffer.append(contentsOf: argument) }
        return buffer.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                var pointers: [UnsafePointer<CChar>?] = []
                var offset = 0
                for length in lengths {
                    pointers.append(chars.baseAddress.map { UnsafePointer($0 + offset) })
                    offset += length
                }
                return pointers.withUnsafeMutableBufferPointer { argv in
                    redisAppendCommandArgv(context, Int32(arguments.count), argv.baseAddress, &lengths)
                }
            }
        }
    }

    /// hiredis's error text for the connection.
    private var errorText: String {
        withUnsafeBytes(of: context.pointee.errstr) { bytes in
            let text = bytes.prefix { $0 != 0 }
            return text.isEmpty ? "error \(context.pointee.err)" : String(decoding: text, as: UTF8.self)
        }
    }

    /// The reply `reply` as a value; strings longer than `maxBytes` are refused before copying.
    private static func convert(_ reply: UnsafeMutablePointer<redisReply>, maxBytes: Int,
                                endpoint: RedisEndpoint) throws(ImageKitError) -> RedisReply {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING, REDIS_REPLY_STATUS, REDIS_REPLY_ERROR:
            guard r.len <= maxBytes else {
                throw .responseTooLarge("Redis \(endpoint) sent \(r.len) bytes, more than the \(maxBytes) allowed")
            }
            let data = r.str.map { Data(bytes: $0, count: r.len) } ?? Data()
            if r.type == REDIS_REPLY_STRING { return .string(data) }
            let text = String(decoding: data, as: UTF8.self)
            return r.type == REDIS_REPLY_STATUS ? .status(text) : .error(text)
        case REDIS_REPLY_INTEGER:
            return .integer(r.integer)
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            guard r.elements <= 1 << 20 else {
                throw .responseTooLarge("Redis \(endpoint) sent an array of \(r.elements) elements")
            }
            elements.reserveCapacity(r.elements)
            for i in 0..<r.elements {
                guard let element = r.element[i] else {
                    throw .invalidResponse("Redis \(endpoint) sent an array with a missing element")
                }
                elements.append(try convert(element, maxBytes: maxBytes, endpoint: endpoint))
            }
            return .array(elements)
        default:
            throw .invalidResponse("Redis \(endpoint) sent a reply of unknown type \(r.type)")
        }
    }

    /// `duration` as a `timeval` (at least 1 ms: hiredis treats zero as no timeout).
    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let microseconds = max(1000, duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
        return Glibc.timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
    }
}
