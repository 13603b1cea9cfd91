/// Deterministic photo-like test pictures: smooth lighting, soft-edged shapes,
/// multi-octave texture and a little sensor noise — real edges and gradients,
/// so JPEG entropy and LZ4 ratios behave as they do on photographs (flat
/// colour or pure noise would flatter or punish every codec).
public enum SyntheticPhoto {
    /// Straight (not premultiplied) RGBA8, tightly packed, `width * height * 4` bytes.
    /// With `alpha`, the alpha channel is a soft vignette with a transparent corner
    /// region; otherwise it is 255 everywhere.
    public static func rgba(width: Int, height: Int, seed: UInt64 = 1, alpha: Bool = false) -> [UInt8] {
        var rng = SplitMix(seed: seed)
        let grid = 64
        let lattice = (0..<(grid * grid * 3)).map { _ in Float(rng.next() % 1024) / 1023 }
        struct Shape { var cx, cy, r, soft: Float; var color: (Float, Float, Float) }
        let shapes = (0..<24).map { _ -> Shape in
            Shape(cx: Float(rng.next() % 1000) / 1000, cy: Float(rng.next() % 1000) / 1000,
                  r: 0.04 + Float(rng.next() % 200) / 1000, soft: 0.002 + Float(rng.next() % 20) / 2000,
                  color: (Float(rng.next() % 256), Float(rng.next() % 256), Float(rng.next() % 256)))
        }
        let w = Float(width), h = Float(height)
        var out = [UInt8](repeating: 0, count: width * height * 4)
        lattice.withUnsafeBufferPointer { lat in
            out.withUnsafeMutableBufferPointer { px in
                for y in 0..<height {
                    let v = Float(y) / h
                    // Only the shapes that reach this row (their extent in v, aspect-corrected).
                    let active = shapes.filter { abs(v - $0.cy) * h / w <= $0.r + $0.soft }
                    var noise = SplitMix(seed: seed &+ UInt64(y) &* 0x9E37_79B9)
                    for x in 0..<width {
                        let u = Float(x) / w
                        // Sky-to-ground lighting.
                        var r = 70 + 120 * v + 40 * u
                        var g = 90 + 90 * (1 - v) + 30 * u * v
                        var b = 160 - 100 * v
                        // Texture: three octaves of value noise per channel.
                        var amp: Float = 38
                        var freq: Float = 6
                        for _ in 0..<3 {
                            let t = sample(lat, grid, u * freq, v * freq * h / w)
                            r += (t.0 - 0.5) * amp
                            g += (t.1 - 0.5) * amp
                            b += (t.2 - 0.5) * amp
                            amp *= 0.5
                            freq *= 4.1
                        }
                        // Shapes with soft edges (the "objects" of the scene).
                        for s in active {
                            let dx = u - s.cx, dy = (v - s.cy) * h / w
                            let d = (dx * dx + dy * dy).squareRoot() - s.r
                            if d < s.soft {
                                let k = d <= -s.soft ? 1 : (s.soft - d) / (2 * s.soft)
                                r += (s.color.0 - r) * k * 0.85
                                g += (s.color.1 - g) * k * 0.85
                                b += (s.color.2 - b) * k * 0.85
                            }
                        }
                        let n = Float(Int(noise.next() % 9) - 4)
                        let i = (y * width + x) * 4
                        px[i] = clamp(r + n)
                        px[i + 1] = clamp(g + n)
                        px[i + 2] = clamp(b + n)
                        if alpha {
                            let dx = u - 0.5, dy = v - 0.5
                            let a = 330 - 900 * (dx * dx + dy * dy) - (u + v < 0.35 ? 400 : 0)
                            px[i + 3] = clamp(a)
                        } else {
                            px[i + 3] = 255
                        }
                    }
                }
            }
        }
        return out
    }

    private static func clamp(_ x: Float) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }

    private static func sample(_ lattice: UnsafeBufferPointer<Float>, _ grid: Int, _ x: Float, _ y: Float)
        -> (Float, Float, Float) {
        let fx = x - x.rounded(.down), fy = y - y.rounded(.down)
        let x0 = Int(x.rounded(.down)) & (grid - 1), y0 = Int(y.rounded(.down)) & (grid - 1)
        let x1 = (x0 + 1) & (grid - 1), y1 = (y0 + 1) & (grid - 1)
        let sx = fx * fx * (3 - 2 * fx), sy = fy * fy * (3 - 2 * fy)
        func at(_ gx: Int, _ gy: Int, _ c: Int) -> Float { lattice[(gy * grid + gx) * 3 + c] }
        func mix(_ c: Int) -> Float {
            let top = at(x0, y0, c) + (at(x1, y0, c) - at(x0, y0, c)) * sx
            let bottom = at(x0, y1, c) + (at(x1, y1, c) - at(x0, y1, c)) * sx
            return top + (bottom - top) * sy
        }
        return (mix(0), mix(1), mix(2))
    }
}

/// A small deterministic pseudo-random generator (SplitMix64).
public struct SplitMix {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
