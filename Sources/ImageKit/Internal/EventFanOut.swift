/// How an ``ImageManager`` and a ``Downloader`` deliver events to their observers — one
/// mechanism for both.
///
/// An event goes to every observer, in configuration order, synchronously on the thread
/// that reports it, never with a lock held: each component emits after releasing its own
/// lock. Events of one load or one transfer are reported one after another, so each
/// observer sees them in order. With no observers, no event is built.
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
