import Glibc
import ImageKit

/// A non-blocking TCP socket to a node whose every call ends by a deadline: connecting, sending
/// and receiving wait in `poll` for what is left of it whenever the socket is not ready, so a
/// node that answers slowly, or drips its answer a byte at a time, costs no more than the
/// deadline.
///
/// `~Copyable`: it owns its descriptor, closed once when it goes away.
struct RedisSocket: ~Copyable {
    private let fd: Int32
    /// The node, for error messages.
    let endpoint: RedisEndpoint

    /// Connects to `endpoint` (each of its addresses in turn) before `deadline`.
    ///
    /// - Throws: ``ImageKitError/connectFailed(_:)`` when no address accepts in time.
    init(to endpoint: RedisEndpoint, deadline: ContinuousClock.Instant) throws(ImageKitError) {
        self.endpoint = endpoint
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard status == 0, let list else {
            throw .connectFailed("Redis \(endpoint): cannot resolve the host: \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = list
        while let address = candidate?.pointee {
            candidate = address.ai_next
            let fd = socket(address.ai_family, address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue),
                            address.ai_protocol)
            guard fd >= 0 else {
                reason = Self.text(errno)
                continue
            }
            if let failure = Self.connect(fd, to: address, deadline: deadline) {
                close(fd)
                reason = failure
                continue
            }
            Self.tune(fd)
            self.fd = fd
            return
        }
        throw .connectFailed("Redis \(endpoint): \(reason)")
    }

    deinit {
        close(fd)
    }

    /// Sends all of `bytes` before `deadline`.
    ///
    /// - Throws: ``ImageKitError/timedOut(_:)`` at the deadline; ``ImageKitError/network(_:)``
    ///   when the connection failed.
    func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(ImageKitError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n >= 0 {
                sent += n
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                try wait(for: POLLOUT, until: deadline, doing: "take the command")
            } else if errno != EINTR {
                throw .network("Redis \(endpoint): cannot send: \(Self.text(errno))")
            }
        }
    }

    /// Receives between 1 and `buffer.count` bytes into `buffer` before `deadline`; returns how
    /// many.
    ///
    /// - Throws: ``ImageKitError/timedOut(_:)`` at the deadline; ``ImageKitError/network(_:)``
    ///   when the connection failed or the node closed it.
    func receive(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant) throws(ImageKitError) -> Int {
        while true {
            // Checked here too: a node that always has a little more ready never makes us poll.
            guard ContinuousClock.now < deadline else {
                throw .timedOut("Redis \(endpoint) did not answer in time (the operation's timeout)")
            }
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n > 0 { return n }
            if n == 0 { throw .network("Redis \(endpoint) closed the connection") }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                try wait(for: POLLIN, until: deadline, doing: "answer")
            } else if errno != EINTR {
                throw .network("Redis \(endpoint): cannot receive: \(Self.text(errno))")
            }
        }
    }

    /// Waits until the socket is ready for `events` (or has failed: the next call says how).
    private func wait(for events: Int32, until deadline: ContinuousClock.Instant, doing what: String) throws(ImageKitError) {
        guard try Self.poll(fd, events, until: deadline) else {
            throw .timedOut("Redis \(endpoint) did not \(what) in time (the operation's timeout)")
        }
    }

    /// Whether `fd` became ready for `events` before `deadline`.
    private static func poll(_ fd: Int32, _ events: Int32, until deadline: ContinuousClock.Instant) throws(ImageKitError) -> Bool {
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            // Rounded up: a deadline 0.3 ms away waits 1 ms, never 0 (a busy loop).
            let milliseconds = left.components.seconds * 1000 + (left.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
            let ready = Glibc.poll(&entry, 1, Int32(min(milliseconds, Int64(Int32.max))))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { throw .network("poll failed: \(text(errno))") }
        }
    }

    /// Connects `fd` to `address` before `deadline`; nil on success, else why not.
    private static func connect(_ fd: Int32, to address: addrinfo, deadline: ContinuousClock.Instant) -> String? {
        if Glibc.connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return text(errno) }
        do throws(ImageKitError) {
            guard try poll(fd, POLLOUT, until: deadline) else { return "no connection within the timeout" }
        } catch {
            return error.message
        }
        var failure: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size) == 0 else { return text(errno) }
        return failure == 0 ? nil : text(failure)
    }

    /// Sends small commands at once (no Nagle delay) and probes an idle connection every 15 s,
    /// so a node that vanished is noticed; best effort.
    private static func tune(_ fd: Int32) {
        func set(_ level: Int32, _ name: Int32, _ value: Int32) {
            var value = value
            _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        set(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        set(SOL_SOCKET, SO_KEEPALIVE, 1)
        set(Int32(IPPROTO_TCP), TCP_KEEPIDLE, 15)
        set(Int32(IPPROTO_TCP), TCP_KEEPINTVL, 5)
        set(Int32(IPPROTO_TCP), TCP_KEEPCNT, 3)
    }

    /// The sentence for `code`.
    private static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
