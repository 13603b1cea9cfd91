import CImageCore
import Glibc

/// The C fetch engine (`ic_fetch`), kept alive while any call is inside it.
///
/// No lock is held across a C call. A call takes the pointer and counts itself in under
/// the lock, calls the engine unlocked, and counts itself out. `shutdown` takes the pointer
/// out under the same lock (later calls find none and do nothing), waits for the calls
/// already inside to return, then destroys the engine: no call can reach a destroyed engine.
final class FetchEngine: Sendable {
    /// The engine pointer.
    // @unchecked Sendable: ic_fetch_start, ic_fetch_cancel and ic_fetch_get_stats
    // are thread-safe by the C contract (ic_fetch.h), and ic_fetch_destroy only
    // runs once the pointer left the state and no call is inside the engine.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State: Sendable {
        /// nil once shut down.
        var handle: Handle?
        /// Calls inside the engine now.
        var calls = 0
    }

    private let state: Locked<State>

    /// Starts the engine thread with the limits of `configuration`.
    init(configuration c: DownloaderConfiguration) throws(ImageKitError) {
        var cfg = ic_fetch_config()
        ic_fetch_config_init(&cfg)
        cfg.max_connections = UInt32(clamping: c.maxConcurrentDownloads)
        cfg.max_host_connections = UInt32(clamping: c.maxConcurrentDownloadsPerHost ?? 0)
        cfg.max_idle_connections = UInt32(clamping: c.maxIdleConnections ?? 0)
        cfg.progress_interval_ms = ResolvedRequest.milliseconds(c.progressInterval)
        var err = ic_error()
        var out: OpaquePointer?
        let st = ic_fetch_create(&cfg, &out, &err)
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        state = Locked(State(handle: Handle(pointer: out)))
    }

    /// Queues `request`; returns the engine's id for it. Fails once shut down.
    func start(_ request: inout ic_fetch_request) -> Result<UInt64, ImageKitError> {
        withEngine { engine in
            var id: UInt64 = 0
            var err = ic_error()
            let st = ic_fetch_start(engine, &request, &id, &err)
            return st == IC_OK ? .success(id) : .failure(ImageKitError(status: st, error: err))
        } ?? .failure(.cancelled)
    }

    /// Aborts the transfer `id` (its completion reports it cancelled).
    func cancel(_ id: UInt64) {
        withEngine { ic_fetch_cancel($0, id) }
    }

    /// The engine's counters (all zero once shut down).
    func stats() -> ic_fetch_stats {
        var s = ic_fetch_stats()
        withEngine { ic_fetch_get_stats($0, &s) }
        return s
    }

    /// Stops the engine: running transfers complete as cancelled, then the thread,
    /// connections and handles are released. Later calls do nothing.
    func shutdown() {
        let taken = state.withLock { s -> Handle? in
            defer { s.handle = nil }
            return s.handle
        }
        guard let taken else { return }
        // The calls still inside only take the engine's own lock for a moment (they never
        // wait for its thread or a callback), so this wait is short and cannot deadlock.
        while state.withLock({ $0.calls }) > 0 { sched_yield() }
        ic_fetch_destroy(taken.pointer)
    }

    /// Runs `body` with the engine pointer, outside the lock; nil once shut down.
    @discardableResult
    private func withEngine<R>(_ body: (OpaquePointer) -> R) -> R? {
        let handle = state.withLock { s -> Handle? in
            guard let h = s.handle else { return nil }
            s.calls += 1
            return h
        }
        guard let handle else { return nil }
        defer { state.withLock { $0.calls -= 1 } }
        return body(handle.pointer)
    }
}
