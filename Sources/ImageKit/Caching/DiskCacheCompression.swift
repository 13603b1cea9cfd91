/// How a ``DiskCache`` trades file size for decode speed when it writes a bitmap.
///
/// Every choice drops the alpha byte of opaque images when it can and checks
/// every byte on read; they differ in how hard LZ4 is asked to work (figures
/// from `Benchmarks/CacheBenchmarks.swift`).
public enum DiskCacheCompression: Sendable, Hashable {
    /// Smallest files: each row stored as its difference from the row above
    /// before LZ4, kept wherever it saves an eighth. Files ~10–45 % smaller
    /// than `.balanced`, hits ~20–60 % slower.
    case smallest
    /// Opaque images as RGB, others as differences from the row above. LZ4
    /// is kept wherever it saves an eighth of a chunk in bitmaps under 4 MiB
    /// (thumbnails: many entries, sub-millisecond hits), and only where it
    /// halves a chunk in larger ones, whose hits a request waits tens of
    /// milliseconds on. Real photos shrink about as much either way (LZ4 finds
    /// little in them beyond what dropping alpha saves).
    case balanced
    /// As `.balanced` for large bitmaps at every size: LZ4 kept only where it
    /// halves a chunk (flat areas), so photos are stored as plain RGB and
    /// decode at memory speed.
    case fastest
}
