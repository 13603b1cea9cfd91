/// How much of a download's body has arrived.
public struct DownloadProgress: Sendable, Hashable {
    /// Body bytes received so far (after content decoding).
    public var receivedBytes: Int64
    /// The body's size from Content-Length, or nil when unknown (or content-encoded).
    public var expectedBytes: Int64?

    /// A progress figure.
    public init(receivedBytes: Int64, expectedBytes: Int64?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    /// `receivedBytes / expectedBytes` in 0...1, or nil when the size is unknown.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }
}
