import Foundation
import ImageKit
import ImageKitServer
import Logging
import XCTest

extension ManagerBenchmarks {
    /// The warm variant hit of ``testWarmEncodedVariantLoad()`` with ImageKitServer's logs,
    /// metrics and spans wired into the manager and nothing bootstrapped — swift-metrics' no-op
    /// backend, the no-op tracer, a logger at `info` — as a service runs before it picks its
    /// backends: two events, a span factory asked once, per load. Target: median ≤ 5 µs.
    func testWarmEncodedVariantLoadObserved() throws {
        let cache = try temporaryCache()
        let observability = ImageKitObservability(logger: Logger(label: "imagekit-bench"))
        let manager = try ImageManager(cache: cache, observability: observability)
        let url = URL(string: "http://127.0.0.1:9/warm/photo-017.jpg")!
        let format = OutputFormat.negotiate(accept: nil)
        let context = ImageContext(thumbnailPixelSize: PixelSize(square: 256))
        let image = try Image(width: 64, height: 48, premultipliedRGBA: [UInt8](repeating: 255, count: 64 * 48 * 4))
        let encoded = try EncodedImage(data: try ImageEncoder.encode(image, as: .jpeg(quality: 80)))
        cache.memoryCache.set(encoded, forKey: manager.cacheKey(for: url, as: format, context: context)!)
        try recordWarmLoads("warm memory-cache variant, observed by ImageKitServer, no backends (µs; target 5)") {
            try await manager.encodedImage(for: url, as: format, context: context).source
        }
    }
}
