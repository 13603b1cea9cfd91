import Foundation
@testable import ImageKit

/// A coder whose decode waits (up to 10 s) until `open()` is called, then returns a 1x1 image
/// whose red channel is `red`: claims every input, counts its decodes and records whether each
/// was offered a helper thread (``DecodeOptions/usesHelperThread``) and whether the manager's
/// helper-yield signal was raised when it started.
final class GatedCoder: ImageCoding {
    private struct State {
        var decodes = 0
        var helperThreads: [Bool] = []
        var yieldAtStart: [Bool] = []
        var isOpen = false
    }

    let red: UInt8
    private let state = Locked(State())

    init(red: UInt8) {
        self.red = red
    }

    var decodes: Int { state.withLock { $0.decodes } }

    /// Per decode so far, in the order they started, whether it was offered a helper thread.
    var helperThreads: [Bool] { state.withLock { $0.helperThreads } }

    /// Per decode, whether its cancellation's helper-yield signal was raised as it started
    /// (false when it carries none).
    var yieldAtStart: [Bool] { state.withLock { $0.yieldAtStart } }

    func open() {
        state.withLock { $0.isOpen = true }
    }

    func canDecode(_ data: Data) -> Bool { true }

    func decode(_ data: Data, options: DecodeOptions, cancellation: DecodeCancellation) throws -> Image {
        state.withLock {
            $0.decodes += 1
            $0.helperThreads.append(options.usesHelperThread)
            $0.yieldAtStart.append(cancellation.helperYield?.isRaised ?? false)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !state.withLock({ $0.isOpen }) {
            guard ContinuousClock.now < deadline else { throw ImageKitError.timedOut("the gate never opened") }
            usleep(1000)
        }

        return try Image(width: 1, height: 1, frames: [[red, 0, 0, 255]])
    }

    func canEncode(_ format: ImageFormat) -> Bool { false }

    func encode(_ image: Image, as format: EncodeFormat) throws -> EncodedImage {
        throw ImageKitError.unsupportedFormat(format.imageFormat, "the gated coder does not encode")
    }
}
