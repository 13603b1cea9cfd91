/// Gives a load asking for bytes its encoded variant: the one found, else the image encoded
/// through the load's coder on a worker thread. Loads that want no bytes pass through.
struct EncodeStage: Sendable {
    let job: ImageLoadJob

    /// `found` with the encoded variant the load asks for, encoding the image when the variant
    /// was not found; `found` itself for loads that want no bytes.
    func run(_ found: Found, _ metrics: inout ImageLoadMetrics) async throws -> Found {
        let plan = job.plan
        guard let output = plan.output, found.encoded == nil else { return found }
        guard let image = found.image else {
            throw ImageKitError.internal("no image to encode for \(MessageURL.describe(plan.url))")
        }
        let format = output.encodeFormat(for: image)
        let key = plan.variantKey ?? plan.key
        let start = MonotonicClock.now()
        do {
            let encoded = try await job.manager.workers.run(priority: plan.priority) {
                try plan.coder.encode(image, as: format)
            }
            let duration = MonotonicClock.duration(since: start)
            metrics.encode = duration
            job.emit(.encoded(url: plan.url, key: key, format: encoded.format, bytes: encoded.data.count,
                              duration: duration, error: nil))
            var done = found
            done.encoded = encoded
            done.encodedTier = []
            return done
        } catch {
            let e = ImageKitError(wrapping: error)
            job.emit(.encoded(url: plan.url, key: key, format: format.imageFormat, bytes: 0,
                              duration: MonotonicClock.duration(since: start), error: e))
            throw e
        }
    }
}
