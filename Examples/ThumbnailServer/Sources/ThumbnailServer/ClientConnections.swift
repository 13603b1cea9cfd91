import NIOCore
import Synchronization

/// One client connection as the request handlers see it: whether the client is still there,
/// and the loads to cancel when it goes.
///
/// Hummingbird does not cancel a handler when its client leaves, so each load runs in a task
/// of its own (``run(_:)``), which this cancels once ``ConnectionGuard`` sees the connection
/// close or its input end. ImageKit then cancels the load, unless another caller shares it.
final class ClientConnection: Sendable {
    private struct State {
        var gone = false
        var nextLoad = 0
        var loads: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())

    /// Marks the client gone and cancels its loads (once; later calls do nothing).
    func leave() {
        let cancels = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.gone else { return [] }
            state.gone = true
            defer { state.loads = [:] }
            return Array(state.loads.values)
        }
        for cancel in cancels { cancel() }
    }

    /// Runs `work` in a task that is cancelled when the client goes (or when the caller's task is
    /// cancelled), and returns what it returns. The task inherits the caller's task-local values,
    /// such as the request's tracing span.
    func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        let task = Task { await work() }
        let load = state.withLock { state -> Int? in
            guard !state.gone else { return nil }
            state.nextLoad += 1
            state.loads[state.nextLoad] = { task.cancel() }
            return state.nextLoad
        }
        if load == nil { task.cancel() }
        defer {
            if let load { state.withLock { _ = $0.loads.removeValue(forKey: load) } }
        }
        return await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }
}

/// The open connections, by channel: ``ConnectionGuard`` adds each as it opens and removes it as
/// it closes, and a request handler finds its own by the channel in its context.
final class ClientConnections: Sendable {
    private let connections = Mutex<[ObjectIdentifier: ClientConnection]>([:])

    /// The connection of `channel`, or nil when it is closed (or was never watched).
    func connection(of channel: any Channel) -> ClientConnection? {
        connections.withLock { $0[ObjectIdentifier(channel)] }
    }

    /// Starts watching `channel` as `connection`.
    func add(_ connection: ClientConnection, for channel: any Channel) {
        connections.withLock { $0[ObjectIdentifier(channel)] = connection }
    }

    /// Stops watching `channel`.
    func remove(_ channel: any Channel) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}
