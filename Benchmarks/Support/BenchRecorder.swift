import Foundation
import XCTest

/// One benchmark figure: ours, optionally against an anchor timed in the same
/// process on the same input, and the target the issue sets for the ratio.
struct BenchResult: Codable, Sendable {
    /// Section of the report ("decode", "thumbnail", "memory cache", …).
    var section: String
    /// Benchmark name, unique within the run.
    var name: String
    /// Median and minimum milliseconds per operation.
    var medianMs: Double
    var minMs: Double
    /// Work per operation, for throughput: megapixels, bytes or files.
    var megapixels: Double? = nil
    var bytes: Double? = nil
    var files: Double? = nil
    /// The anchor and its median ms on the same input.
    var anchor: String? = nil
    var anchorMedianMs: Double? = nil
    /// ours / anchor (lower is better), or another ratio the target is about.
    var ratio: Double? = nil
    /// The bound the ratio must meet, and which way: "<=" or ">=".
    var target: Double? = nil
    var targetRelation: String? = nil
    /// Extra figures (compression ratio, peak RSS, …) shown in the report.
    var notes: [String: Double] = [:]
    /// Relative standard deviation of ours' samples, in percent: how far this machine's noise
    /// moved the figure. Over ``BenchRecorder/noisySpreadPercent`` the report marks the row noisy.
    var spreadPercent: Double? = nil
    /// A second comparison shown beside ours in the report: the library a user would pick
    /// instead (libvips for thumbnails), timed in the same process on the same input.
    var peer: String? = nil
    var peerMedianMs: Double? = nil

    /// Whether the target is met (nil when there is no target).
    var passed: Bool? {
        guard let ratio, let target else { return nil }
        return targetRelation == ">=" ? ratio >= target : ratio <= target
    }
}

/// Times benchmarks inside XCTest's `measure` and records figures for the report.
enum BenchRecorder {
    /// The spread above which a row is reported as noisy (XCTest's own bound for `measure`).
    static let noisySpreadPercent = 10.0

    /// The spread of ours' samples in the current test's last ``time(_:inner:useMeasure:ours:anchor:)``
    /// call: ``record(_:)`` gives it to a row that names none. ``BenchmarkCase`` clears it before
    /// each test. `nonisolated(unsafe)`: XCTest runs one test method at a time, and only the
    /// thread running it reads or writes this (the benchmark bodies' own threads never touch it).
    nonisolated(unsafe) static var lastSpreadPercent: Double?

