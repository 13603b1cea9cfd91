import Foundation

/// How ImageKit writes a URL into an error message, a log line or a span: safe to show.
///
/// Every ``ImageKitError`` message and every log ImageKit writes that names a URL names it
/// through here, so:
///
/// - the user part is removed: `http://user:secret@host/a.png` reads `http://host/a.png`;
/// - the value of a query parameter whose name suggests a secret is replaced by `REDACTED`:
///   names containing `token`, `secret`, `sig` (signature), `password`, `passwd`, `pwd`,
///   `auth`, `credential`, `key`, `session` or `jwt`, in any case — `X-Amz-Signature`,
///   `X-Amz-Credential`, `access_token`, `api_key`, `sig` — while `w=300` stays as it is;
/// - the fragment is dropped (it never reaches the server and may carry a token);
/// - a URL longer than ``maxLength`` bytes is cut there (at a character boundary) and followed
///   by its full length, so one request cannot put a 60 KB name into every message and log line.
///
/// The host stays, since an operator needs it in logs. A service answering a client should
/// not pass messages on at all: ``ImageKitError/clientMessage`` says what failed without any
/// URL or host.
public enum MessageURL {
    /// The most bytes (UTF-8) of a URL a message holds; a longer URL is cut to about this many.
    public static let maxLength = 200

    /// Lowercase parts of query parameter names whose values are not shown.
    static let secretNameParts = ["token", "secret", "sig", "password", "passwd", "pwd", "auth", "credential",
                                  "key", "session", "jwt"]

    /// `url` as a message shows it (see ``MessageURL``).
    public static func describe(_ url: URL) -> String {
        describe(url.absoluteString)
    }

    /// The URL string `string` as a message shows it (see ``MessageURL``); a string that is not a
    /// URL is only cut to ``maxLength``. Works on the UTF-8 bytes (every delimiter is ASCII), so a
    /// long URL costs one pass.
    public static func describe(_ string: String) -> String {
        let bytes = string.utf8
        let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        var out = ""
        out.reserveCapacity(min(bytes.count, maxLength) + 32)
        var rest = bytes.startIndex
        if let authority = authorityStart(bytes, end) {
            out += string[bytes.startIndex..<authority]
            let authorityEnd = bytes[authority..<end].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
                ?? end
            let at = bytes[authority..<authorityEnd].lastIndex(of: UInt8(ascii: "@"))
            out += string[(at.map { bytes.index(after: $0) } ?? authority)..<authorityEnd]
            rest = authorityEnd
        }
        if out.utf8.count <= maxLength, let question = bytes[rest..<end].firstIndex(of: UInt8(ascii: "?")) {
            out += string[rest...question]
            var start = bytes.index(after: question)
            while out.utf8.count <= maxLength {
                let stop = bytes[start..<end].firstIndex(of: UInt8(ascii: "&")) ?? end
                out += redacted(string[start..<stop])
                guard stop < end else { break }
                out += "&"
                start = bytes.index(after: stop)
            }
        } else if out.utf8.count <= maxLength {
            out += string[rest..<end]
        }
        return out.utf8.count > maxLength ? cut(out, total: bytes.count) : out
    }

    /// Where the authority starts: after `scheme://`, when the string begins with one (a
    /// scheme is ASCII letters, digits, "+", "-" and "."); else nil.
    private static func authorityStart(_ bytes: String.UTF8View, _ end: String.Index) -> String.Index? {
        var i = bytes.startIndex
        while i < end {
            let b = bytes[i]
            if b == UInt8(ascii: ":") { break }
            let isSchemeByte = (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
                || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
            if !isSchemeByte { return nil }
            i = bytes.index(after: i)
        }
        guard i != bytes.startIndex, i < end else { return nil }
        let slash1 = bytes.index(after: i)
        guard slash1 < end, bytes[slash1] == UInt8(ascii: "/") else { return nil }
        let slash2 = bytes.index(after: slash1)
        guard slash2 < end, bytes[slash2] == UInt8(ascii: "/") else { return nil }
        return bytes.index(after: slash2)
    }

    /// `name=value`, with the value replaced when the name suggests a secret.
    private static func redacted(_ parameter: Substring) -> Substring {
        guard let equals = parameter.utf8.firstIndex(of: UInt8(ascii: "=")) else { return parameter }
        let name = parameter[..<equals].lowercased()
        guard secretNameParts.contains(where: { name.contains($0) }) else { return parameter }
        return parameter[...equals] + "REDACTED"
    }

    /// `text` cut to ``maxLength`` bytes (fewer, to end on a character boundary), followed by
    /// `total`, the length of the URL it came from.
    private static func cut(_ text: String, total: Int) -> String {
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: maxLength)
        while end.samePosition(in: text.unicodeScalars) == nil { end = text.utf8.index(before: end) }
        return "\(text[..<end])… (\(total) bytes)"
    }
}
