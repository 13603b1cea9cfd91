/// thumbnail-server: an HTTP thumbnail service on ImageKit and Hummingbird.
///
/// `GET /thumb/{name...}?w=N[&format=jpeg|webp|png]` loads `ORIGIN/name` through one shared
/// `ImageManager`, shrinks it to fit N×N pixels and answers the encoded bytes. Without `format`
/// the client's `Accept` header picks WebP or JPEG/PNG. Variants are cached as bytes in memory
/// and on disk (`X-Cache: memory|disk|miss` says where this one came from), and answers carry
/// an `ETag` for `If-None-Match`. SIGTERM or SIGINT stops it gracefully: the server answers the
/// requests in flight, then the manager drains (`ImageManagerService`).
///
/// Observability, through ImageKitServer: ImageKit's logs go to the server's logger
/// (`--log-level debug` shows each load), its metrics to a Prometheus registry served at
/// `GET /metrics`, and each request's span (Hummingbird's `TracingMiddleware`) is the parent of
/// its load's span — bootstrap `InstrumentationSystem` with a tracer (swift-otel, for example)
/// to export them; none is by default.
///
/// The origin is the operator's: its host is trusted even when it is on a private network or
/// this machine. Everything else the server would connect to — where the origin redirects,
/// which request input can steer — stays under ImageKit's default destination policy: public
/// addresses only, never loopback, private networks, link-local or cloud metadata (403).
///
///     swift run -c release thumbnail-server --port 8080 --origin https://images.example.com --cache /tmp/thumbs
///     curl -o cat.webp 'http://127.0.0.1:8080/thumb/photos/cat.jpg?w=256&format=webp'
///     curl http://127.0.0.1:8080/metrics
import ArgumentParser
import Foundation
import HTTPTypes
import Hummingbird
import ImageKit
import ImageKitServer
import Logging
import Metrics
import Prometheus

@main
struct ThumbnailServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail-server", abstract: "Serves thumbnails of the images at an origin URL.")

    @Option(help: "The port to listen on.") var port: Int
    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The base URL the image names are relative to.") var origin: String
    @Option(help: "The folder for the disk cache.") var cache: String
    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel)") }
        guard originHost != nil else { throw ValidationError("--origin must be an http or https URL with a host") }
    }

    /// The host of `origin`, when it is an http or https URL with one.
    private var originHost: String? {
        guard let url = URL(string: origin), ["http", "https"].contains(url.scheme?.lowercased()),
              let host = url.host, !host.isEmpty else { return nil }
        return host
    }

    func run() async throws {
        guard let originHost else { throw ValidationError("--origin must be an http or https URL with a host") }
        var logger = Logger(label: "thumbnail-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        // The configured origin is trusted wherever it is; any other destination must be public.
        var downloads = DownloaderConfiguration()
        downloads.destinationPolicy = DestinationPolicy(allowList: [originHost])
        // ImageKit's logs, metrics and spans (the two-line bootstrap), its gauges, and a service
        // that drains the manager once the server has stopped.
        let observability = ImageKitObservability(logger: logger)
        let manager = try ImageManager(
            cache: try ImageCache(namespace: "thumbnails", directory: URL(fileURLWithPath: cache)),
            observability: observability, downloaderConfiguration: downloads)
        let statistics = ImageManagerStatisticsReporter(manager: manager)
        let origin = self.origin.hasSuffix("/") ? String(self.origin.dropLast()) : self.origin

        let router = Router()
        router.middlewares.add(TracingMiddleware())
        router.get("thumb/**") { request, context in
            await thumbnail(request, name: context.parameters.getCatchAll().joined(separator: "/"),
                            origin: origin, manager: manager)
        }
        router.get("metrics") { _, _ in
            await statistics.report()  // the gauges as they are now
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        // A ServiceGroup shuts its services down in reverse order: the HTTP server first (it
        // answers the requests in flight), then the manager (it drains, waits for the disk
        // writes and joins its threads).
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)),
                              services: [ImageManagerService(manager: manager, statistics: statistics, logger: logger)],
                              logger: logger)
        app.logger.info("listening on http://\(host):\(port), origin \(origin), cache \(cache)")
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}

/// Answers one thumbnail request.
func thumbnail(_ request: Request, name: String, origin: String, manager: ImageManager) async -> Response {
    guard !name.isEmpty, !climbsOut(name) else {
        return text(.badRequest, "bad image name")
    }
    let query = request.uri.queryParameters  // parsed on each access: once
    guard let w = query.get("w", as: Int.self), (1...4096).contains(w) else {
        return text(.badRequest, "w must be a width from 1 to 4096")
    }
    let format: OutputFormat
    switch query.get("format") {
    case nil: format = .negotiate(accept: request.headers[.accept], quality: 80)
    case "jpeg": format = .fixed(.jpeg(quality: 80))
    case "webp": format = .fixed(.webp(quality: 80))
    case "png": format = .fixed(.png())
    default: return text(.badRequest, "format must be jpeg, webp or png")
    }
    guard let url = URL(string: "\(origin)/\(name)") else { return text(.badRequest, "bad image name") }

    let result: EncodedImageResult
    do {
        result = try await manager.encodedImage(
            for: url, as: format, context: ImageContext(thumbnailPixelSize: PixelSize(square: w)))
    } catch {
        // `error` is an ImageKitError (the manager's calls throw nothing else). The origin's 404
        // becomes ours, a corrupt image 422, a timeout 504 and so on. For 499 (the load was
        // cancelled because the client went away) nobody reads the answer.
        return text(HTTPResponse.Status(code: error.suggestedHTTPStatus), error.message)
    }

    let image = result.encoded
    var headers: HTTPFields = [
        .eTag: image.entityTag,
        .cacheControl: "public, max-age=31536000, immutable",
        .xCache: result.source.isCached ? result.source.description : "miss",  // memory, disk or miss
    ]
    if format.variesWithAccept { headers[.vary] = "Accept" }
    if request.headers[.ifNoneMatch] == image.entityTag {
        return Response(status: .notModified, headers: headers)
    }
    headers[.contentType] = image.contentType
    // ImageKit's cached bytes are shared, never copied; this is the one copy, into NIO's buffer.
    return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.data)))
}

/// Whether `name` has a `..` segment, spelt plainly or percent-encoded (`%2e`): it must not
/// climb out of the origin's folder. (A byte scan: the hot path avoids Foundation's decoding.)
func climbsOut(_ name: String) -> Bool {
    var dots = 0, bytes = Array(name.utf8)[...]
    while let byte = bytes.popFirst() {
        if byte == UInt8(ascii: ".") {
            dots += 1
        } else if byte == UInt8(ascii: "%"), bytes.count >= 2, bytes.first == UInt8(ascii: "2"),
                  bytes.dropFirst().first.map({ $0 | 0x20 }) == UInt8(ascii: "e") {
            dots += 1
            bytes = bytes.dropFirst(2)
        } else {
            dots = 0
        }
        if dots == 2 { return true }
    }
    return false
}

extension HTTPField.Name {
    /// Where the answer came from: `memory`, `disk` or `none` (downloaded).
    static let xCache = HTTPField.Name("X-Cache")!
}

/// A short plain-text answer.
func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
    Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"],
             body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
}
