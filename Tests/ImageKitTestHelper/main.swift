// ImageKitTestHelper — a child process for the cache tests, not part of any
// library product.
//
//   alloc-probe        prints how many heap allocations 100 000 memory-cache
//                      hits (and 10 000 misses, 100 000 hits of an ImageCache's
//                      memory tier through ImageCaching, and a control that
//                      allocates 10 arrays) made on the calling thread
//   write-loop DIR N   opens a DiskCache in DIR, prints "ready", then writes
//                      entries forever (the test SIGKILLs it at random moments)
//   verify DIR         reads every entry write-loop may have written and prints
//                      "ok <n> missing <n> corrupt <n> wrong <n>"
//   cold-loads URL N W DIR
//                      N thumbnail loads of URL?load=0 … URL?load=N-1 (N cache keys)
//                      through one manager (one decode thread, W loads in flight,
//                      nothing stored), prints "warm-hwm <KiB> end-hwm <KiB> peak-bodies <n>"
//   stream-load URL STREAMS DIR
//                      one cold 256 px thumbnail load of URL (no originals) with
//                      streamsDecoding STREAMS (0 or 1), after a warm-up (the URL streamed
//                      through the downloader, a small decode). Run it with
//                      GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 so every large
//                      buffer is mapped fresh (not hidden in pages an earlier free left
//                      resident). Prints "load-hwm-kib <growth of VmHWM over the RSS before
//                      the load>"
import CAllocCounter
import CImageCore
import Foundation
import ImageKit

/// The keys write-loop cycles through.
let keyCount = 24

/// The picture write-loop stores for (key, version): its size and pixels follow from both,
/// sizes span one to two LZ4 chunks.
func pattern(key: Int, version: Int) -> (width: Int, height: Int, pixels: [UInt8]) {
    let width = 48 + (key * 37 + version * 13) % 420
    let height = 40 + (key * 53 + version * 7) % 300
    var pixels = [UInt8](repeating: 255, count: width * height * 4)
    for y in 0..<height {
        for x in 0..<width {
            let i = (y * width + x) * 4
            pixels[i] = UInt8(truncatingIfNeeded: x * 3 + y + key * 11 + version)
            pixels[i + 1] = UInt8(truncatingIfNeeded: (x ^ y) &+ version * 5)
            pixels[i + 2] = UInt8(truncatingIfNeeded: y * 5 + key + (x * y) >> 6)
        }
    }
    return (width, height, pixels)
}

func allocProbe() {
    let cache = MemoryCache(configuration: MemoryCacheConfiguration(costLimit: 1 << 30, ttl: .seconds(3600)))
    let keys = (0..<64).map { "https://images.example.com/photos/\($0).jpg?w=256" }
    // The pixels are valid by construction.
    let image = try! Image(width: 8, height: 8, premultipliedRGBA: [UInt8](repeating: 255, count: 256))
    for key in keys { cache.set(image, forKey: key) }
    for key in keys { _ = cache.image(forKey: key) }
    var hits = 0
    let start = alloc_counter_thread_count()
    for i in 0..<100_000 where cache.image(forKey: keys[i & 63]) != nil { hits += 1 }
    let hitAllocations = alloc_counter_thread_count() - start
    let missStart = alloc_counter_thread_count()
    for _ in 0..<10_000 where cache.image(forKey: "https://images.example.com/missing.jpg") != nil { hits += 1 }
    let missAllocations = alloc_counter_thread_count() - missStart
    // The manager's path: an ImageCache's memory tier through the ImageCaching protocol.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-alloc-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    // The folder is in the temporary directory, which exists.
    let imageCache = try! ImageCache(namespace: "probe", directory: directory,
                                     memory: MemoryCacheConfiguration(costLimit: 1 << 30, ttl: .seconds(3600)),
                                     disk: DiskCacheConfiguration(sweepInterval: nil))
    let caching: any ImageCaching = imageCache
    for key in keys { imageCache.memoryCache.set(image, forKey: key) }
    for key in keys { _ = caching.memoryValue(forKey: key, kind: .image) }
    var cachingHits = 0
    let cachingStart = alloc_counter_thread_count()
    for i in 0..<100_000 {
        if case .image? = caching.memoryValue(forKey: keys[i & 63], kind: .image) { cachingHits += 1 }
    }
    let cachingAllocations = alloc_counter_thread_count() - cachingStart
    // A control that must allocate, proving the counter counts.
    let controlStart = alloc_counter_thread_count()
    var bytes = 0
    for i in 0..<10 { bytes += [UInt8](repeating: UInt8(i), count: 100 + i).count }
    let controlAllocations = alloc_counter_thread_count() - controlStart
    print("available \(alloc_counter_available()) hits \(hits) allocations \(hitAllocations) miss-allocations \(missAllocations) "
          + "control-allocations \(controlAllocations) control-bytes \(bytes) "
          + "caching-hits \(cachingHits) caching-allocations \(cachingAllocations)")
}

func writeLoop(directory: String, seed: Int) async throws {
    let cache = try DiskCache(directory: URL(fileURLWithPath: directory),
                              configuration: DiskCacheConfiguration(sweepInterval: nil))
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    var version = seed * 100_000
    while true {
        let key = version % keyCount
        let p = pattern(key: key, version: version)
        let image = try Image(width: p.width, height: p.height, premultipliedRGBA: p.pixels)
        try await cache.store(image, forKey: "entry-\(key)", metadata: DiskCacheMetadata(userData: Data("\(version)".utf8)))
        version += 1
    }
}

