import Foundation
import ImageKit
import XCTest

// README-BEGIN
func describe(_ path: String) throws -> String {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let decoder = ImageDecoder(options: DecodeOptions(limits: DecodeLimits(maxPixels: 50_000_000)))
    let image = try decoder.decode(data)  // premultiplied RGBA8, EXIF orientation applied
    let alpha = image.isOpaque ? "opaque" : "with alpha"
    return "\(image.sourceFormat) \(image.width)x\(image.height), \(image.frameCount) frame(s), \(alpha)"
}
// README-END

/// Runs the README's usage example and checks the README shows exactly this code.
final class ReadmeExampleTests: XCTestCase {
    func testExampleRuns() throws {
        let png = PNGWriter(width: 3, height: 2, colorType: .grayAlpha, bitDepth: 8,
                            samples: [1, 255, 2, 255, 3, 255, 4, 128, 5, 255, 6, 255]).encode()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString).png")
        try Data(png).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertEqual(try describe(url.path), "PNG 3x2, 1 frame(s), with alpha")
    }

    func testReadmeShowsThisCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let example = source.components(separatedBy: "// README-BEGIN\n")[1].components(separatedBy: "// README-END")[0]
        XCTAssertTrue(readme.contains("```swift\nimport Foundation\nimport ImageKit\n\n" + example + "```"),
                      "README.md's Swift example differs from ReadmeExampleTests.swift")
    }
}
