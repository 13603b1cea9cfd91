import Foundation
import ImageKit
import TestServers
import XCTest

// README-BEGIN
func thumbnail(_ url: URL, cacheDirectory: URL,
               downloads: DownloaderConfiguration = DownloaderConfiguration()) async throws -> String {
    let cache = try ImageCache(namespace: "avatars", directory: cacheDirectory)
    let manager = ImageManager(cache: cache, downloader: try Downloader(configuration: downloads))
    let context = ImageContext(thumbnailPixelSize: PixelSize(square: 128))  // shrink on load
    let first = try await manager.image(for: url, context: context)  // downloaded, decoded, cached
    let again = try await manager.image(for: url, context: context)  // from memory this time
    let image = again.image  // premultiplied RGBA8
    return "\(image.width)x\(image.height) from \(first.source), then \(again.source)"
}
// README-END

/// Runs the README's usage example against nginx on 127.0.0.1 and checks the README and the
/// documentation's landing page show exactly this code.
final class ReadmeExampleTests: XCTestCase {
    func testExampleRuns() async throws {
        let jpeg = makeJPEG(Pixels.pattern(width: 640, height: 480), width: 640, height: 480)
        let nginx = try NginxServer(files: ["avatar.jpg": jpeg])
        defer { nginx.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The downloader connects to public addresses only unless told otherwise; nginx is on 127.0.0.1.
        var downloads = DownloaderConfiguration()
        downloads.destinationPolicy = DestinationPolicy(allowsLoopback: true)
        let summary = try await thumbnail(nginx.url("/avatar.jpg"), cacheDirectory: directory, downloads: downloads)
        XCTAssertEqual(summary, "128x96 from loader, then memory")
        // The disk writes (thumbnail and original bytes) finish after the example returns.
        let folder = directory.appendingPathComponent("avatars").path
        await DownloadTesting.waitUntil("both disk entries are written") {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".ikc") }.count >= 2
        }
    }

    func testReadmeShowsThisCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let example = source.components(separatedBy: "// README-BEGIN\n")[1].components(separatedBy: "// README-END")[0]
        for document in ["README.md", "Sources/ImageKit/ImageKit.docc/ImageKit.md"] {
            let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            XCTAssertTrue(text.contains("```swift\nimport Foundation\nimport ImageKit\n\n" + example + "```"),
                          "\(document)'s Swift example differs from ReadmeExampleTests.swift")
        }
    }
}
