import CImageCore

/// The C fetch engine (`ic_fetch`), kept alive while any call is inside it.
///
/// Starting and cancelling hold the lock for the length of the C call, and
/// `shutdown` takes the pointer out under the same lock before destroying the
/// engine, so no call can reach a destroyed engine. Callbacks run on the
/// engine's thread without the lock held, so they may start and cancel.
final class FetchEngine: Sendable {
    /// The engine pointer.
    // @unchecked Sendable: ic_fetch_start, ic_fetch_cancel and ic_fetch_get_stats
    // are thread-safe by the C contract (ic_fetch.h), and ic_fetch_destroy only
    // runs after the pointer left the lock, when no other call can be in flight.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let handle: Locked<Handle?>

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
        handle = Locked(Handle(pointer: out))
    }

    /// Queues `request`; returns the engine's id for it. Fails once shut down.
    func start(_ request: inout ic_fetch_request) -> Result<UInt64, ImageKitError> {
        handle.withLock { h in
            guard let h else { return .failure(.cancelled) }
            var id: UInt64 = 0
            var err = ic_error()
            let st = ic_fetch_start(h.pointer, &request, &id, &err)
            return st == IC_OK ? .success(id) : .failure(ImageKitError(status: st, error: err))
        }
    }

    /// Aborts the transfer `id` (its completion reports it cancelled).
    func cancel(_ id: UInt64) {
        handle.withLock { h in
            if let h { ic_fetch_cancel(h.pointer, id) }
        }
    }

    /// The engine's counters (all zero once shut down).
    func stats() -> ic_fetch_stats {
        handle.withLock { h in
            var s = ic_fetch_stats()
            if let h { ic_fetch_get_stats(h.pointer, &s) }
            return s
        }
    }

    /// Stops the engine: running transfers complete as cancelled, then the thread,
    /// connections and handles are released. Later calls do nothing.
    func shutdown() {
        let h = handle.withLock { h in
            defer { h = nil }
            return h
        }
        if let h { ic_fetch_destroy(h.pointer) }
    }
}
