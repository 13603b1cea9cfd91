import CImageCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The downloader's state machine over the C fetch engine: coalescing,
/// the priority queue, the concurrency limits and cancellation.
///
/// Every caller is a *waiter* (one per token). Waiters whose requests resolve
/// equal share one *transfer*. A transfer waits in the queue until a slot is
/// free, then runs in the engine; when it ends, each of its waiters gets the
/// result. All state lives behind one lock; callbacks to callers and observers
/// run after the lock is released.
final class DownloaderCore: Sendable {
    typealias Completion = @Sendable (Result<DownloadResult, ImageKitError>) -> Void
    typealias Progress = @Sendable (DownloadProgress) -> Void

    let configuration: DownloaderConfiguration
    private let defaults: ResolvedRequest.Defaults
    private let engine: FetchEngine
    private let state = Locked(State())
    /// Whether the engine must report heads (someone looks at them before the body).
    private let wantsHead: Bool

    private struct Waiter: Sendable {
        enum Phase: Sendable {
            /// Has a token, not yet submitted.
            case created
            /// Cancelled before it was submitted.
            case cancelledEarly
            /// Submitted (its completion is set), not yet on a transfer.
            case submitted
            /// The request modifier is running (its task, once known).
            case preparing(Task<Void, Never>?)
            /// Waiting on a transfer.
            case attached(UInt64)
        }

        var phase: Phase = .created
        var priority: DownloadPriority = .normal
        var progress: Progress?
        var completion: Completion?
    }

    /// What a transfer asks for: fixed for its life and shared by reference, so the
    /// many copies of `Transfer` and `Start` the bookkeeping makes stay cheap.
    private final class Target: Sendable {
        let request: DownloadRequest
        let resolved: ResolvedRequest

        init(request: DownloadRequest, resolved: ResolvedRequest) {
            self.request = request
            self.resolved = resolved
        }
    }

    private struct Transfer: Sendable {
        enum Phase: Sendable {
            /// In the queue under sequence number `seq`.
            case queued(seq: UInt64)
            /// Handed to the engine; `engineID` once ic_fetch_start returned.
            case running(engineID: UInt64?, cancelRequested: Bool)
        }

        let target: Target
        var waiters: [UInt64]
        var priority: DownloadPriority
        var phase: Phase
        /// Why the head was rejected (content type, validator), if it was.
        var rejection: ImageKitError?
    }

    private struct Start: Sendable {
        let id: UInt64
        let target: Target
    }

    private struct State: Sendable {
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var transfers: [UInt64: Transfer] = [:]
        /// Transfers new waiters may join (not those being cancelled).
        var byKey: [ResolvedRequest: UInt64] = [:]
        var queue = PendingQueue()
        var queued = 0
        var running = 0
        var runningPerHost: [String: Int] = [:]
        var modifierTasks = 0
        var contexts = 0
        var isShutDown = false
        /// Set by a draining shutdown: new waiters are refused, transfers in flight go on.
        var refusesNew = false

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }

        /// Queues transfer `id` (again) at its current priority.
        mutating func enqueue(_ id: UInt64) {
            let seq = makeID()
            transfers[id]!.phase = .queued(seq: seq)
            queue.push(PendingQueue.Entry(id: id, seq: seq), priority: transfers[id]!.priority)
        }

        /// Gives transfer `id` the highest priority of its waiters, moving it in the queue.
        mutating func updatePriority(_ id: UInt64) {
            guard let t = transfers[id] else { return }
            let top = t.waiters.compactMap { waiters[$0]?.priority }.max() ?? t.priority
            guard top != t.priority else { return }
            transfers[id]!.priority = top
            if case .queued = t.phase { enqueue(id) }
        }

