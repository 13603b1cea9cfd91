import Glibc

/// The CPUs this process can run on, the basis of every default thread count.
enum ProcessorCount {
    /// Online CPUs (at least 1).
    static var online: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
