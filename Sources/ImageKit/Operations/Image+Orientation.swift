import CImageCore

extension Image {
    /// An exact rearrangement of the pixels, named by the EXIF orientation it applies.
    enum Orientation {
        /// Mirror left to right (EXIF 2).
        case upMirrored
        /// Rotate 180° (EXIF 3).
        case down
        /// Mirror top to bottom (EXIF 4).
        case downMirrored
        /// Rotate 90° clockwise (EXIF 6).
        case right
        /// Rotate 90° counter-clockwise (EXIF 8).
        case left

        var cValue: ic_orientation {
            switch self {
            case .upMirrored: IC_ORIENT_UP_MIRRORED
            case .down: IC_ORIENT_DOWN
            case .downMirrored: IC_ORIENT_DOWN_MIRRORED
            case .right: IC_ORIENT_RIGHT
            case .left: IC_ORIENT_LEFT
            }
        }
    }

    /// A new image with `orientation` applied to every frame (width and height swap for quarter turns).
    func oriented(_ orientation: Orientation) throws -> Image {
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = ic_image_orient(raw, orientation.cValue, &out, &err)
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        return Image(taking: out)
    }
}
