import Foundation
import ImageKit
import XCTest

/// Every input the fuzzers once broke an invariant with, decoded every way.
final class FuzzRegressionTests: XCTestCase {
    private var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz-regressions")
    }

    func testRegressionInputsDecodeCleanlyEveryWay() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertFalse(files.isEmpty)
        let limits = DecodeLimits(maxPixels: 1 << 18, maxFrames: 32, maxMemoryBytes: 32 << 20)
        let ways = [
            DecodeOptions(limits: limits),
            DecodeOptions(limits: limits, firstFrameOnly: false),
            DecodeOptions(limits: limits, thumbnailPixelSize: PixelSize(width: 37, height: 0)),
            DecodeOptions(limits: limits, firstFrameOnly: false, thumbnailPixelSize: PixelSize(square: 16),
                          thumbnailMode: .fill),
        ]
        for file in files {
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            for options in ways {
                do {
                    let image = try ImageDecoder(options: options).decode(data)
                    for f in 0..<image.frameCount {
                        let px = image.packedPixels(frame: f)
                        for i in stride(from: 0, to: px.count, by: 4) where px[i] > px[i + 3] || px[i + 1] > px[i + 3] || px[i + 2] > px[i + 3] {
                            XCTFail("\(file): pixel \(i / 4) of frame \(f) is not premultiplied: \(px[i..<(i + 4)])")
                            break
                        }
                    }
                } catch {
                    XCTAssertFalse(error.message.isEmpty, file)
                }
            }
        }
    }
}
