/// The end of the route's synchronous part: a load the memory stage did not end joins the
/// pipeline for its key (one in flight, or a new one).
extension ImageManager {
    /// Hands `task` its result or starts (or joins) the pipeline that will; the pipeline is
    /// handed `finalEntry`, the first read as the load left it (run when an `async` load ran it
    /// inline and missed, so the pipeline does not ask again).
    func launch(_ task: ImageTask, _ outcome: MemoryStage.Outcome, finalEntry: FinalEntryRead = FinalEntryRead()) {
        switch outcome {
        case .failed(_, let error):
            task.finish(.failure(error), detach: false)
        case .hit(let result, _, _):
            task.finish(.image(result, isFinal: true), detach: false)
        case .memoryHit(let plan, let result):
            guard register(task, plan) else { return }
            if plan.isRefresh {
                task.deliverCached(result)
                join(task, plan)
            } else {  // .queryMemoryData
                let read = spawn {
                    var withData = result
                    withData.originalData = (try? await plan.cache.entry(forKey: plan.baseKey, kind: .original,
                                                                         from: .all))?.value.original
                    task.finish(.image(withData, isFinal: true), detach: false)
                }
                if !task.setWork(.task(read)) { read.cancel() }
            }
        case .load(let plan):
            guard register(task, plan) else { return }
            join(task, plan, finalEntry: finalEntry)
        }
    }

    /// Records `task` as running and arms its deadline; false when it was cancelled already.
    private func register(_ task: ImageTask, _ plan: LoadPlan) -> Bool {
        let running = tasks.withLock { t -> Bool in
            guard task.isRunning else { return false }
            t[task.id] = task
            return true
        }
        if running, let deadline = plan.context.deadline { task.arm(deadline: deadline) }
        return running
    }

    /// Puts `task` on the pipeline for its plan: one in flight with the same key, or a new one
    /// (handed `finalEntry`).
    private func join(_ task: ImageTask, _ plan: LoadPlan, finalEntry: FinalEntryRead = FinalEntryRead()) {
        let key = plan.pipelineKey(exclusive: plan.isShareable ? 0 : makeID())
        let (job, cached, isNew) = registry.withLock { reg -> (ImageLoadJob, LoadResult?, Bool) in
            if let existing = reg.jobs[key], case .joined(let cached) = existing.attach(task) {
                return (existing, cached, false)
            }
            let job = ImageLoadJob(plan: plan, key: key, manager: self, finalEntry: finalEntry)
            _ = job.attach(task)
            reg.jobs[key] = job
            return (job, nil, true)
        }
        if isNew { counters.withLock { $0.jobs += 1 } }
        if !task.setWork(.job(job)) { job.detach(task) }
        if let cached { task.deliverCached(cached) }
        if isNew { job.start() }
    }
}
