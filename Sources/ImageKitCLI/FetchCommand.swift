import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import ImageKit
import ImageKitRedis
import Synchronization

/// `imagekit fetch`: loads URLs through the image manager and reports where each came from.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load images by URL through the image manager (memory, disk cache, network).",
        discussion: """
            On a terminal shows a progress bar; otherwise prints one line per URL: the URL, \
            where the image came from (memory, disk or network), WxH and the load time in ms; or \
            the URL, "error" and the message. Then a summary: how many loaded, hits per tier, \
            bytes downloaded, wall time, and the p50/p99 load latency. Exits 1 if any load failed.

            With --shared-cache, Redis nodes are a shared tier behind the local cache (memory, \
            disk, Redis, network): what loads is written to both, and the hits line counts the \
            loads Redis served as "shared" (their lines say disk). A Redis node that is down or \
            slow costs a miss, never a failed load.

            Like the library, fetch connects to public addresses only: URLs of this machine, \
            private networks, link-local and cloud metadata addresses fail ("destination \
            127.0.0.1 is loopback, which the policy does not allow") unless allowed below.
            """)

    @Argument(help: "http or https URLs.")
    var urls: [String]

    @Option(help: "Shrink on load to fit a square box of this many pixels.")
    var size: Int?

    @Option(help: "Cache directory (default \(ImageCache.defaultDirectory.path)).")
    var cache: String?

    @Option(help: "Most loads in flight at once.")
    var concurrency = DownloaderConfiguration().maxConcurrentDownloads

    @Option(help: ArgumentHelp("Redis nodes shared by a fleet, behind the local cache.",
                               valueName: "redis://HOST:PORT[,redis://HOST:PORT...]"))
    var sharedCache: String?

    @Flag(help: "Revalidate cached images with the server (If-None-Match / If-Modified-Since).")
    var refresh = false

    @Flag(help: "Allow this machine's addresses (127.0.0.0/8, ::1, localhost).")
    var allowLoopback = false

    @Flag(help: "Allow private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7).")
    var allowPrivateNetworks = false

    func validate() throws {
        if let size, size <= 0 { throw ValidationError("--size must be positive") }
        if concurrency <= 0 { throw ValidationError("--concurrency must be positive") }
        if let sharedCache {
            do { _ = try Self.redisTier(sharedCache) } catch { throw ValidationError("--shared-cache: \(error)") }
        }
    }

    /// A Redis tier on the comma-separated `redis://` URLs of `list`.
    private static func redisTier(_ list: String) throws(ImageKitError) -> RedisByteTier {
        var nodes: [RedisEndpoint] = []
        for url in list.split(separator: ",") { nodes.append(try RedisEndpoint(url: String(url))) }
        return try RedisByteTier(configuration: RedisTierConfiguration(nodes: nodes))
    }

    func run() async throws {
        var downloads = DownloaderConfiguration()
        downloads.maxConcurrentDownloads = concurrency
        downloads.destinationPolicy = DestinationPolicy(allowsLoopback: allowLoopback,
                                                        allowsPrivateNetworks: allowPrivateNetworks)
        let bytes = DownloadedBytes()
        var settings = ImageManagerConfiguration()
        settings.observers = [bytes]
        let local = try ImageCache(namespace: "fetch", directory: cache.map { URL(fileURLWithPath: $0, isDirectory: true) })
        let shared = try sharedCache.map(Self.redisTier)
        let caches: any ImageCaching = shared.map {
            ImageCachesManager(caches: [local, ByteTierImageCache(tier: $0)], storePolicy: .concurrent)
        } ?? local
        let manager = ImageManager(cache: caches, downloader: try Downloader(configuration: downloads),
                                   configuration: settings)
        let context = ImageContext(thumbnailPixelSize: size.map { PixelSize(square: $0) })
        let options: ImageOptions = refresh ? [.refreshCached] : []
        let showsBar = isatty(STDOUT_FILENO) != 0
        let urls = self.urls
        let limit = min(concurrency, urls.count)
        let start = ContinuousClock.now
        // The loads run as child tasks; only this one touches the report.
        var report = Report(total: urls.count, showsBar: showsBar)
        await withTaskGroup(of: (String, Result<ImageResult, any Error>, Double).self) { group in
            var next = 0
            func add() {
                guard next < urls.count else { return }
                let text = urls[next]
                next += 1
                group.addTask {
                    let began = ContinuousClock.now
                    let result: Result<ImageResult, any Error>
                    do {
                        result = .success(try await manager.image(for: URL(string: text), options: options,
                                                                  context: context))
                    } catch {
                        result = .failure(error)
                    }
                    return (text, result, Output.milliseconds(ContinuousClock.now - began))
                }
            }
            for _ in 0..<limit { add() }
            while let (text, result, ms) = await group.next() {
                switch result {
                case .success(let image): report.loaded(text, image, ms: ms)
                case .failure(let error): report.failed(text, error, ms: ms)
                }
                add()
            }
        }
        let seconds = Output.milliseconds(ContinuousClock.now - start) / 1000
        let failed = report.summarize(seconds: seconds, downloadedBytes: bytes.total,
                                      sharedHits: shared?.statistics.hits)
        // The disk writes that follow each completion finish before the process exits.
        await manager.shutdown()
        if failed { throw ExitCode(1) }
    }
}