        /// Removes waiter `waiter` from transfer `id`. When it was the last one, the
        /// transfer leaves the queue, or (running) is marked for cancelling and its
        /// engine id returned for ic_fetch_cancel.
        mutating func detach(_ waiter: UInt64, from id: UInt64) -> UInt64? {
            guard var t = transfers[id] else { return nil }
            t.waiters.removeAll { $0 == waiter }
            guard t.waiters.isEmpty else {
                transfers[id] = t
                updatePriority(id)
                return nil
            }
            if byKey[t.target.resolved] == id { byKey[t.target.resolved] = nil }
            switch t.phase {
            case .queued:
                transfers[id] = nil
                queued -= 1
                return nil
            case .running(let engineID, _):
                t.phase = .running(engineID: engineID, cancelRequested: true)
                transfers[id] = t
                return engineID
            }
        }
    }

    init(configuration: DownloaderConfiguration) throws(ImageKitError) {
        guard configuration.maxConcurrentDownloads > 0 else {
            throw .invalidArgument("download: maxConcurrentDownloads must be at least 1")
        }
        if let perHost = configuration.maxConcurrentDownloadsPerHost, perHost <= 0 {
            throw .invalidArgument("download: maxConcurrentDownloadsPerHost must be at least 1")
        }
        self.configuration = configuration
        defaults = try ResolvedRequest.Defaults(configuration)
        engine = try FetchEngine(configuration: configuration)
        wantsHead = !configuration.observers.isEmpty || configuration.acceptableContentTypes != nil
            || configuration.responseValidator != nil
    }

    // MARK: - Callers

    /// Registers a waiter for a token; `submit` gives it its request.
    func makeWaiter() -> UInt64 {
        state.withLock { s in
            let id = s.makeID()
            s.waiters[id] = Waiter()
            return id
        }
    }

    /// Sends waiter `id`'s request: through the request modifier if there is one,
    /// then into a transfer (a new one or an identical one in flight).
    func submit(_ id: UInt64, _ request: DownloadRequest, priority: DownloadPriority, progress: Progress?,
                completion: @escaping Completion) {
        let modifier = configuration.requestModifier
        let accepted = state.withLock { s -> Bool in
            guard var w = s.waiters[id], case .created = w.phase, !s.isShutDown, !s.refusesNew else {
                s.waiters[id] = nil
                return false
            }
            w.priority = priority
            w.progress = progress
            w.completion = completion
            if modifier != nil {
                w.phase = .preparing(nil)
                s.modifierTasks += 1
            } else {
                w.phase = .submitted
            }
            s.waiters[id] = w
            return true
        }
        guard accepted else {
            completion(.failure(.cancelled))
            return
        }
        guard let modifier else {
            attach(id, request)
            return
        }
        let task = Task {
            let modified = await modifier(request)
            self.finishPreparing(id, modified)
        }
        let stillPreparing = state.withLock { s -> Bool in
            guard case .preparing(nil)? = s.waiters[id]?.phase else { return false }
            s.waiters[id]!.phase = .preparing(task)
            return true
        }
        if !stillPreparing { task.cancel() }
    }

    /// Cancels waiter `id`: it completes with `.cancelled` now; its transfer is
    /// aborted if no other waiter is left on it.
    func cancel(_ id: UInt64) {
        let (completion, task, engineID) = state.withLock {
            s -> (Completion?, Task<Void, Never>?, UInt64?) in
            guard let w = s.waiters[id] else { return (nil, nil, nil) }
            switch w.phase {
            case .created:
                s.waiters[id]!.phase = .cancelledEarly
                return (nil, nil, nil)
            case .cancelledEarly:
                return (nil, nil, nil)
            case .submitted:
                s.waiters[id] = nil
                return (w.completion, nil, nil)
            case .preparing(let task):
                s.waiters[id] = nil
                return (w.completion, task, nil)
            case .attached(let transfer):
                s.waiters[id] = nil
                return (w.completion, nil, s.detach(id, from: transfer))
            }
        }
        task?.cancel()
        if let engineID { engine.cancel(engineID) }
        completion?(.failure(.cancelled))
    }

    /// Refuses later submissions (they complete as cancelled); what is in flight goes on.
    func refuseNew() {
        state.withLock { $0.refusesNew = true }
    }

    /// Stops everything: running transfers are aborted, queued ones and their
    /// waiters complete as cancelled, and later submissions fail the same way.
    func shutdown() {
        state.withLock { $0.isShutDown = true }
        engine.shutdown()
        let (completions, tasks) = state.withLock { s -> ([Completion], [Task<Void, Never>]) in
            var completions: [Completion] = []
            var tasks: [Task<Void, Never>] = []
            for w in s.waiters.values {
                if let c = w.completion { completions.append(c) }
                if case .preparing(let t?) = w.phase { tasks.append(t) }
            }
            s.waiters.removeAll()
            s.transfers = s.transfers.filter { if case .running = $0.value.phase { true } else { false } }
            s.byKey.removeAll()
            s.queue = PendingQueue()
            s.queued = 0
            return (completions, tasks)
        }
        for t in tasks { t.cancel() }
        for c in completions { c(.failure(.cancelled)) }
    }

    /// Counters for tests and metrics.
    var statistics: DownloaderStatistics {
        let e = engine.stats()
        return state.withLock { s in
            DownloaderStatistics(
                waiters: s.waiters.count, transfers: s.transfers.count, queuedTransfers: s.queued,
                runningTransfers: s.running, pendingRequestModifiers: s.modifierTasks,
                transferContexts: s.contexts, engineStarted: Int(e.started), engineCompleted: Int(e.completed),
                engineQueued: Int(e.queued), engineActive: Int(e.active), engineEasyHandles: Int(e.easy_handles),
                bodies: Int(e.bodies_out), bodyBytes: Int(clamping: e.body_bytes_out))
        }
    }

    // MARK: - Scheduling

    private func finishPreparing(_ id: UInt64, _ request: DownloadRequest?) {
        state.withLock { $0.modifierTasks -= 1 }
        if let request {
            attach(id, request)
        } else {
            fail(id, .cancelled)
        }
    }

    /// Completes a waiter that never reached a transfer.
    private func fail(_ id: UInt64, _ error: ImageKitError) {
        let completion = state.withLock { s -> Completion? in
            guard let w = s.waiters[id] else { return nil }
            switch w.phase {
            case .submitted, .preparing: break
            case .created, .cancelledEarly, .attached: return nil
            }
            s.waiters[id] = nil
            return w.completion
        }
        completion?(.failure(error))
    }

    /// Puts waiter `id` on a transfer for `request`, joining an identical one in flight.
    private func attach(_ id: UInt64, _ request: DownloadRequest) {
        let resolved: ResolvedRequest
        do {
            resolved = try ResolvedRequest(request, defaults: defaults)
        } catch {
            fail(id, error)
            return
        }
        let starts = state.withLock { s -> [Start] in
            guard var w = s.waiters[id] else { return [] }
            switch w.phase {
            case .submitted, .preparing: break
            case .created, .cancelledEarly, .attached: return []
            }
            let transfer: UInt64
            if let existing = s.byKey[resolved] {
                transfer = existing
                s.transfers[transfer]!.waiters.append(id)
            } else {
                transfer = s.makeID()
                s.transfers[transfer] = Transfer(target: Target(request: request, resolved: resolved), waiters: [id],
                                                 priority: w.priority, phase: .queued(seq: 0))
                s.byKey[resolved] = transfer
                s.enqueue(transfer)
                s.queued += 1
            }
            w.phase = .attached(transfer)
            s.waiters[id] = w
            s.updatePriority(transfer)
            return schedule(&s)
        }
        launch(starts)
    }

    /// Takes transfers off the queue while slots are free; the caller launches them.
    private func schedule(_ s: inout State) -> [Start] {
        guard !s.isShutDown else { return [] }
        let limit = configuration.maxConcurrentDownloads
        let perHost = configuration.maxConcurrentDownloadsPerHost
        var queue = PendingQueue()
        swap(&queue, &s.queue)
        defer { swap(&queue, &s.queue) }
        var starts: [Start] = []
        while s.running < limit, s.queued > 0 {
            let next = queue.pop(order: configuration.executionOrder, isLive: { entry in
                if case .queued(let seq)? = s.transfers[entry.id]?.phase { return seq == entry.seq }
                return false
            }, canStart: { id in
                guard let perHost, let host = s.transfers[id]?.target.resolved.authority else { return true }
                return s.runningPerHost[host, default: 0] < perHost
            })
            guard let id = next, let t = s.transfers[id] else { break }
            s.transfers[id]!.phase = .running(engineID: nil, cancelRequested: false)
            s.queued -= 1
            s.running += 1
            s.runningPerHost[t.target.resolved.authority, default: 0] += 1
            starts.append(Start(id: id, target: t.target))
        }
        return starts
    }

    /// Hands scheduled transfers to the engine.
    private func launch(_ starts: [Start]) {
        for start in starts {
            notify(.started(start.target.request))
            let ctx = Unmanaged.passRetained(TransferContext(id: start.id, core: self)).toOpaque()
            let callbacks = TransferContext.callbacks(wantsHead: wantsHead)
            let result = start.target.resolved.withCRequest { req in
                req.callbacks = callbacks
                req.ctx = ctx
                return engine.start(&req)
            }
            switch result {
            case .success(let engineID):
                let cancelNow = state.withLock { s -> Bool in
                    guard case .running(_, let cancelRequested)? = s.transfers[start.id]?.phase else {
                        return false
                    }
                    s.transfers[start.id]!.phase = .running(engineID: engineID, cancelRequested: cancelRequested)
                    return cancelRequested
                }
                if cancelNow { engine.cancel(engineID) }
            case .failure(let error):
                Unmanaged<TransferContext>.fromOpaque(ctx).release()
                finish(start.id) { _ in (.failure(error), nil) }
            }
        }
    }

    // MARK: - Engine callbacks (on the engine thread)

    func contextCreated() {
        state.withLock { $0.contexts += 1 }
    }

    func contextReleased() {
        state.withLock { $0.contexts -= 1 }
    }

    /// Checks a response head; false stops the transfer.
    func transferDidReceiveHead(_ id: UInt64, _ head: ic_fetch_head) -> Bool {
        guard let t = state.withLock({ $0.transfers[id] }) else { return false }
        let response = DownloadResponse(head, requestURL: t.target.request.url, requestURLString: t.target.resolved.url)
        notify(.response(t.target.request, response))
        guard configuration.acceptableStatusCodes.contains(response.statusCode),
              let rejection = validate(response) else { return true }
        state.withLock { $0.transfers[id]?.rejection = rejection }
        return false
    }

    /// Passes progress to every waiter of the transfer.
    func transferDidProgress(_ id: UInt64, received: UInt64, expected: Int64) {
        let (handlers, request) = state.withLock { s -> ([Progress], DownloadRequest?) in
            guard let t = s.transfers[id] else { return ([], nil) }
            return (t.waiters.compactMap { s.waiters[$0]?.progress }, t.target.request)
        }
        let progress = DownloadProgress(receivedBytes: Int64(clamping: received),
                                        expectedBytes: expected >= 0 ? expected : nil)
        for handler in handlers { handler(progress) }
        if let request { notify(.progress(request, progress)) }
    }

    /// Turns the engine's outcome into each waiter's result and fills the freed slot.
    func transferDidComplete(_ id: UInt64, _ outcome: UnsafeMutablePointer<ic_fetch_outcome>) {
        var data = Data()
        if let body = outcome.pointee.body, outcome.pointee.body_len > 0 {
            // The body is ours now; releasing the Data gives the buffer back to the engine's pool.
            data = Data(bytesNoCopy: body, count: outcome.pointee.body_len, deallocator: .custom { p, _ in
                ic_fetch_body_release(p.assumingMemoryBound(to: UInt8.self))
            })
            outcome.pointee.body = nil
        }
        let o = outcome.pointee
        finish(id) { t in
            let metrics = DownloadMetrics(o.metrics, sharedBy: t.waiters.count)
            let response = o.head.map {
                DownloadResponse($0.pointee, requestURL: t.target.request.url, requestURLString: t.target.resolved.url)
            }
            if let response {
                if o.result == IC_FETCH_OK {
                    return (.success(DownloadResult(status: .downloaded, data: data, response: response,
                                                    metrics: metrics)), metrics)
                }
                if o.result == IC_FETCH_HTTP_STATUS, response.statusCode == 304, t.target.resolved.isConditional {
                    return (.success(DownloadResult(status: .notModified, data: Data(), response: response,
                                                    metrics: metrics)), metrics)
                }
            }
            if o.result == IC_FETCH_ABORTED, let rejection = t.rejection { return (.failure(rejection), metrics) }
            let message = o.message.map { String(cString: $0) } ?? ""
            return (.failure(ImageKitError(fetch: o.result, curlCode: o.curl_code, message: message,
                                           status: response?.statusCode ?? 0)), metrics)
        }
    }

    /// Ends transfer `id`: frees its slot, tells the observers, gives `outcome`'s
    /// result to its waiters and starts what the slot allows.
    private func finish(_ id: UInt64,
                        outcome: (Transfer) -> (Result<DownloadResult, ImageKitError>, DownloadMetrics?)) {
        let ended = state.withLock { s -> (Transfer, [Completion], [Start])? in
            guard let t = s.transfers.removeValue(forKey: id) else { return nil }
            if s.byKey[t.target.resolved] == id { s.byKey[t.target.resolved] = nil }
            s.running -= 1
            let host = t.target.resolved.authority
            if let n = s.runningPerHost[host] { s.runningPerHost[host] = n > 1 ? n - 1 : nil }
            let completions = t.waiters.compactMap { s.waiters.removeValue(forKey: $0)?.completion }
            return (t, completions, schedule(&s))
        }
        guard let (transfer, completions, starts) = ended else { return }
        let (result, metrics) = outcome(transfer)
        switch result {
        case .success(let r): notify(.finished(transfer.target.request, r.response, r.metrics))
        case .failure(let e): notify(.failed(transfer.target.request, e, metrics))
        }
        for completion in completions { completion(result) }
        launch(starts)
    }

    // MARK: - Helpers

    /// Why `response` is not acceptable, or nil.
    private func validate(_ response: DownloadResponse) -> ImageKitError? {
        if let types = configuration.acceptableContentTypes {
            let mime = response.mimeType ?? ""
            let accepted = types.contains { pattern in
                let p = pattern.lowercased()
                return p.hasSuffix("/*") ? mime.hasPrefix(p.dropLast()) : p == mime
            }
            if !accepted {
                return .unacceptableContentType(
                    "Content-Type \"\(mime)\" of \(response.url.absoluteString) is not one of \(types.sorted())")
            }
        }
        guard let validator = configuration.responseValidator else { return nil }
        do {
            try validator(response)
            return nil
        } catch let error as ImageKitError {
            return error
        } catch {
            return .invalidResponse("the response validator rejected \(response.url.absoluteString): \(error)")
        }
    }

    /// Sends `event` to the observers on the callback queue.
    private func notify(_ event: @autoclosure () -> DownloadEvent) {
        let observers = configuration.observers
        guard !observers.isEmpty else { return }
        let e = event()
        configuration.callbackQueue.async {
            for observer in observers { observer.receive(e) }
        }
    }
}
