/// When a ``DiskCache`` write forces its data to stable storage.
///
/// Without syncing, a power loss can lose entries written in the last
/// seconds; it cannot make the cache return damaged pixels, because every
/// read checks the header and payload checksums and treats damage as a miss.
public enum DiskCacheSync: Sendable, Hashable {
    /// Never sync (the default): fastest; recent entries may vanish on power loss.
    case none
    /// Sync each file's data before renaming it into place.
    case file
    /// Sync each file, and the directory after the rename.
    case full
}
