import Foundation
import ImageKit

/// Wall time and process CPU time per decode, for comparisons where work runs on more than one
/// thread (helper threads): latency is never shown without the CPU time it cost.
enum WallAndCPU {
    /// Wall and process CPU milliseconds per load of `loads` decodes of `bytes` by `decoder`,
    /// spread over `threads` threads started together.
    static func sample(_ decoder: ImageDecoder, _ bytes: [UInt8], threads: Int,
                       loads: Int) -> (wall: Double, cpu: Double) {
        let cpu0 = BenchRecorder.processCPUMilliseconds()
        let wall = BenchRecorder.clock(1) {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                bytes.withUnsafeBytes { raw in
                    for _ in 0..<loads / threads { _ = try? decoder.decode(raw) }
                }
            }
        }
        let n = Double(loads / threads * threads)
        return (wall / n, (BenchRecorder.processCPUMilliseconds() - cpu0) / n)
    }

    /// Wall and process CPU milliseconds per call of `loads` calls of `work` on the calling thread.
    static func sample(loads: Int, _ work: () -> Void) -> (wall: Double, cpu: Double) {
        let cpu0 = BenchRecorder.processCPUMilliseconds()
        let wall = BenchRecorder.clock(loads, work)
        return (wall, (BenchRecorder.processCPUMilliseconds() - cpu0) / Double(loads))
    }

    /// Takes `samples` of ours and of the anchor (`theirs`), alternating which goes first so a
    /// drift of the shared machine hits both alike, and records the medians per load with the
    /// ratio of wall times and both CPU times (labelled with `ours.label` and `anchor.short`).
    static func record(section: String, name: String, megapixels: Double, samples: Int,
                       anchor: (name: String, short: String),
                       ours: (label: String, sample: () throws -> (wall: Double, cpu: Double)),
                       theirs: () throws -> (wall: Double, cpu: Double), target: Double?) throws {
        var mine: [(wall: Double, cpu: Double)] = [], others: [(wall: Double, cpu: Double)] = []
        for i in 0..<samples {
            if i % 2 == 0 {
                mine.append(try ours.sample())
                others.append(try theirs())
            } else {
                others.append(try theirs())
                mine.append(try ours.sample())
            }
        }
        let wall = BenchRecorder.median(mine.map(\.wall)), anchorWall = BenchRecorder.median(others.map(\.wall))
        BenchRecorder.record(BenchResult(
            section: section, name: name, medianMs: wall,
            minMs: mine.map(\.wall).min() ?? 0, megapixels: megapixels,
            anchor: anchor.name, anchorMedianMs: anchorWall, ratio: wall / anchorWall,
            target: target, targetRelation: target == nil ? nil : "<=",
            notes: ["CPU ms/load \(ours.label)": BenchRecorder.median(mine.map(\.cpu)),
                    "CPU ms/load \(anchor.short)": BenchRecorder.median(others.map(\.cpu))],
            spreadPercent: BenchRecorder.spread(mine.map(\.wall))))
    }
}
