/// Receives the events of one load: made for it by an ``ImageLoadObserverFactory`` when the
/// load starts, so it can hold what belongs to that load alone (a tracing span, a request's
/// logger).
///
/// It gets the load's own events — the memory lookup, the completion (twice for a refreshed
/// load whose image changed), the failure or the cancellation — and the events of the pipeline
/// (disk query, download, decode, transform, encode, store) while the load waits on it, so loads
/// that share a pipeline each see its events from the moment they joined. A disk write the load
/// does not wait for (no ``ImageOptions/waitStoreCache``) happens after its end and is not
/// reported to it. Events reach it the way they reach the manager's ``ImageManagerObserver``s,
/// in the same call and right after them: synchronously on the thread where they happen, never
/// with a lock held, the pipeline's one after another in order. The load's own completion may
/// run on another thread while a pipeline event is delivered (a refreshed load's cached image
/// while its download goes on), and a pipeline event racing with a cancellation may still
/// arrive after ``loadEnded()``.
public protocol ImageLoadObserver: Sendable {
    /// Called for every event of the load.
    func receive(_ event: ImageManagerEvent)
    /// Called once when the load has ended — after its last completion (a refreshed load's
    /// `304 Not Modified` ends it without another), its failure or its cancellation.
    func loadEnded()
}
