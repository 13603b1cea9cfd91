import CImageCore
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The downloader over the C fetch engine: ``DownloaderStateMachine`` behind one lock,
/// and the code that carries out the actions its transitions return.
///
/// Each entry point (a caller's submit or cancel, an engine callback, a launch run) runs a
/// transition with the lock held and acts on the action it returns after releasing the
/// lock: completions, progress handlers, observers, task cancellation and every C call run
/// unlocked. A transfer's end passes through the configuration's response modifier and
/// decryptor, when there are any, on `hooksQueue` (never the engine thread) before its
/// waiters complete.
///
/// Transfers reach the engine in one place, `launch`, which runs only in a launch run on
/// `launchQueue`. The state machine puts every transfer it starts in a backlog and asks for
/// a run when none is pending; the run hands the backlog over until it is empty. A slot
/// freed by a completion (inside the engine's `on_complete` callback) is filled the same
/// way, so `ic_fetch_start` never runs inside an engine callback, nor with a lock held, and
/// transfers are handed over in the order the state machine started them.
final class DownloaderCore: Sendable {
    typealias Completion = DownloaderStateMachine.Completion
    typealias Progress = DownloaderStateMachine.Progress
    typealias Stream = DownloaderStateMachine.Stream
    private typealias Start = DownloaderStateMachine.Start

