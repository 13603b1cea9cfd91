import Foundation
import ImageKit
import ImageKitTestSupport
@testable import ImageKitRedis
import TestServers
import XCTest

/// Starts real redis-server processes (stopped in teardown, even when a test fails), builds
/// tiers and managers over them, and talks to a node directly for raw commands.
class RedisTestCase: XCTestCase {
    /// A redis-server on a free port (or `port`), stopped when the test ends.
    func startRedis(port: Int? = nil, arguments: [String] = []) throws -> RedisServer {
        let server = try RedisServer(port: port, arguments: arguments)
        addTeardownBlock { server.stop() }
        return server
    }

    /// A configuration for `servers` with short timeouts for tests.
    func configuration(_ servers: [RedisServer], namespace: String = "test:") -> RedisTierConfiguration {
        var configuration = RedisTierConfiguration(nodes: servers.map { RedisEndpoint(host: "127.0.0.1", port: $0.port) })
        configuration.namespace = namespace
        configuration.timeout = .milliseconds(200)
        configuration.connectTimeout = .milliseconds(200)
        return configuration
    }

    /// Sends one raw command to `server` (outside the tier's pools).
    func raw(_ server: RedisServer, _ arguments: [Data], password: String? = nil) throws -> RedisReply {
        var configuration = RedisTierConfiguration(nodes: [RedisEndpoint(host: "127.0.0.1", port: server.port)])
        configuration.password = password
        let connection = try RedisConnection(to: configuration.nodes[0], timeout: .seconds(2), configuration: configuration)
        return try connection.command(arguments, timeout: .seconds(2), maxBytes: 64 << 20)
    }

    /// `raw` with text arguments.
    func raw(_ server: RedisServer, _ words: String...) throws -> RedisReply {
        try raw(server, words.map { Data($0.utf8) })
    }

    /// A fresh temporary directory, removed when the test ends.
    func temporaryDirectory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// A manager with its own local memory + disk cache in front of `tier`, loading from
    /// 127.0.0.1 (the tests' nginx).
    func manager(over tier: RedisByteTier, name: String) throws -> ImageManager {
        let caches = ImageCachesManager(
            caches: [try ImageCache(namespace: name, directory: try temporaryDirectory("redis-local-\(name)"),
                                    disk: DiskCacheConfiguration(sweepInterval: nil)),
                     ByteTierImageCache(tier: tier)],
            storePolicy: .concurrent)
        var downloads = DownloaderConfiguration()
        downloads.destinationPolicy = DestinationPolicy(allowsLoopback: true)
        let manager = ImageManager(cache: caches, downloader: try Downloader(configuration: downloads))
        let shutdownManager = ManagerShutdown(manager)
        addTeardownBlock { await shutdownManager.run() }
        return manager
    }

    /// nginx serving `count` distinct JPEGs as /0.jpg, /1.jpg, …, stopped when the test ends.
    func origin(count: Int, size: Int = 64) throws -> NginxServer {
        var files: [String: [UInt8]] = [:]
        for i in 0..<count {
            let image = try Image(width: size, height: size,
                                  premultipliedRGBA: SyntheticPhoto.rgba(width: size, height: size, seed: UInt64(i + 1)))
            files["\(i).jpg"] = [UInt8](try ImageEncoder.encode(image, as: .jpeg()))
        }
        let server = try NginxServer(files: files)
        addTeardownBlock { server.stop() }
        return server
    }

    /// How many requests nginx answered for `path`.
    func requests(_ server: NginxServer, _ path: String) -> Int {
        server.accessLog().filter { $0.contains("GET \(path) ") }.count
    }

    /// INFO's total_connections_received (each raw command opens one).
    func connectionsReceived(_ server: RedisServer) throws -> Int {
        guard case .string(let info) = try raw(server, "INFO", "stats"),
              let line = String(decoding: info, as: UTF8.self).split(whereSeparator: \.isNewline)
                  .first(where: { $0.hasPrefix("total_connections_received:") }),
              let count = Int(line.split(separator: ":")[1])
        else { throw ServerError("INFO stats has no total_connections_received") }
        return count
    }
}
