#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// How much memory this process may use: the machine's physical memory,
/// lowered by a cgroup memory limit when one is set (containers).
enum SystemMemory {
    /// Physical memory in bytes.
    static var physical: Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let size = sysconf(Int32(_SC_PAGESIZE))
        return pages > 0 && size > 0 ? pages.multipliedReportingOverflow(by: size).partialValue : 0
    }

    /// The smaller of physical memory and every cgroup limit found under
    /// `cgroupRoot`: cgroup v2 `memory.max` (at the root and at this process's
    /// cgroup path) and cgroup v1 `memory/memory.limit_in_bytes`. "max" and
    /// v1's near-2^63 "unlimited" values count as no limit.
    static func available(cgroupRoot: String) -> Int {
        var limit = physical
        for path in limitFiles(cgroupRoot: cgroupRoot) {
            if let value = readLimit(path), value > 0 { limit = min(limit, value) }
        }
        return limit
    }

    private static func limitFiles(cgroupRoot root: String) -> [String] {
        var files = ["\(root)/memory.max", "\(root)/memory/memory.limit_in_bytes"]
        // This process's own cgroup, when the hierarchy is visible from here.
        let own = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        for line in own.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2] != "/" else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                files.append("\(root)\(fields[2])/memory.max")
            } else if fields[1].split(separator: ",").contains("memory") {
                files.append("\(root)/memory\(fields[2])/memory.limit_in_bytes")
            }
        }
        return files
    }

    private static func readLimit(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let value = String(text.filter { !$0.isWhitespace })
        guard let bytes = Int(value), bytes < Int.max / 2 else { return nil }
        return bytes
    }
}
