import CImageCore

/// What the transformers over the core's operations (`ops/`) share: how their numbers and
/// colours are written in keys, and how a C operation is called with the load's cancellation
/// and its result or error comes back.
enum Operations {
    /// `value` as a key writes it: Swift's shortest round-tripping form, the same in every
    /// run, with -0 written as 0 (they are equal parameters).
    static func keyNumber(_ value: Double) -> String {
        "\(value + 0.0)"
    }

    /// `#rrggbb` (lowercase), followed by `aa` when `alpha` is given.
    static func keyColor(_ color: RGBColor, alpha: UInt8? = nil) -> String {
        let bytes = [color.red, color.green, color.blue] + (alpha.map { [$0] } ?? [])
        let digits = Array("0123456789abcdef")
        return "#" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// Runs a C operation that polls a cancel flag (`cancellation`'s) and fills an image and
    /// an error, and wraps its result; a cancelled operation throws ``ImageKitError/cancelled``.
    static func run(
        _ cancellation: DecodeCancellation,
        _ body: (UnsafePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<ic_image>?>,
                 UnsafeMutablePointer<ic_error>) -> ic_status
    ) throws -> Image {
        var out: UnsafeMutablePointer<ic_image>?
        var err = ic_error()
        let st = withExtendedLifetime(cancellation) { body(cancellation.pointer, &out, &err) }
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        return Image(taking: out)
    }
}
