import CAnchors
import Foundation
import XCTest

/// Peak resident memory of `imagekit thumbnail --bench`, the whole process, as a
/// user would see it: shrink on load keeps it near the output size.
final class MemoryBenchmarks: BenchmarkCase {
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

    /// Peak RSS in MB of a child process running `arguments`, as the kernel accounts it for a
    /// waited-for child (python3's getrusage of its children: the same measure for both tools).
    private func peakRSSMB(_ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import resource, subprocess, sys
            done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
            print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let fields = out.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard fields.count == 2, fields[0] == "0", let kb = Double(fields[1]) else {
            throw VipsPeer.Missing(description: "\(arguments.joined(separator: " ")) failed: \(out)")
        }
        return kb / 1024
    }

    /// The whole process's peak memory for one 256 px JPEG thumbnail of a 12 MP JPEG, written to a
    /// file: the `imagekit` CLI against libvips's `vipsthumbnail` (the anchors' 36 MB), as a ratio.
    /// The bound was 24 MB until round three; the Swift runtime and Foundation alone take about
    /// 20 MB of it, so the bound moved with every runtime update rather than with ImageKit.
    func testPeakRSSOf12MPJPEGThumbnail() throws {
        let input = BenchInputs.jpeg12MP
        let path = BenchInputs.directory.appendingPathComponent("\(input.name).jpg").path
        let (ms, _) = try thumbnailBench(path)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        let ours = try peakRSSMB([imagekit.path, "thumbnail", path, "--size", "256",
                                  "-o", out.appendingPathComponent("ours.jpg").path])
        let vips = try peakRSSMB(["vipsthumbnail", path, "-s", "256", "-o", out.appendingPathComponent("vips.jpg").path])
        BenchRecorder.record(BenchResult(
            section: "memory", name: "peak RSS, 12 MP JPEG -> 256 px JPEG file: imagekit / vipsthumbnail",
            medianMs: ms, minMs: ms, megapixels: input.megapixels, anchor: "vipsthumbnail -s 256",
            ratio: ours / vips, target: 0.8, targetRelation: "<=",
            notes: ["peak_rss_mb": ours, "vipsthumbnail_peak_rss_mb": vips, "full_bitmap_mb": 48]))
    }
}
