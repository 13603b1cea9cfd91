import Hummingbird
import NIOCore

/// Hummingbird's basic request context plus the channel the request came on, by which a
/// handler finds its ``ClientConnection``.
struct ThumbnailRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    var coreContext: CoreRequestContextStorage
    /// The connection's channel.
    let channel: any Channel

    /// The context of a request that came on `source.channel`.
    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
