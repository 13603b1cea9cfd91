import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import Synchronization
import TestServers
import XCTest

/// The download benchmark (500 × 100 KB from nginx on 127.0.0.1, 6 and 32 in
/// flight) against AsyncHTTPClient, interleaved in the same process. Targets from
/// the issue: files/s at least AsyncHTTPClient's, CPU per file at most 0.6 × its.
final class AsyncHTTPClientBenchmarks: LoopbackFilesBenchmark {
    func testDownload500Files6InFlight() throws { try compare(inFlight: 6) }

    func testDownload500Files32InFlight() throws { try compare(inFlight: 32) }

    private func compare(inFlight: Int) throws {
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(connectionPool: .init(idleTimeout: .seconds(60),
                                                       concurrentHTTP1ConnectionsPerHostSoftLimit: inFlight)))
        defer { try? client.syncShutdown() }
        try LoopbackFiles.compare(self, urls: urls, inFlight: inFlight,
                                  peer: "AsyncHTTPClient", filesPerSecondTarget: 1, cpuTarget: 0.6) {
            try Self.fetchAll(client, $0)
        }
    }

    /// Starts every request at once and waits for all; throws if one failed or came short.
    private static func fetchAll(_ client: HTTPClient, _ urls: [URL]) throws {
        let group = DispatchGroup()
        let failures = Mutex<[String]>([])
        for url in urls {
            group.enter()
            client.get(url: url.absoluteString).whenComplete { result in
                switch result {
                case .success(let response):
                    let count = response.body?.readableBytes ?? 0
                    if response.status != .ok || count != LoopbackFiles.size {
                        failures.withLock { $0.append("\(url): \(response.status) \(count) bytes") }
                    }
                case .failure(let error):
                    failures.withLock { $0.append("\(url): \(error)") }
                }
                group.leave()
            }
        }
        group.wait()
        let list = failures.withLock { $0 }
        if !list.isEmpty { throw ServerError("\(list.count) requests failed, first: \(list[0])") }
    }
}
