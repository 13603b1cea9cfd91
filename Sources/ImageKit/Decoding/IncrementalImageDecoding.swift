#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One decode fed the encoded bytes piece by piece as they arrive, which the ``ImageManager``
/// runs while a download streams (see ``ImageCoding/makeIncrementalDecoder(for:options:cancellation:)``).
///
/// The manager feeds a decoder from one serial context: its calls come one after another
/// (possibly from different worker threads), never two at once, and none after ``finish()``.
/// ``finish()`` gives what ``ImageCoding/decode(_:options:cancellation:)`` gives for the
/// concatenated pieces — the same image, or the same error.
public protocol IncrementalImageDecoding: AnyObject, Sendable {
    /// Takes the next piece of the body and decodes as far as the bytes so far allow.
    ///
    /// - Throws: a failure that is final (corrupt data, a limit exceeded, cancellation); the
    ///   manager then feeds no more.
    func feed(_ data: Data) throws

    /// The image as far as it is decoded (rows not decoded yet transparent, a progressive
    /// image at its last complete pass), or nil when nothing is decoded yet or the decoder
    /// gives no partial images.
    ///
    /// - Throws: a failure of the decode.
    func partialImage() throws -> Image?

    /// Bytes of the body the decoder holds now (input not consumed yet or kept for the end).
    var bufferedBytes: Int { get }

    /// Ends the input and returns the image.
    ///
    /// - Throws: what the coder's decode throws for the whole body (a body that ends early
    ///   fails as it does).
    func finish() throws -> Image
}
