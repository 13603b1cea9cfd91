import CAnchors
import Foundation
import XCTest

/// Peak resident memory of `imagekit thumbnail --bench`, the whole process, as a
/// user would see it: shrink on load keeps it near the output size.
final class MemoryBenchmarks: XCTestCase {
    private var imagekit: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imagekit")
    }

    /// Runs the CLI and returns (median ms, peak RSS MB) from its output line.
    private func thumbnailBench(_ path: String, extra: [String] = []) throws -> (ms: Double, rssMB: Double) {
        let process = Process()
        process.executableURL = imagekit
        process.arguments = ["thumbnail", path, "--size", "256", "--bench", "5"] + extra
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, out)
        func number(after label: String) -> Double {
            guard let range = out.range(of: label) else { return .nan }
            return Double(out[range.upperBound...].prefix { $0 == "." || $0.isNumber }) ?? .nan
        }
        return (number(after: "median "), number(after: "peak RSS "))
    }

    func testPeakRSSOf100MPPNGThumbnail() throws {
        let path = BenchInputs.directory.appendingPathComponent("png-100mp-rgb.png").path
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(at: BenchInputs.directory, withIntermediateDirectories: true)
            print("[bench] making input png-100mp-rgb (10000x10000, first run only)")
            XCTAssertEqual(anchors_write_png_gradient(path + ".tmp", 10_000, 10_000), 0)
            try FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
        }
        let (ms, rss) = try thumbnailBench(path, extra: ["--max-pixels", "200000000"])
        BenchRecorder.record(BenchResult(
            section: "memory", name: "peak RSS, 100 MP PNG -> 256 px (MB)", medianMs: ms, minMs: ms,
            megapixels: 100, anchor: "full decode would hold", anchorMedianMs: nil, ratio: rss,
            target: 64, targetRelation: "<=", notes: ["peak_rss_mb": rss, "full_bitmap_mb": 400]))
    }

    func testPeakRSSOf12MPJPEGThumbnail() throws {
        let input = BenchInputs.jpeg12MP
        let path = BenchInputs.directory.appendingPathComponent("\(input.name).jpg").path
        let (ms, rss) = try thumbnailBench(path)
        BenchRecorder.record(BenchResult(
            section: "memory", name: "peak RSS, 12 MP JPEG -> 256 px (MB)", medianMs: ms, minMs: ms,
            megapixels: input.megapixels, ratio: rss, target: 24, targetRelation: "<=",
            notes: ["peak_rss_mb": rss, "full_bitmap_mb": 48]))
    }
}
