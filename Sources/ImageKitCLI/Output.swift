#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ImageKit

/// Formatting helpers shared by the subcommands (no full Foundation: the tool
/// stays small in memory, which its own peak-RSS figures depend on).
enum Output {
    /// A JSON value of a flat JSON-lines record.
    enum Value {
        case string(String)
        case int(Int)
        case bool(Bool)
        case null
    }

    /// One JSON object on one line, keys sorted.
    static func json(_ object: [String: Value]) -> String {
        let fields = object.keys.sorted().map { key -> String in
            let value: String
            switch object[key]! {
            case .string(let s): value = quoted(s)
            case .int(let i): value = String(i)
            case .bool(let b): value = b ? "true" : "false"
            case .null: value = "null"
            }
            return quoted(key) + ":" + value
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Replaces tabs and newlines so a message stays one field of one line.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
    }

    /// `value` with exactly `digits` decimals.
    static func fixed(_ value: Double, _ digits: Int = 3) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale), frac = scaled % Int64(scale)
        var fracText = String(frac)
        fracText = String(repeating: "0", count: digits - fracText.count) + fracText
        return (value < 0 && scaled != 0 ? "-" : "") + String(whole) + (digits > 0 ? "." + fracText : "")
    }

    /// Median and minimum of a sample.
    struct Stats {
        let median: Double
        let min: Double

        init(_ values: [Double]) {
            let sorted = values.sorted()
            min = sorted.first ?? 0
            let n = sorted.count
            median = n == 0 ? 0 : (n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2)
        }
    }

    /// Decodes `data` `count` times from memory and returns the median and minimum ms.
    static func timeDecodes(_ decoder: ImageDecoder, _ data: Data, count: Int) throws -> Stats {
        var times: [Double] = []
        times.reserveCapacity(count)
        try data.withUnsafeBytes { bytes in
            for _ in 0..<count {
                let start = ContinuousClock.now
                let image = try decoder.decode(bytes)
                let elapsed = ContinuousClock.now - start
                withExtendedLifetime(image) {}
                times.append(milliseconds(elapsed))
            }
        }
        return Stats(times)
    }

    /// Milliseconds in a Duration.
    static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
    }
}
