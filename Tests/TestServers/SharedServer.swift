import Synchronization

/// A server shared by the tests of one class: started on first use, stopped by the
/// class's `tearDown`, so a filtered run that needs none starts none.
public final class SharedServer<Server: Sendable>: Sendable {
    private let start: @Sendable () throws -> Server
    private let halt: @Sendable (Server) -> Void
    private let state = Mutex<Result<Server, any Error>?>(nil)

    /// A server made by `start` and stopped by `stop`.
    public init(start: @escaping @Sendable () throws -> Server, stop: @escaping @Sendable (Server) -> Void) {
        self.start = start
        halt = stop
    }

    /// The running server, started now if this is the first use (a failure to start is kept and rethrown).
    public func get() throws -> Server {
        try state.withLock { s in
            if s == nil { s = Result { try start() } }
            return try s!.get()
        }
    }

    /// Stops the server if it was started.
    public func stop() {
        let server = state.withLock { s -> Server? in
            defer { s = nil }
            return try? s?.get()
        }
        if let server { halt(server) }
    }
}
