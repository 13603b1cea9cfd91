import CAnchors

/// libvips's `vips_thumbnail_buffer`, the peer of the thumbnail rows: what a service would call
/// instead of ImageKit, timed in the same process on the same bytes (one thread, operation cache
/// off; Tests/CAnchors/vips.c opens libvips on first use).
enum VipsPeer {
    /// The peer's name in the report.
    static let name = "libvips vips_thumbnail_buffer"

    /// Why the peer cannot run: libvips is missing or does not start.
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// A body that makes a thumbnail of `bytes` fitting `size` x `size` with libvips.
    ///
    /// - Throws: ``Missing`` when libvips cannot be opened (`make bench` installs it); the body
    ///   throws when libvips refuses the bytes.
    static func thumbnail(_ bytes: UnsafeRawBufferPointer, size: Int) throws -> () throws -> Void {
        if let why = anchors_vips_start() { throw Missing(description: "peer missing: " + String(cString: why)) }
        let start = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count = bytes.count
        return {
            guard anchors_vips_thumbnail(start, count, Int32(size)) == 0 else {
                throw Missing(description: "libvips could not make a thumbnail of the input")
            }
        }
    }
}