    let configuration: DownloaderConfiguration
    private let defaults: ResolvedRequest.Defaults
    private let engine: FetchEngine
    private let state: Locked<DownloaderStateMachine>
    /// Where launch runs go (serial: at most one is pending at a time anyway).
    private let launchQueue = DispatchQueue(label: "ImageKit.Downloader.launch")
    /// Where the response modifier and the decryptor run (never the engine thread).
    private let hooksQueue = DispatchQueue(label: "ImageKit.Downloader.hooks")
    /// Whether the engine must report heads (someone looks at them before the body).
    private let wantsHead: Bool
    private let events: EventFanOut<DownloadEvent>

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
        state = Locked(DownloaderStateMachine(limits: DownloaderStateMachine.Limits(
            maxConcurrent: configuration.maxConcurrentDownloads,
            maxPerHost: configuration.maxConcurrentDownloadsPerHost, order: configuration.executionOrder)))
        wantsHead = !configuration.observers.isEmpty || configuration.acceptableContentTypes != nil
            || configuration.responseValidator != nil
        events = EventFanOut(configuration.observers.map { observer in { observer.receive($0) } })
    }

    // MARK: - Callers

    /// Registers a waiter for a token; `submit` gives it its request.
    func makeWaiter() -> UInt64 {
        state.withLock { $0.makeWaiter() }
    }

    /// Sends waiter `id`'s request: through the request modifier if there is one,
    /// then into a transfer (a new one or an identical one in flight; with `stream`, one whose
    /// body goes to the stream as it arrives, joined only before its body starts).
    func submit(_ id: UInt64, _ request: DownloadRequest, priority: ImagePriority, progress: Progress?,
                stream: Stream? = nil, completion: @escaping Completion) {
        let modifier = configuration.requestModifier
        let action = state.withLock {
            $0.submit(id, priority: priority, progress: progress, stream: stream, completion: completion,
                      hasModifier: modifier != nil)
        }
        switch action {
        case .complete(let completion, let error):
            completion(.failure(error))
        case .attach:
            attach(id, request)
        case .runModifier:
            let task = Task {
                // The state machine asks for this only when there is a modifier.
                let modified = await modifier!(request)
                self.finishPreparing(id, modified)
            }
            if case .cancelTask = state.withLock({ $0.modifierStarted(id, task: task) }) { task.cancel() }
        }
    }

    /// Cancels waiter `id`: it completes with `.cancelled` now; its transfer is
    /// aborted if no other waiter is left on it.
    func cancel(_ id: UInt64) {
        perform(state.withLock { $0.cancel(id) })
    }

    /// Cancels every waiter: each completes with `.cancelled` now; queued transfers leave the
    /// queue and running ones are aborted.
    func cancelAll() {
        for action in state.withLock({ $0.cancelAll() }) { perform(action) }
    }

    /// Carries out a cancel action: the modifier task and the engine transfer it names are
    /// cancelled, then the caller completes.
    private func perform(_ action: DownloaderStateMachine.CancelAction) {
        guard case .complete(let completion, let task, let engineID) = action else { return }
        task?.cancel()
        if let engineID { engine.cancel(engineID) }
        completion(.failure(.cancelled))
    }

    /// Whether queued transfers are held back (running ones go on).
    var isSuspended: Bool {
        state.withLock { $0.isSuspended }
    }

    /// Suspends or resumes starting queued transfers; resuming starts what the limits allow.
    func setSuspended(_ suspended: Bool) {
        if case .queueLaunchRun = state.withLock({ $0.setSuspended(suspended) }) { queueLaunchRun() }
    }

    /// Refuses later submissions (they complete as cancelled); what is in flight goes on.
    func refuseNew() {
        state.withLock { $0.refuseNew() }
    }

    /// Stops everything: running transfers are aborted, queued ones and their
    /// waiters complete as cancelled, and later submissions fail the same way.
    func shutdown() {
        state.withLock { $0.beginShutdown() }
        engine.shutdown()
        let action = state.withLock { $0.finishShutdown() }
        for task in action.modifierTasks { task.cancel() }
        for completion in action.completions { completion(.failure(.cancelled)) }
    }

    /// Whether a download's body can stream to its caller: not when a response modifier or a
    /// decryptor must see the whole body first.
    var streamsBodies: Bool {
        configuration.responseModifier == nil && configuration.decryptor == nil
    }

    /// Counters for tests and metrics.
    var statistics: DownloaderStatistics {
        let e = engine.stats()
        return state.withLock { s in
            DownloaderStatistics(
                waiters: s.waiterCount, transfers: s.transferCount, queuedTransfers: s.queuedTransfers,
                runningTransfers: s.runningTransfers, pendingRequestModifiers: s.modifierTasks,
                transferContexts: s.transferContexts, engineStarted: Int(e.started), engineCompleted: Int(e.completed),
                engineQueued: Int(e.queued), engineActive: Int(e.active), engineEasyHandles: Int(e.easy_handles),
                bodies: Int(e.bodies_out), bodyBytes: Int(clamping: e.body_bytes_out))
        }
    }

    // MARK: - Scheduling

    private func finishPreparing(_ id: UInt64, _ request: DownloadRequest?) {
        state.withLock { $0.modifierFinished() }
        if let request {
            attach(id, request)
        } else {
            fail(id, .cancelled)
        }
    }

    /// Completes a waiter that never reached a transfer.
    private func fail(_ id: UInt64, _ error: ImageKitError) {
        if case .complete(let completion, let error) = state.withLock({ $0.fail(id, error) }) {
            completion(.failure(error))
        }
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
        if case .queueLaunchRun = state.withLock({ $0.attach(id, request: request, resolved: resolved) }) {
            queueLaunchRun()
        }
    }

    private func queueLaunchRun() {
        launchQueue.async { self.runLaunches() }
    }

    /// Hands the transfers the state machine started to the engine until none is left.
    /// Runs on `launchQueue` only.
    private func runLaunches() {
        while true {
            let starts = state.withLock { $0.takeLaunches() }
            if starts.isEmpty { return }
            for start in starts { launch(start) }
        }
    }

    /// Hands one started transfer to the engine.
    private func launch(_ start: Start) {
        notify(.started(start.target.request))
        let target = start.target
        let ctx = Unmanaged.passRetained(TransferContext(id: start.transfer, core: self)).toOpaque()
        let callbacks = TransferContext.callbacks(wantsHead: wantsHead, streams: target.streams)
        let result = target.resolved.withCRequest { req in
            req.callbacks = callbacks
            req.keep_body = target.streams && target.keepsBody ? 1 : 0
            req.ctx = ctx
            return engine.start(&req)
        }
        switch result {
        case .success(let engineID):
            if case .abort(let engineID) = state.withLock({ $0.transferStarted(start.transfer, engineID: engineID) }) {
                engine.cancel(engineID)
            }
        case .failure(let error):
            Unmanaged<TransferContext>.fromOpaque(ctx).release()
            finish(state.withLock { $0.transferCompleted(start.transfer) }) { _ in (.failure(error), nil) }
        }
    }

    // MARK: - Engine callbacks (on the engine thread)

    func contextCreated() {
        state.withLock { $0.contextCreated() }
    }

    func contextReleased() {
        state.withLock { $0.contextReleased() }
    }

    /// Checks a response head; false stops the transfer.
    func transferDidReceiveHead(_ id: UInt64, _ head: ic_fetch_head) -> Bool {
        guard let target = state.withLock({ $0.target(of: id) }) else { return false }
        let response = DownloadResponse(head, requestURL: target.request.url, requestURLString: target.resolved.url)
        notify(.response(target.request, response))
        guard configuration.acceptableStatusCodes.contains(response.statusCode),
              let rejection = validate(response) else { return true }
        state.withLock { $0.headRejected(id, rejection) }
        return false
    }

    /// Hands a piece of a streamed body to every waiter of the transfer that streams.
    func transferDidReceiveBody(_ id: UInt64, _ piece: UnsafeRawBufferPointer) {
        for chunks in state.withLock({ $0.bodyPiece(of: id) }) { chunks(piece) }
    }

    /// Passes progress to every waiter of the transfer.
    func transferDidProgress(_ id: UInt64, received: UInt64, expected: Int64) {
        guard case .report(let target, let handlers) = state.withLock({ $0.progress(of: id) }) else { return }
        let progress = DownloadProgress(receivedBytes: Int64(clamping: received),
                                        expectedBytes: expected >= 0 ? expected : nil)
        for handler in handlers { handler(progress) }
        notify(.progress(target.request, progress))
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
        finish(state.withLock { $0.transferCompleted(id) }) { f in
            let metrics = DownloadMetrics(o.metrics, sharedBy: f.sharedBy)
            let response = o.head.map {
                DownloadResponse($0.pointee, requestURL: f.target.request.url, requestURLString: f.target.resolved.url)
            }
            if let response {
                if o.result == IC_FETCH_OK {
                    return (.success(DownloadResult(status: .downloaded, data: data, response: response,
                                                    metrics: metrics)), metrics)
                }
                if o.result == IC_FETCH_HTTP_STATUS, response.statusCode == 304, f.target.resolved.isConditional {
                    return (.success(DownloadResult(status: .notModified, data: Data(), response: response,
                                                    metrics: metrics)), metrics)
                }
            }
            if o.result == IC_FETCH_ABORTED, let rejection = f.rejection { return (.failure(rejection), metrics) }
            var message = o.message.map { String(cString: $0) } ?? ""
            // The engine's sentences name no URL; this one says which, written safely.
            if o.result == IC_FETCH_HTTP_STATUS || o.result == IC_FETCH_NETWORK, let response {
                message += " from \(MessageURL.describe(response.url))"
            }
            return (.failure(ImageKitError(fetch: o.result, curlCode: o.curl_code, message: message,
                                           status: response?.statusCode ?? 0)), metrics)
        }
    }

    /// Carries out a transfer's end: tells the observers, gives `outcome`'s result to its
    /// waiters, and queues a launch run for what the freed slot started (this may run inside
    /// the engine's completion callback, which must not hand transfers to the engine itself).
    private func finish(_ action: DownloaderStateMachine.CompletedAction,
                        outcome: (DownloaderStateMachine.Finished)
                            -> (Result<DownloadResult, ImageKitError>, DownloadMetrics?)) {
        guard case .finish(let finished) = action else { return }
        let (result, metrics) = outcome(finished)
        guard case .success(let download) = result,
              configuration.responseModifier != nil || configuration.decryptor != nil else {
            deliver(result, metrics, finished)
            if finished.queueLaunchRun { queueLaunchRun() }
            return
        }
        if finished.queueLaunchRun { queueLaunchRun() }
        hooksQueue.async {
            self.deliver(self.applyHooks(download, finished.target.request.url), metrics, finished)
        }
    }

    /// Tells the observers how transfer `finished` ended and gives its waiters `result`.
    private func deliver(_ result: Result<DownloadResult, ImageKitError>, _ metrics: DownloadMetrics?,
                         _ finished: DownloaderStateMachine.Finished) {
        switch result {
        case .success(let r): notify(.finished(finished.target.request, r.response, r.metrics))
        case .failure(let e): notify(.failed(finished.target.request, e, metrics))
        }
        for completion in finished.completions { completion(result) }
    }

    /// `download` through the configuration's response modifier, then (for a downloaded body)
    /// its decryptor.
    private func applyHooks(_ download: DownloadResult, _ url: URL) -> Result<DownloadResult, ImageKitError> {
        do {
            var result = download
            if let modifier = configuration.responseModifier { result = try modifier(result) }
            if let decryptor = configuration.decryptor, result.status == .downloaded {
                result.data = try decryptor(result.data, result.response)
            }
            return .success(result)
        } catch let error as ImageKitError {
            return .failure(error)
        } catch {
            return .failure(.invalidResponse(
                "the response modifier or decryptor rejected \(MessageURL.describe(url)): \(error)"))
        }
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
                    "Content-Type \"\(mime)\" of \(MessageURL.describe(response.url)) is not one of \(types.sorted())")
            }
        }
        guard let validator = configuration.responseValidator else { return nil }
        do {
            try validator(response)
            return nil
        } catch let error as ImageKitError {
            return error
        } catch {
            return ImageKitError(code: .invalidResponse,
                                 message: "the response validator rejected "
                                     + "\(MessageURL.describe(response.url)): \(error)",
                                 underlying: error)
        }
    }

    /// Sends `event` to the observers (see ``EventFanOut``): on this thread, with no lock held.
    private func notify(_ event: @autoclosure () -> DownloadEvent) {
        events.emit(event())
    }
}