/// Sums the body bytes of the manager's downloads (coalesced loads count once).
private final class DownloadedBytes: ImageManagerObserver {
    private let bytes = Atomic<Int64>(0)

    var total: Int64 { bytes.load(ordering: .relaxed) }

    func receive(_ event: ImageManagerEvent) {
        if case .downloadFinished(_, _, let metrics) = event {
            bytes.wrappingAdd(metrics.bodyBytes, ordering: .relaxed)
        }
    }
}

/// What `fetch` prints: a line per URL or a progress bar, then the summary.
private struct Report: Sendable {
    let total: Int
    let showsBar: Bool
    var hits: [ImageSource: Int] = [:]
    var failures = 0
    var latencies: [Double] = []

    mutating func loaded(_ url: String, _ result: ImageResult, ms: Double) {
        hits[result.source, default: 0] += 1
        latencies.append(ms)
        let size = "\(result.image.width)x\(result.image.height)"
        show("\(url)\t\(Self.tier(result.source))\t\(size)\t\(Output.fixed(ms))")
    }

    mutating func failed(_ url: String, _ error: any Error, ms: Double) {
        failures += 1
        latencies.append(ms)
        show("\(url)\terror\t\(Output.oneLine("\(error)"))")
    }

    /// A line per URL, or on a terminal a redrawn progress bar.
    private func show(_ line: String) {
        guard showsBar else {
            print(line)
            return
        }
        let done = latencies.count
        let width = 30
        let filled = total > 0 ? done * width / total : width
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        print("\r[\(bar)] \(done)/\(total)", terminator: done == total ? "\n" : "")
        fflush(nil)  // every output stream: `stdout` is a C global Swift 6 will not read
    }

    /// Prints the summary; true when a load failed. `sharedHits`, with a shared tier: the loads it
    /// served (which report their source as disk).
    func summarize(seconds: Double, downloadedBytes: Int64, sharedHits: Int?) -> Bool {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
        }
        print("\(total - failures) of \(total) loaded, \(failures) failed in \(Output.fixed(seconds)) s")
        let disk = hits[.disk, default: 0]
        let tiers = sharedHits.map { "disk \(disk - $0), shared \($0)" } ?? "disk \(disk)"
        print("hits: memory \(hits[.memory, default: 0]), \(tiers), network \(hits[.loader, default: 0])")
        print("downloaded \(downloadedBytes) bytes")
        print("latency p50 \(Output.fixed(percentile(0.5))) ms, p99 \(Output.fixed(percentile(0.99))) ms")
        return failures > 0
    }

    private static func tier(_ source: ImageSource) -> String {
        switch source {
        case .memory: "memory"
        case .disk: "disk"
        case .loader: "network"
        }
    }
}