    /// Where results go: `$IMAGEKIT_BENCH_OUT` or `bench-results/` in the package.
    static var outputDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["IMAGEKIT_BENCH_OUT"] {
            return URL(fileURLWithPath: dir)
        }
        return packageRoot.appendingPathComponent("bench-results")
    }

    /// The package root, found from this file's path.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Runs `ours` (and `anchor`, interleaved, so drift of the shared machine hits
    /// both alike) `inner` times per sample inside `measure`, and returns the
    /// median and minimum ms per operation of each.
    ///
    /// XCTest allows one `measure` per test method; pass `useMeasure: false` for
    /// further comparisons in the same method (`samples` interleaved samples, 10 as `measure`
    /// takes, timed by our own clock only), or for bodies of seconds, where fewer samples do.
    static func time(_ test: XCTestCase, inner: Int = 1, useMeasure: Bool = true, samples: Int = 10,
                     ours: () throws -> Void,
                     anchor: (() throws -> Void)? = nil) rethrows -> (ours: [Double], anchor: [Double]) {
        let (o, a, _) = time(test, inner: inner, useMeasure: useMeasure, samples: samples, ours: ours, anchor: anchor,
                             peer: nil)
        return (o, a)
    }

    /// ``time(_:inner:useMeasure:samples:ours:anchor:)`` with a third body, the peer, interleaved as well.
    static func time(_ test: XCTestCase, inner: Int = 1, useMeasure: Bool = true, samples: Int = 10,
                     ours: () throws -> Void, anchor: (() throws -> Void)?, peer: (() throws -> Void)?)
        -> (ours: [Double], anchor: [Double], peer: [Double]) {
        var oursMs: [Double] = []
        var anchorMs: [Double] = []
        var peerMs: [Double] = []
        var failure: Error?
        func sample() {
            do {
                oursMs.append(try clock(inner, ours))
                if let anchor { anchorMs.append(try clock(inner, anchor)) }
                if let peer { peerMs.append(try clock(inner, peer)) }
            } catch {
                failure = error
            }
        }
        if useMeasure {
            test.measure { sample() }
        } else {
            for _ in 0..<samples { sample() }
        }
        if let failure { XCTFail("benchmark body threw: \(failure)") }
        lastSpreadPercent = spread(oursMs)
        return (oursMs, anchorMs, peerMs)
    }

    /// Relative standard deviation of `values` in percent (nil for fewer than two values), as
    /// XCTest's `measure` reports it.
    static func spread(_ values: [Double]) -> Double? {
        guard values.count > 1 else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        guard mean > 0 else { return nil }
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
        return 100 * variance.squareRoot() / mean
    }

    /// Milliseconds per call of `body`, over `n` calls.
    static func clock(_ n: Int, _ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<n { try body() }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(n)
    }

    /// Calls per sample so that one sample lasts at least 5 ms (after a warm-up call).
    static func calibrate(_ body: () throws -> Void) rethrows -> Int {
        try body()
        let once = try clock(1, body)
        return once >= 5 ? 1 : min(100_000, Int((5 / max(once, 1e-5)).rounded(.up)))
    }

    /// Milliseconds of CPU time the whole process has used (every thread), for CPU time per
    /// operation beside wall time where work runs on several threads.
    static func processCPUMilliseconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
        return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Prints one line and appends the result to `results.jsonl`. A result without a spread
    /// takes that of the current test's last timed samples, if any.
    static func record(_ result: BenchResult) {
        var result = result
        if result.spreadPercent == nil { result.spreadPercent = lastSpreadPercent }
        var line = String(format: "[bench] %@ / %@: median %.3f ms (min %.3f)",
                          result.section, result.name, result.medianMs, result.minMs)
        if let spread = result.spreadPercent {
            line += String(format: " ±%.1f%%%@", spread, spread > noisySpreadPercent ? " (noisy)" : "")
        }
        if let anchor = result.anchor, let a = result.anchorMedianMs {
            line += String(format: "; %@ %.3f ms", anchor, a)
        }
        if let peer = result.peer, let p = result.peerMedianMs {
            line += String(format: "; %@ %.3f ms", peer, p)
        }
        if let ratio = result.ratio {
            line += String(format: "; ratio %.3f", ratio)
            if let target = result.target {
                line += String(format: " (target %@ %.2f: %@)", result.targetRelation ?? "<=", target,
                               result.passed == true ? "met" : "MISSED")
            }
        }
        for (k, v) in result.notes.sorted(by: { $0.key < $1.key }) {
            line += String(format: "; %@ %.3f", k, v)
        }
        print(line)
        let dir = outputDirectory
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("results.jsonl")
        guard var data = try? JSONEncoder().encode(result) else { return }
        data.append(0x0A)
        if let handle = try? FileHandle(forWritingTo: file) {
            handle.seekToEndOfFile()
            handle.write(data)
            try? handle.close()
        } else {
            try? data.write(to: file)
        }
    }

    /// Times ours against an anchor and records the figures with the ratio ours/anchor.
    static func compare(_ test: XCTestCase, section: String, name: String, inner: Int? = nil,
                        useMeasure: Bool = true, megapixels: Double? = nil, bytes: Double? = nil,
                        anchorName: String, target: Double?, relation: String = "<=",
                        peerName: String? = nil, peer: (() throws -> Void)? = nil,
                        ours: () throws -> Void, anchor: () throws -> Void) rethrows {
        let repeats = try inner ?? calibrate(ours)
        let (o, a, p) = withoutActuallyEscaping(anchor) { anchor in
            time(test, inner: repeats, useMeasure: useMeasure, ours: ours, anchor: anchor, peer: peer)
        }
        let om = median(o), am = median(a)
        let ratio: Double? = am > 0 ? om / am : nil
        record(BenchResult(section: section, name: name, medianMs: om, minMs: o.min() ?? 0,
                           megapixels: megapixels, bytes: bytes, anchor: anchorName,
                           anchorMedianMs: am, ratio: ratio, target: target,
                           targetRelation: target == nil ? nil : relation, spreadPercent: spread(o),
                           peer: p.isEmpty ? nil : peerName, peerMedianMs: p.isEmpty ? nil : median(p)))
    }
}
