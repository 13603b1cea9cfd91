/// Waiting for a condition that no one signals: the shutdowns' wait for in-flight work to end.
enum Polling {
    /// Returns once `condition` holds, looking every 2 ms. Only for rare waits (shutdown),
    /// where a signal on every decrement would cost the hot paths more than this costs once.
    static func waitUntil(_ condition: @Sendable () -> Bool) async {
        while !condition() {
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}
