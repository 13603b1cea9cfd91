import AsyncHTTPClient
import CVips
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// peer-thumbnail-server: the HTTP thumbnail service of Examples/ThumbnailServer built
/// the way a user would without ImageKit — Hummingbird, one shared AsyncHTTPClient,
/// libvips called straight from the handler, encoded thumbnails kept in a locked
/// dictionary. The peer in `make bench-service` (scripts/bench_service.py).
///
///     peer-thumbnail-server --port P --origin URL [--cache DIR]
///     GET /thumb/NAME?w=N[&format=jpeg|webp|png]     (NAME: a path under URL)
///
/// The thumbnail fits in N x N px. Without `format`: WebP when the Accept header
/// allows it, else JPEG (quality 80). `--cache` is accepted for the same command line
/// as ImageKit's server; this one keeps its results in memory only.
@main
struct PeerThumbnailServer {
    static func main() async throws {
        let options = Options(CommandLine.arguments)
        guard ik_vips_start() == 0 else {
            FileHandle.standardError.write(Data("peer-thumbnail-server: libvips did not start\n".utf8))
            exit(1)
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let service = ThumbnailService(client: client, origin: options.origin)
        let router = Router()
        router.get("thumb/**") { request, context in
            try await service.respond(to: request, name: context.parameters.getCatchAll().joined(separator: "/"))
        }
        let app = Application(router: router,
                              configuration: .init(address: .hostname("127.0.0.1", port: options.port),
                                                   serverName: "peer-thumbnail-server"))
        // Serves until SIGTERM or SIGINT, then finishes the requests in flight and returns.
        do {
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            FileHandle.standardError.write(Data("peer-thumbnail-server: \(error)\n".utf8))
        }
        try await client.shutdown()
    }
}

/// The command line.
struct Options {
    var port = 8080
    var origin = ""

    /// Parses `--port P --origin URL [--cache DIR]`; prints the usage and exits on a mistake.
    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { Self.usage("\(flag) needs a value") }
            switch flag {
            case "--port":
                guard let port = Int(value), (1...65535).contains(port) else { Self.usage("bad port \(value)") }
                self.port = port
            case "--origin":
                origin = value.hasSuffix("/") ? String(value.dropLast()) : value
            case "--cache":
                break
            default:
                Self.usage("unknown option \(flag)")
            }
        }
        if origin.isEmpty { Self.usage("--origin is required") }
    }

    static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("""
            peer-thumbnail-server: \(problem)
            usage: peer-thumbnail-server --port P --origin URL [--cache DIR]

            """.utf8))
        exit(2)
    }
}

/// An output format: its libvips saver (see CVips/shim.h) and Content-Type.
enum ThumbnailFormat: String {
    case jpeg, webp, png

    var vipsFormat: Int32 {
        switch self {
        case .jpeg: Int32(IK_VIPS_JPEG)
        case .webp: Int32(IK_VIPS_WEBP)
        case .png: Int32(IK_VIPS_PNG)
        }
    }

    var contentType: String { "image/\(rawValue)" }
}

/// The key of an encoded thumbnail in the cache.
struct ThumbnailKey: Hashable {
    var name: String
    var width: Int
    var format: ThumbnailFormat
}

/// `GET /thumb/NAME`: the thumbnail from the cache, or downloaded, made and cached.
final class ThumbnailService: Sendable {
    let client: HTTPClient
    let origin: String
    /// Encoded thumbnails made so far (unbounded: the benchmark's working set is small).
    let cache = Mutex<[ThumbnailKey: ByteBuffer]>([:])

    init(client: HTTPClient, origin: String) {
        self.client = client
        self.origin = origin
    }

    private static let xCache = HTTPField.Name("X-Cache")!

    func respond(to request: Request, name: String) async throws -> Response {
        // NAME is a raw path under the origin's; it must not climb out of it.
        guard !name.isEmpty, !(name.removingPercentEncoding ?? "..").contains("..") else {
            throw HTTPError(.badRequest, message: "bad image name")
        }
        let query = request.uri.queryParameters
        guard let width = query.get("w", as: Int.self), (1...4096).contains(width) else {
            throw HTTPError(.badRequest, message: "w must be a width in pixels, 1 to 4096")
        }
        let format: ThumbnailFormat
        if let requested = query.get("format") {
            guard let known = ThumbnailFormat(rawValue: requested) else {
                throw HTTPError(.badRequest, message: "format must be jpeg, webp or png")
            }
            format = known
        } else {
            format = request.headers[.accept]?.contains("image/webp") == true ? .webp : .jpeg
        }
        let negotiated = query.get("format") == nil
        let key = ThumbnailKey(name: name, width: width, format: format)
        if let hit = cache.withLock({ $0[key] }) {
            return Self.response(hit, format: format, negotiated: negotiated, cached: true)
        }
        let original = try await download("\(origin)/\(name)")
        guard let thumbnail = Self.thumbnail(original, width: width, format: format) else {
            throw HTTPError(.unprocessableContent, message: "not an image libvips can read")
        }
        cache.withLock { $0[key] = thumbnail }
        return Self.response(thumbnail, format: format, negotiated: negotiated, cached: false)
    }

    /// The body at `url`; 404 when the origin has no such file, 502 when it fails otherwise.
    private func download(_ url: String) async throws -> ByteBuffer {
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            if response.status == .notFound { throw HTTPError(.notFound) }
            guard response.status == .ok else {
                throw HTTPError(.badGateway, message: "origin answered \(response.status.code)")
            }
            return try await response.body.collect(upTo: 256 << 20)
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError(.badGateway, message: "origin request failed: \(error)")
        }
    }

    /// `image` thumbnailed to fit `width` x `width` px and encoded; nil when libvips cannot.
    private static func thumbnail(_ image: ByteBuffer, width: Int, format: ThumbnailFormat) -> ByteBuffer? {
        image.withUnsafeReadableBytes { bytes -> ByteBuffer? in
            var length = 0
            guard let encoded = ik_vips_thumbnail_encode(bytes.baseAddress, bytes.count, Int32(width),
                                                          format.vipsFormat, &length) else { return nil }
            defer { g_free(encoded) }
            return ByteBuffer(bytes: UnsafeRawBufferPointer(start: encoded, count: length))
        }
    }

    private static func response(_ body: ByteBuffer, format: ThumbnailFormat, negotiated: Bool,
                                 cached: Bool) -> Response {
        var headers: HTTPFields = [
            .contentType: format.contentType,
            .cacheControl: "public, max-age=31536000",
            xCache: cached ? "memory" : "none",
        ]
        if negotiated { headers[.vary] = "Accept" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}
