import NIOCore

/// A channel handler on every connection (after the HTTP codec) that tells the request
/// handlers when the client goes, and closes a connection whose client stops reading.
///
/// - The client is gone when the connection closes or its input ends (the client closed or
///   shut down its side; Hummingbird allows half-closed connections, so only this handler sees
///   it). Its loads are cancelled then, as nginx abandons a request whose client closed. A
///   client that half-closes and still waits for its answer is not supported.
/// - Write timeout: while the connection is not writable (more than NIO's high-water mark of
///   the answer waits to be sent because the client does not read), a timer runs; if the client
///   has not read enough to make it writable again within `writeTimeout`, the connection closes.
///   Idle connections and slow request headers are Hummingbird's idle timeout's job.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    /// The HTTP parts pass through untouched.
    typealias InboundIn = NIOAny

    private let connections: ClientConnections
    private let connection = ClientConnection()
    private let writeTimeout: TimeAmount
    private var writeTimer: Scheduled<Void>?

    /// A guard that registers its connection in `connections` and closes it after
    /// `writeTimeout` without being writable.
    init(connections: ClientConnections, writeTimeout: TimeAmount) {
        self.connections = connections
        self.writeTimeout = writeTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connections.add(connection, for: context.channel)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave(context)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed? = event as? ChannelEvent {
            connection.leave()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            writeTimer?.cancel()
            writeTimer = nil
        } else if writeTimer == nil {
            writeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: writeTimeout) {
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    /// The connection is over: its loads are cancelled and it is no longer found.
    private func leave(_ context: ChannelHandlerContext) {
        writeTimer?.cancel()
        writeTimer = nil
        connection.leave()
        connections.remove(context.channel)
    }
}
