import CImageCore

/// What a C-core decode ended with, for tests that compare two decoders or two ways of feeding
/// one: the status and error sentence, or the image's facts and every frame's pixels (rows
/// packed, no stride padding).
struct DecodeOutcome: Equatable {
    var status: ic_status
    var message = ""
    var width = 0, height = 0, opaque = false, orientation = 0
    var frameCount = 0, loopCount = 0
    var delays: [UInt32] = []
    var pixels: [UInt8] = []

    /// The outcome of a call that returned `status`, `image` (freed here) and `error`.
    init(status: ic_status, image: UnsafeMutablePointer<ic_image>?, error: ic_error = ic_error()) {
        self.status = status
        var error = error
        guard status == IC_OK, let image else {
            message = withUnsafeBytes(of: &error.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if let image { ic_image_free(image) }
            return
        }
        defer { ic_image_free(image) }
        let img = image.pointee
        width = Int(img.width)
        height = Int(img.height)
        opaque = img.is_opaque != 0
        orientation = Int(img.orientation)
        frameCount = Int(img.frame_count)
        loopCount = Int(img.loop_count)
        if let frameDelays = img.frame_delays_ms {
            delays = Array(UnsafeBufferPointer(start: frameDelays, count: frameCount))
        }
        pixels.reserveCapacity(width * height * 4 * frameCount)
        for f in 0..<frameCount {
            for y in 0..<height {
                pixels.append(contentsOf: UnsafeBufferPointer(start: img.pixels + f * img.frame_size + y * img.stride,
                                                              count: width * 4))
            }
        }
    }

    /// The outcome of `ic_decode` on `data` with `options` (`ic_decode_options_init`'s when nil).
    static func decode(_ data: [UInt8], _ options: ic_decode_options? = nil) -> DecodeOutcome {
        var o = ic_decode_options()
        if let options { o = options } else { ic_decode_options_init(&o) }
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = ic_decode(data, data.count, &o, &out, nil, &err)
        return DecodeOutcome(status: st, image: out, error: err)
    }

    /// An outcome with no image (a failure the test itself records).
    init(status: ic_status, message: String = "") {
        self.status = status
        self.message = message
    }
}
