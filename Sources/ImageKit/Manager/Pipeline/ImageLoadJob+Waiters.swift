/// The loads waiting on a pipeline: joining and leaving, and what the stages hand them.
extension ImageLoadJob {
    /// Adds `task` to the loads waiting on this pipeline, unless it no longer accepts any.
    func attach(_ task: ImageTask) -> StateMachine.AttachAction {
        state.withLock { $0.attach(task) }
    }

    /// Removes `task`; stops the pipeline when it was the last load and there is no result yet.
    func detach(_ task: ImageTask) {
        switch state.withLock({ $0.detach(task) }) {
        case .none:
            break
        case .stop(let running):
            cancellation.cancel()
            running?.cancel()
        }
    }

    /// The loads waiting for the result, which the pipeline now hands them; none join later.
    func takeWaiters() -> [ImageTask] {
        state.withLock { $0.finish() }
    }

    /// Hands a refreshed load's cached image to every load waiting (and, later, to those joining).
    func deliverCached(_ result: LoadResult) {
        let waiters = state.withLock { $0.foundCached(result) }
        for task in waiters { task.deliverCached(result) }
    }

    /// Ends every waiting load with `delivery`.
    func finishAll(_ delivery: ImageTask.Delivery) {
        for task in takeWaiters() { task.finish(delivery, detach: false) }
    }

    /// Fails every waiting load with `error` (unless the pipeline was cancelled) and puts the
    /// URL on the blocklist when the failure says something lasting about it.
    func fail(_ error: ImageKitError) {
        guard !Task.isCancelled else { return }
        manager.recordFailure(plan.url, error, loader: plan.loader)
        finishAll(.failure(error))
    }

    /// Sends `event` to the manager's observers and to the load observers of `tasks` (nil: the
    /// loads waiting on the pipeline now).
    func emit(_ event: @autoclosure () -> ImageManagerEvent, to tasks: [ImageTask]? = nil) {
        guard manager.hasLoadObserverFactories else { return manager.emit(event()) }
        let waiting = tasks ?? state.withLock { $0.waiters }
        manager.emit(event(), to: waiting.flatMap(\.loadObservers))
    }

    /// Passes download progress to every waiting load.
    func progress(_ progress: DownloadProgress) {
        let waiters = state.withLock { $0.waiters }
        for task in waiters { task.progress(progress) }
    }

    /// Where partial images go while some load waiting on the pipeline wants them, else nil.
    func partialSink() -> StreamingDecode.PartialSink? {
        let waiters = state.withLock { $0.waiters }
        guard waiters.contains(where: \.wantsPartialImages) else { return nil }
        return { [weak self] image in
            guard let self else { return }
            for task in self.state.withLock({ $0.waiters }) { task.partial(image) }
        }
    }
}
