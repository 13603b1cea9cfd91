/// How a ``DiskCache`` trades file size for decode speed when it writes a bitmap.
///
/// Every choice drops the alpha byte of opaque images when it can and checks
/// every byte on read; they differ in how hard LZ4 is asked to work (figures
/// from `Benchmarks/CacheBenchmarks.swift`).
public enum DiskCacheCompression: Sendable, Hashable {
    /// Smallest files: each row stored as its difference from the row above
    /// before LZ4, kept wherever it saves an eighth. Photos ~10–25 % smaller
    /// than `.balanced`, decoding ~20–40 % slower.
    case smallest
    /// Opaque images as RGB, others as differences from the row above; LZ4
    /// kept wherever it saves an eighth of a chunk.
    case balanced
    /// As `.balanced`, but LZ4 kept only where it halves a chunk (flat
    /// areas): photos are stored as plain RGB and decode at memory speed.
    case fastest
}
