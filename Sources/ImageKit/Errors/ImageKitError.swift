/// Every error ImageKit reports.
///
/// An error has a stable ``code`` (its kind), the sentence from the layer that failed
/// (the decoder's, the disk tier's, …) in ``message``, for example `"PNG: IDAT: CRC error"`
/// or `"JPEG: truncated after 4112 bytes"`, the details some kinds carry (``httpStatus-swift.property``,
/// ``format``, ``curlCode``, ``original``), and the foreign error it stands for, if any, in
/// ``underlying`` (what a transformer or a response validator threw, for example).
///
/// Match on the code, not on the error: new codes may be added in minor releases, so a
/// `switch` over ``Code`` needs a `default:` clause.
///
/// ```swift
/// do {
///     let result = try await manager.image(for: url)
/// } catch {
///     // `error` is an ImageKitError: the manager's calls declare `throws(ImageKitError)`.
///     switch error.code {
///     case .httpStatus: print("origin answered \(error.httpStatus!)")
///     case .cancelled: return
///     default: print("failed: \(error)")
///     }
/// }
/// ```
///
/// Errors are made with the static functions named after their codes
/// (`.corrupt("…")`, `.httpStatus(404, "…")`, ``cancelled``), or with
/// ``init(code:message:underlying:)``.
public struct ImageKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of error.
    public let code: Code
    /// The human sentence describing the failure.
    public let message: String
    /// For ``Code/httpStatus``, the status the server answered with; else nil.
    public let httpStatus: Int?
    /// For ``Code/unsupportedFormat``, the format that is recognised but not decoded; else nil.
    public let format: ImageFormat?
    /// For ``Code/transferFailed``, libcurl's error code; else nil.
    public let curlCode: Int?
    /// The error this one stands for: a foreign error that was wrapped (what a transformer or
    /// a response validator threw), or for ``Code/blocklisted`` the failure that put the URL
    /// on the blocklist (see ``original``); else nil. (`Error` refines `Sendable`, so this is
    /// safe to send.)
    public let underlying: (any Error)?

    /// An error of kind `code` with the sentence `message`, standing for `underlying` if given.
    ///
    /// - Parameters:
    ///   - code: The kind of error.
    ///   - message: The human sentence describing the failure.
    ///   - underlying: The foreign error this one stands for, kept as ``underlying``.
    public init(code: Code, message: String, underlying: (any Error)? = nil) {
        self.init(code, message, underlying: underlying)
    }

    private init(_ code: Code, _ message: String, httpStatus: Int? = nil, format: ImageFormat? = nil,
                 curlCode: Int? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.format = format
        self.curlCode = curlCode
        self.underlying = underlying
    }

    /// For ``Code/blocklisted``, the lasting failure that put the URL on the blocklist; else nil.
    public var original: ImageKitError? {
        code == .blocklisted ? underlying as? ImageKitError : nil
    }

    /// The same as ``message``.
    public var description: String { message }

    /// Whether two errors say the same: the same ``code``, ``message``, ``httpStatus-swift.property``,
    /// ``format`` and ``curlCode``, and, when both ``underlying`` errors are ImageKitErrors
    /// (a blocklisted error's ``original``), equal ones. A foreign underlying error cannot be
    /// compared and is ignored.
    public static func == (lhs: ImageKitError, rhs: ImageKitError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.httpStatus == rhs.httpStatus
            && lhs.format == rhs.format && lhs.curlCode == rhs.curlCode
            && lhs.underlying as? ImageKitError == rhs.underlying as? ImageKitError
    }

    // Construction under the names of the codes.

    /// An ``Code/invalidArgument`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func invalidArgument(_ message: String) -> ImageKitError { .init(.invalidArgument, message) }
    /// An ``Code/unknownFormat`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func unknownFormat(_ message: String) -> ImageKitError { .init(.unknownFormat, message) }
    /// An ``Code/unsupportedFormat`` error for `format`.
    /// - Parameters:
    ///   - format: The format that is recognised but not decoded.
    ///   - message: The human sentence describing the failure.
    public static func unsupportedFormat(_ format: ImageFormat, _ message: String) -> ImageKitError {
        .init(.unsupportedFormat, message, format: format)
    }
    /// An ``Code/unsupportedFeature`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func unsupportedFeature(_ message: String) -> ImageKitError { .init(.unsupportedFeature, message) }
    /// A ``Code/limitExceeded`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func limitExceeded(_ message: String) -> ImageKitError { .init(.limitExceeded, message) }
    /// A ``Code/corrupt`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func corrupt(_ message: String) -> ImageKitError { .init(.corrupt, message) }
    /// A ``Code/truncated`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func truncated(_ message: String) -> ImageKitError { .init(.truncated, message) }
    /// An ``Code/outOfMemory`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func outOfMemory(_ message: String) -> ImageKitError { .init(.outOfMemory, message) }
    /// An ``Code/io`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func io(_ message: String) -> ImageKitError { .init(.io, message) }
    /// The ``Code/cancelled`` error (its message is `"cancelled"`).
    public static let cancelled = ImageKitError(.cancelled, "cancelled")
    /// An ``Code/encodeFailed`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func encodeFailed(_ message: String) -> ImageKitError { .init(.encodeFailed, message) }
    /// A ``Code/noSpace`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func noSpace(_ message: String) -> ImageKitError { .init(.noSpace, message) }
    /// An ``Code/internal`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func `internal`(_ message: String) -> ImageKitError { .init(.internal, message) }

    /// An ``Code/httpStatus`` error for `status`.
    /// - Parameters:
    ///   - status: The status the server answered with.
    ///   - message: The human sentence describing the failure.
    public static func httpStatus(_ status: Int, _ message: String) -> ImageKitError {
        .init(.httpStatus, message, httpStatus: status)
    }
    /// A ``Code/network`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func network(_ message: String) -> ImageKitError { .init(.network, message) }
    /// A ``Code/timedOut`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func timedOut(_ message: String) -> ImageKitError { .init(.timedOut, message) }
    /// A ``Code/dnsFailed`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func dnsFailed(_ message: String) -> ImageKitError { .init(.dnsFailed, message) }
    /// A ``Code/connectFailed`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func connectFailed(_ message: String) -> ImageKitError { .init(.connectFailed, message) }
    /// A ``Code/tlsFailed`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func tlsFailed(_ message: String) -> ImageKitError { .init(.tlsFailed, message) }
    /// A ``Code/responseTooLarge`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func responseTooLarge(_ message: String) -> ImageKitError { .init(.responseTooLarge, message) }
    /// A ``Code/tooManyRedirects`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func tooManyRedirects(_ message: String) -> ImageKitError { .init(.tooManyRedirects, message) }
    /// A ``Code/disallowedProtocol`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func disallowedProtocol(_ message: String) -> ImageKitError { .init(.disallowedProtocol, message) }
    /// An ``Code/invalidURL`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func invalidURL(_ message: String) -> ImageKitError { .init(.invalidURL, message) }
    /// An ``Code/unacceptableContentType`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func unacceptableContentType(_ message: String) -> ImageKitError {
        .init(.unacceptableContentType, message)
    }
    /// An ``Code/invalidResponse`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func invalidResponse(_ message: String) -> ImageKitError { .init(.invalidResponse, message) }
    /// A ``Code/transferFailed`` error with libcurl's error code.
    /// - Parameters:
    ///   - curlCode: libcurl's error code.
    ///   - message: The human sentence describing the failure.
    public static func transferFailed(curlCode: Int, _ message: String) -> ImageKitError {
        .init(.transferFailed, message, curlCode: curlCode)
    }
    /// A ``Code/destinationRefused`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func destinationRefused(_ message: String) -> ImageKitError { .init(.destinationRefused, message) }

    /// A ``Code/blocklisted`` error for a URL that failed earlier with `original`.
    /// - Parameters:
    ///   - message: The human sentence describing the failure.
    ///   - original: The lasting failure that put the URL on the blocklist.
    public static func blocklisted(_ message: String, original: ImageKitError) -> ImageKitError {
        .init(.blocklisted, message, underlying: original)
    }
    /// A ``Code/notInCache`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func notInCache(_ message: String) -> ImageKitError { .init(.notInCache, message) }
    /// A ``Code/deadlineExceeded`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func deadlineExceeded(_ message: String) -> ImageKitError { .init(.deadlineExceeded, message) }
    /// A ``Code/vetoed`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func vetoed(_ message: String) -> ImageKitError { .init(.vetoed, message) }
    /// A ``Code/transformFailed`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func transformFailed(_ message: String) -> ImageKitError { .init(.transformFailed, message) }
    /// An ``Code/overloaded`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func overloaded(_ message: String) -> ImageKitError { .init(.overloaded, message) }
    /// A ``Code/shutDown`` error.
    /// - Parameter message: The human sentence describing the failure.
    public static func shutDown(_ message: String) -> ImageKitError { .init(.shutDown, message) }
}
