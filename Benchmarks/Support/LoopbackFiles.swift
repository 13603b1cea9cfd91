import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import ImageKit
import Synchronization
import TestServers
import XCTest

/// Base of the download benchmarks: nginx serving ``LoopbackFiles``, started on first
/// use and stopped after the class.
class LoopbackFilesBenchmark: BenchmarkCase {
    static let servers = SharedServer(start: { try LoopbackFiles.start() }, stop: { $0.stop() })

    override class func tearDown() {
        servers.stop()
        super.tearDown()
    }

    /// The URLs of the 500 files.
    var urls: [URL] { get throws { LoopbackFiles.urls(try Self.servers.get()) } }
}

/// The download benchmark's workload (500 files of 100 KB served by nginx on
/// 127.0.0.1) and its measurements. Shared with the AsyncHTTPClient comparison in
/// Benchmarks/Peers, so both runs fetch and report alike.
enum LoopbackFiles {
    static let count = 500
    static let size = 100 * 1024

    /// nginx serving `f/0.bin` … `f/499.bin`.
    static func start() throws -> NginxServer {
        var rng: UInt64 = 0x5EED
        let block = (0..<size).map { _ -> UInt8 in
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: rng >> 33)
        }
        var files: [String: [UInt8]] = [:]
        for i in 0..<count { files["f/\(i).bin"] = block }
        return try NginxServer(files: files)
    }

    /// The URLs of the 500 files.
    static func urls(_ nginx: NginxServer) -> [URL] {
        (0..<count).map { nginx.url("/f/\($0).bin") }
    }

    /// URLSession with at most `inFlight` connections to the host and no cache.
    static func urlSession(inFlight: Int) -> URLSession {
        let config = URLSessionConfiguration.ephemeral
        config.httpMaximumConnectionsPerHost = inFlight
        config.urlCache = nil
        return URLSession(configuration: config)
    }

    /// Starts every download at once and waits for all; throws if one failed or came short.
    static func fetchAll(_ downloader: Downloader, _ urls: [URL]) throws {
        let group = DispatchGroup()
        let failures = Mutex<[String]>([])
        for url in urls {
            group.enter()
            downloader.startDownload(DownloadRequest(url: url)) { result in
                if case .failure(let e) = result { failures.withLock { $0.append("\(url): \(e)") } }
                if case .success(let r) = result, r.data.count != size {
                    failures.withLock { $0.append("\(url): \(r.data.count) bytes") }
                }
                group.leave()
            }
        }
        group.wait()
        try check(failures)
    }

    /// The same with URLSession data tasks.
    static func fetchAll(_ session: URLSession, _ urls: [URL]) throws {
        let group = DispatchGroup()
        let failures = Mutex<[String]>([])
        for url in urls {
            group.enter()
            session.dataTask(with: url) { data, _, error in
                if let error { failures.withLock { $0.append("\(url): \(error)") } }
                if error == nil, data?.count != size {
                    failures.withLock { $0.append("\(url): \(data?.count ?? -1) bytes") }
                }
                group.leave()
            }.resume()
        }
        group.wait()
        try check(failures)
    }

    private static func check(_ failures: borrowing Mutex<[String]>) throws {
        let list = failures.withLock { $0 }
        if !list.isEmpty { throw ServerError("\(list.count) downloads failed, first: \(list[0])") }
    }

    /// Process CPU time (user + system, every thread) that `body` takes, in ms.
    static func cpuMs(_ body: () throws -> Void) rethrows -> Double {
        func now() -> Double {
            var u = rusage()
            getrusage(RUSAGE_SELF.rawValue, &u)
            return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000
                + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000
        }
        let start = now()
        try body()
        return now() - start
    }

    /// Times a downloader with `inFlight` downloads at once against `peer`'s fetch of
    /// every URL (`peerFetch`), interleaved inside `measure` after one untimed round
    /// each (which opens the connections), and records the figures.
    static func compare(_ test: XCTestCase, urls: [URL], inFlight: Int, peer: String,
                        filesPerSecondTarget: Double?, cpuTarget: Double?,
                        peerFetch: ([URL]) throws -> Void) throws {
        var config = DownloaderConfiguration()
        config.maxConcurrentDownloads = inFlight
        config.destinationPolicy = DestinationPolicy(allowsLoopback: true)  // the peer's servers are on 127.0.0.1
        let downloader = try Downloader(configuration: config)
        try fetchAll(downloader, urls)
        try peerFetch(urls)
        var oursCPU: [Double] = [], peerCPU: [Double] = []
        let (ours, theirs) = try withoutActuallyEscaping(peerFetch) { peerFetch in
            try BenchRecorder.time(test, ours: {
                oursCPU.append(try cpuMs { try fetchAll(downloader, urls) })
            }, anchor: {
                peerCPU.append(try cpuMs { try peerFetch(urls) })
            })
        }
        record(inFlight: inFlight, peer: peer, filesPerSecondTarget: filesPerSecondTarget, cpuTarget: cpuTarget,
               oursMs: ours, oursCPU: oursCPU, peerMs: theirs, peerCPU: peerCPU)
    }

    /// Records files/s and CPU per file, ours against `peer`, with the targets
    /// (ours/peer files/s ≥ `filesPerSecondTarget`; ours/peer CPU per file ≤ `cpuTarget`).
    private static func record(inFlight: Int, peer: String, filesPerSecondTarget: Double?, cpuTarget: Double?,
                       oursMs: [Double], oursCPU: [Double], peerMs: [Double], peerCPU: [Double]) {
        let n = Double(count)
        let om = BenchRecorder.median(oursMs), pm = BenchRecorder.median(peerMs)
        let oursRate = n * 1000 / om, peerRate = n * 1000 / pm
        let oc = BenchRecorder.median(oursCPU) / n, pc = BenchRecorder.median(peerCPU) / n
        let name = "\(count) × 100 KB from nginx, \(inFlight) in flight"
        BenchRecorder.record(BenchResult(
            section: "download", name: "\(name): files/s vs \(peer)", medianMs: om, minMs: oursMs.min() ?? 0,
            files: n, anchor: peer, anchorMedianMs: pm, ratio: oursRate / peerRate, target: filesPerSecondTarget,
            targetRelation: filesPerSecondTarget == nil ? nil : ">=",
            notes: ["files/s": oursRate, "\(peer) files/s": peerRate]))
        BenchRecorder.record(BenchResult(
            section: "download", name: "\(name): CPU ms per file vs \(peer)", medianMs: oc,
            minMs: (oursCPU.min() ?? 0) / n, files: 1, anchor: peer, anchorMedianMs: pc, ratio: oc / pc,
            target: cpuTarget, targetRelation: cpuTarget == nil ? nil : "<=",
            notes: ["CPU ms/file": oc, "\(peer) CPU ms/file": pc]))
    }
}
