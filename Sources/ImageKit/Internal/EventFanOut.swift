/// How an ``ImageManager`` and a ``Downloader`` deliver events to their observers — one
/// mechanism for both.
///
/// An event goes to every observer, in configuration order, synchronously on the thread
/// that reports it, never with a lock held: each component emits after releasing its own
/// lock. Events of one load or one transfer are reported one after another, so each
/// observer sees them in order. With no observers, no event is built.
///
/// A manager's per-load observers (``ImageLoadObserver``) are served by the same delivery:
/// ``emit(_:to:)`` hands an event to the manager's observers, then to those of the loads it
/// is about, in the same call, so they get the same guarantees.
struct EventFanOut<Event: Sendable>: Sendable {
    private let receivers: [@Sendable (Event) -> Void]
    /// Whether there is no observer (events are then never built).
    let isEmpty: Bool

    /// Delivery to `receivers` (each observer's `receive`).
    init(_ receivers: [@Sendable (Event) -> Void]) {
        self.receivers = receivers
        isEmpty = receivers.isEmpty
    }

    /// Builds `event` and hands it to every observer; does nothing without observers.
    func emit(_ event: @autoclosure () -> Event) {
        guard !isEmpty else { return }
        let e = event()
        for receive in receivers { receive(e) }
    }
}

extension EventFanOut where Event == ImageManagerEvent {
    /// Builds `event` and hands it to every observer, then to `loadObservers` (the per-load
    /// observers of the loads it is about); builds nothing when there are none at all.
    func emit(_ event: @autoclosure () -> Event, to loadObservers: [any ImageLoadObserver]) {
        guard !isEmpty || !loadObservers.isEmpty else { return }
        let e = event()
        for receive in receivers { receive(e) }
        for observer in loadObservers { observer.receive(e) }
    }
}
