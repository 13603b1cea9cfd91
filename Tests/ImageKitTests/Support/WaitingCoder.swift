import Foundation
import ImageKit

/// A coder whose decode waits (up to 10 s) for its cancellation, so tests can see a cancelled
/// load reach a custom coder: claims every input.
final class WaitingCoder: ImageCoding {
    private struct State {
        var started = false
        var sawCancellation = false
        var finished = false
    }

    private let state = Locked(State())

    var started: Bool { state.withLock { $0.started } }
    var sawCancellation: Bool { state.withLock { $0.sawCancellation } }
    var finished: Bool { state.withLock { $0.finished } }

    func canDecode(_ data: Data) -> Bool { true }

    func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws -> Image {
        state.withLock { $0.started = true }
        defer { state.withLock { $0.finished = true } }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if cancellation.isCancelled {
                state.withLock { $0.sawCancellation = true }
                throw ImageKitError.cancelled
            }
            usleep(1000)
        }
        throw ImageKitError.timedOut("the waiting coder was never cancelled")
    }

    func canEncode(_ format: ImageFormat) -> Bool { false }

    func encode(_ image: Image, as format: EncodeFormat) throws -> EncodedImage {
        throw ImageKitError.unsupportedFormat(format.imageFormat, "the waiting coder does not encode")
    }
}