func verify(directory: String) {
    var ok = 0, missing = 0, corrupt = 0, wrong = 0
    for key in 0..<keyCount {
        var record = ic_store_record()
        var err = ic_error()
        let st = "entry-\(key)".withCString { ic_store_read(directory, IC_STORE_KIND_BITMAP, $0, strlen($0), nil, &record, &err) }
        defer { ic_store_record_free(&record) }
        switch st {
        case IC_OK:
            let text = String(decoding: UnsafeRawBufferPointer(start: record.meta.user_data, count: record.meta.user_data_length),
                              as: UTF8.self)
            guard let version = Int(text), let img = record.image else {
                wrong += 1
                continue
            }
            let p = pattern(key: key, version: version)
            var same = Int(img.pointee.width) == p.width && Int(img.pointee.height) == p.height
            for y in 0..<p.height where same {
                same = p.pixels.withUnsafeBytes { memcmp(img.pointee.pixels + y * img.pointee.stride, $0.baseAddress! + y * p.width * 4, p.width * 4) } == 0
            }
            if same { ok += 1 } else { wrong += 1 }
        case IC_ERR_NOT_FOUND:
            missing += 1
        case IC_ERR_CORRUPT:
            corrupt += 1
        default:
            wrong += 1
        }
    }
    print("ok \(ok) missing \(missing) corrupt \(corrupt) wrong \(wrong)")
}

/// The process's peak resident set (VmHWM), in KiB.
func peakResidentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
}

/// `count` cold loads with `window` in flight; the peak RSS after the first 2 × `window`
/// (the process has warmed up: threads, pools, arenas) and at the end.
func coldLoads(base: String, count: Int, window: Int, directory: String) async throws {
    var configuration = ImageManagerConfiguration()
    configuration.decodeThreads = 1
    var loopbackDownloads = DownloaderConfiguration()
    loopbackDownloads.destinationPolicy = DestinationPolicy(allowsLoopback: true)  // the server is on 127.0.0.1
    let downloader = try Downloader(configuration: loopbackDownloads)
    let manager = ImageManager(
        cache: try ImageCache(namespace: "cold-loads", directory: URL(fileURLWithPath: directory)),
        downloader: downloader, configuration: configuration)
    let context = ImageContext(thumbnailPixelSize: PixelSize(square: 64), storeCacheType: [],
                               originalStoreCacheType: [])
    var warmHWM = 0, peakBodies = 0
    try await withThrowingTaskGroup(of: Int.self) { group in
        for i in 0..<count {
            if i >= window, let bodies = try await group.next() { peakBodies = max(peakBodies, bodies) }
            if i == 2 * window { warmHWM = peakResidentKiB() }
            group.addTask {
                _ = try await manager.image(for: URL(string: "\(base)?load=\(i)")!, context: context)
                return downloader.statistics.bodies
            }
        }
        for try await bodies in group { peakBodies = max(peakBodies, bodies) }
    }
    await manager.shutdown()
    print("warm-hwm \(warmHWM) end-hwm \(peakResidentKiB()) peak-bodies \(peakBodies)")
}

/// The process's resident set now (VmRSS), in KiB.
func residentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
}

/// One cold thumbnail load, streamed or not, and how far the peak RSS rose during it.
func streamLoad(url: URL, streams: Bool, directory: String) async throws {
    var configuration = ImageManagerConfiguration()
    configuration.streamsDecoding = streams
    configuration.bufferPool = nil
    var loopbackDownloads = DownloaderConfiguration()
    loopbackDownloads.destinationPolicy = DestinationPolicy(allowsLoopback: true)  // the server is on 127.0.0.1
    let downloader = try Downloader(configuration: loopbackDownloads)
    let manager = ImageManager(
        cache: try ImageCache(namespace: "stream-load", directory: URL(fileURLWithPath: directory)),
        downloader: downloader, configuration: configuration)
    // Warm-up: the connection and libcurl (the body streamed and dropped), and the JPEG codec.
    _ = try await downloader.download(DownloadRequest(url: url), keepingBody: false) { _ in }
    let gray = try Image(width: 64, height: 64, premultipliedRGBA: [UInt8](repeating: 128, count: 64 * 64 * 4))
    let small = try ImageEncoder.encode(gray, as: .jpeg(quality: 80))
    _ = try ImageDecoder(options: DecodeOptions(thumbnailPixelSize: PixelSize(square: 16))).decode(small)
    let context = ImageContext(thumbnailPixelSize: PixelSize(square: 256), storeCacheType: [],
                               originalStoreCacheType: [])
    let before = residentKiB()
    try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    _ = try await manager.image(for: url, options: .fromLoaderOnly, context: context)
    let peak = peakResidentKiB()
    await manager.shutdown()
    print("load-hwm-kib \(peak - before)")
}

let arguments = CommandLine.arguments
switch arguments.count > 1 ? arguments[1] : "" {
case "alloc-probe":
    allocProbe()
case "write-loop" where arguments.count == 4:
    try await writeLoop(directory: arguments[2], seed: Int(arguments[3]) ?? 0)
case "verify" where arguments.count == 3:
    verify(directory: arguments[2])
case "cold-loads" where arguments.count == 6:
    try await coldLoads(base: arguments[2], count: Int(arguments[3]) ?? 0, window: Int(arguments[4]) ?? 1,
                        directory: arguments[5])
case "stream-load" where arguments.count == 5:
    try await streamLoad(url: URL(string: arguments[2])!, streams: arguments[3] == "1", directory: arguments[4])
default:
    FileHandle.standardError.write(Data("usage: ImageKitTestHelper alloc-probe | write-loop DIR SEED | verify DIR | cold-loads URL N W DIR | stream-load URL STREAMS DIR\n".utf8))
    exit(2)
}
