/// thumbnail-server: an HTTP thumbnail service on ImageKit and Hummingbird.
///
/// `GET /thumb/{name...}?w=N[&format=jpeg|webp|png]` (and `HEAD`) loads `ORIGIN/name` through
/// one shared `ImageManager`, shrinks it to fit N×N pixels and answers the encoded bytes.
/// Without `format` the client's `Accept` header picks WebP or JPEG/PNG. Variants are cached as
/// bytes in memory and on disk (`X-Cache: memory|disk|miss` says where this one came from), and
/// answers carry an `ETag` for `If-None-Match`. SIGTERM or SIGINT stops it gracefully: the server
/// answers the requests in flight, then the manager drains (`ImageManagerService`); past
/// `--shutdown-timeout` what is left is cancelled.
///
/// Safe to expose. A failed load is answered with its status and a sentence chosen by the
/// error's code, never the error's message (which may name the origin or its hosts). A user
/// and password in `--origin` are sent as basic auth to the origin's host, and no URL ImageKit
/// sees (so none in its logs and messages, nor the startup line) carries them. A load whose
/// client leaves is cancelled (`ConnectionGuard`). Everything a client can grow has a bound:
/// `w` (`--max-width`, 400 past it), loads waiting for a turn (`--max-waiting-loads`, 503 past
/// it), connections (`--max-connections`, later ones wait in the listen backlog), idle
/// connections and slow request headers (`--idle-timeout`), clients that stop reading
/// (`--write-timeout`), and the copy of an answer each connection holds (large answers are
/// sent in 64 KiB slices of the cached bytes as the client reads them).
///
/// Observability, through ImageKitServer: ImageKit's logs go to the server's logger
/// (`--log-level debug` shows each load), its metrics to a Prometheus registry served at
/// `GET /metrics` on a port of its own (`--metrics-port`, off unless given; it binds
/// `--metrics-host`, 127.0.0.1 by default), and each request's span (Hummingbird's
/// `TracingMiddleware`) is the parent of its load's span — bootstrap `InstrumentationSystem`
/// with a tracer (swift-otel, for example) to export them; none is by default.
///
/// The origin is the operator's: its scheme, host and port are trusted even when it is on a
/// private network or this machine (the same host on another port is not the origin).
/// Everything else the server would connect to — where the origin redirects, which request
/// input can steer — stays under ImageKit's default destination policy: public addresses only,
/// never loopback, private networks, link-local or cloud metadata (403).
///
///     swift run -c release thumbnail-server --port 8080 --origin https://images.example.com \
///         --cache /tmp/thumbs --metrics-port 9090
///     curl -o cat.webp 'http://127.0.0.1:8080/thumb/photos/cat.jpg?w=256&format=webp'
///     curl http://127.0.0.1:9090/metrics
import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import ImageKit
import ImageKitServer
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle

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
    @Option(help: "Serve GET /metrics (Prometheus) on this port; off unless given.")
    var metricsPort: Int?
    @Option(help: "The address the metrics port listens on.") var metricsHost = "127.0.0.1"
    @Option(help: "The largest w answered (the output fits w×w pixels); larger is a 400.")
    var maxWidth = 2048
    @Option(help: "Loads that may download, decode and encode at once (default: ImageKit's, 6 + 2 × cores).")
    var maxActiveLoads: Int?
    @Option(help: "Loads that may wait for a turn; past it, 503.") var maxWaitingLoads = 64
    @Option(help: "Connections served at once; later ones wait in the listen backlog.")
    var maxConnections = 512
    @Option(help: "Seconds a connection may stay idle, or take to send a request's headers, before it is closed.")
    var idleTimeout = 30
    @Option(help: "Seconds a client may leave an answer unread before its connection is closed.")
    var writeTimeout = 30
    @Option(help: "Seconds a graceful shutdown may take before the work left is cancelled.")
    var shutdownTimeout = 10

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel)") }
        guard originURL != nil else { throw ValidationError("--origin must be an http or https URL with a host") }
        for (name, value) in [("--max-width", maxWidth), ("--max-active-loads", maxActiveLoads ?? 1),
                              ("--max-connections", maxConnections), ("--idle-timeout", idleTimeout),
                              ("--write-timeout", writeTimeout), ("--shutdown-timeout", shutdownTimeout)] {
            guard value > 0 else { throw ValidationError("\(name) must be at least 1") }
        }
        guard maxWaitingLoads >= 0 else { throw ValidationError("--max-waiting-loads must be at least 0") }
    }

    /// `origin` parsed, when it is an http or https URL with a host.
    private var originURL: URLComponents? {
        guard let url = URLComponents(string: origin), ["http", "https"].contains(url.scheme?.lowercased()),
              let host = url.host, !host.isEmpty else { return nil }
        return url
    }

    func run() async throws {
        guard let originURL, let originHost = originURL.host else {
            throw ValidationError("--origin must be an http or https URL with a host")
        }
        var logger = Logger(label: "thumbnail-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        // The configured origin (its scheme, host and port) is trusted wherever it is; any other
        // destination must be public.
        var downloads = DownloaderConfiguration()
        let host = originHost.contains(":") ? "[\(originHost)]" : originHost  // an IPv6 address
        let trusted = "\(originURL.scheme ?? "http")://\(host)" + (originURL.port.map { ":\($0)" } ?? "")
        downloads.destinationPolicy = DestinationPolicy(allowList: [trusted])
        // Credentials in --origin become the downloader's basic auth (sent to the request's host
        // only), so no URL ImageKit sees, logs or puts in a message carries them.
        if originURL.user != nil || originURL.password != nil {
            downloads.credentials = .init(username: originURL.user ?? "", password: originURL.password ?? "")
        }
        let base = Self.withoutCredentials(originURL)
        var configuration = ImageManagerConfiguration()
        if let maxActiveLoads { configuration.maxActivePipelines = maxActiveLoads }
        configuration.maxWaitingPipelines = maxWaitingLoads
        // ImageKit's logs, metrics and spans (the two-line bootstrap), its gauges, and a service
        // that drains the manager once the server has stopped.
        let observability = ImageKitObservability(logger: logger)
        let manager = try ImageManager(
            cache: try ImageCache(namespace: "thumbnails", directory: URL(fileURLWithPath: cache)),
            observability: observability, configuration: configuration, downloaderConfiguration: downloads)
        let statistics = ImageManagerStatisticsReporter(manager: manager)

        let connections = ClientConnections()
        let route = ThumbnailRoute(origin: base.hasSuffix("/") ? String(base.dropLast()) : base,
                                   manager: manager, maxWidth: maxWidth, connections: connections)
        let router = Router(context: ThumbnailRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.middlewares.add(TracingMiddleware())
        router.get("thumb/**") { request, context in
            await route.respond(request, name: context.parameters.getCatchAll().joined(separator: "/"), context: context)
        }
        let writeTimeout = TimeAmount.seconds(Int64(self.writeTimeout))
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionGuard(connections: connections, writeTimeout: writeTimeout)],
            idleTimeout: .seconds(Int64(idleTimeout)))
        // The app's own ServiceGroup shuts its services down in reverse order: the HTTP server
        // first (it answers the requests in flight), then the manager (it drains, waits for the
        // disk writes and joins its threads).
        let app = Application(
            router: router, server: .http1(configuration: http),
            configuration: .init(address: .hostname(host, port: port),
                                 availableConnectionsDelegate: MaximumAvailableConnections(maxConnections)),
            services: [ImageManagerService(manager: manager, statistics: statistics, logger: logger)],
            logger: logger)
        var services: [any Service] = [app]
        if let metricsPort {
            services.append(metricsApplication(registry: registry, statistics: statistics,
                                               address: .hostname(metricsHost, port: metricsPort), logger: logger))
        }

        let metrics = metricsPort.map { ", metrics on http://\(metricsHost):\($0)/metrics" } ?? ""
        logger.info("listening on http://\(host):\(port), origin \(base), cache \(cache)\(metrics)")
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint],
                                              logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(shutdownTimeout)
        try await ServiceGroup(configuration: group).run()
    }

    /// `url` as text without its user and password.
    static func withoutCredentials(_ url: URLComponents) -> String {
        var url = url
        url.user = nil
        url.password = nil
        return url.string ?? "(origin)"
    }
}

/// The metrics server: `GET /metrics` in Prometheus's text format, on an address of its own so
/// that the public port does not show the service's internals.
func metricsApplication(registry: PrometheusCollectorRegistry, statistics: ImageManagerStatisticsReporter,
                        address: BindAddress, logger: Logger) -> some Service {
    let router = Router()
    router.get("metrics") { _, _ in
        await statistics.report()  // the gauges as they are now
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
    return Application(router: router, configuration: .init(address: address, serverName: nil), logger: logger)
}
