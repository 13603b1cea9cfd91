/// A TLS client certificate for servers that ask for one (mutual TLS), in PEM files:
/// SDWebImage's `urlCredential` for services.
///
/// Set it for a whole downloader in ``DownloaderConfiguration/tls`` or for one request in
/// ``DownloadRequest/tls``. A connection authenticated with one certificate is never
/// reused for a request with another certificate file or with none.
public struct ClientCertificate: Sendable, Hashable {
    /// The PEM file holding the certificate (and its private key, when ``keyFile`` is nil).
    public var certificateFile: String
    /// The PEM file holding the private key, or nil when ``certificateFile`` holds it.
    public var keyFile: String?
    /// The password of an encrypted private key, or nil.
    public var keyPassword: String?

    /// A client certificate from PEM files.
    public init(certificateFile: String, keyFile: String? = nil, keyPassword: String? = nil) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.keyPassword = keyPassword
    }
}
