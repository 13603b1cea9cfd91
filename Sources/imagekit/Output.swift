import Foundation

/// Formatting helpers shared by the subcommands.
enum Output {
    /// One JSON object on one line, keys sorted.
    static func json(_ object: [String: Any]) -> String {
        let cleaned = object.mapValues { value -> Any in
            if case Optional<Any>.none = value as Any? { return NSNull() }
            return value
        }
        guard let data = try? JSONSerialization.data(withJSONObject: cleaned, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Replaces tabs and newlines so a message stays one field of one line.
    static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ")
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
}
