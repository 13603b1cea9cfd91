#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CImageCore

extension Image {
    /// The source's ICC profile as embedded (reassembled from JPEG segments), whatever
    /// ``ColorMode`` the decode used; nil when the source had none, when it was ignored for
    /// its size or broken JPEG segments, and for images not straight from a decoder
    /// (made in memory, transformed, or read from the disk tier).
    public var iccProfile: Data? {
        var size = 0
        guard let bytes = ic_image_icc_profile(raw, &size) else { return nil }
        return Data(bytes: bytes, count: size)
    }

    /// The colour space the source's profile declares; nil without a profile.
    public var iccProfileSpace: ICCColorSpace? { ICCColorSpace(cValue: UInt32(raw.pointee.icc_space)) }

    /// Whether the pixels were converted from the source's profile to sRGB (false for
    /// untagged and sRGB-tagged sources, ``ColorMode/raw`` and ignored profiles).
    public var isColorConverted: Bool { raw.pointee.color_converted != 0 }

    /// Whether the source had a profile that was not used (unreadable, of another colour
    /// space than the pixels, too large); the image then decodes as untagged.
    public var isICCProfileIgnored: Bool { raw.pointee.icc_ignored != 0 }
}
