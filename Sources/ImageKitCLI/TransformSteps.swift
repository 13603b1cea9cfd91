import ArgumentParser
import ImageKit

/// The operations `imagekit transform` chains: one flag each, its value parsed into a
/// transformer. The flags are read in the order given, so the pipeline runs in that order.
enum TransformSteps {
    /// One operation flag: its name, the form of its value (nil: it takes none), what it does,
    /// and how its value becomes a transformer.
    struct Step: Sendable {
        let flag: String
        let value: String?
        let help: String
        let make: @Sendable (String) throws -> any ImageTransformer
    }

    /// Every operation flag, in the order the help lists them.
    static let all: [Step] = [
        Step(flag: "--resize", value: "WxH[,fit|fill|stretch[,GRAVITY]]",
             help: "Resize to the box (a side of 0 follows the aspect ratio); fit (default) keeps the whole image, fill covers the box and keeps the part GRAVITY names (default center), stretch ignores the aspect ratio.") { value in
            let parts = fields(value)
            let modes: [String: ImageResizer.Mode] = ["fit": .fit, "fill": .fill, "stretch": .stretch]
            guard (1...3).contains(parts.count), let size = size(parts[0]),
                  let mode = parts.count > 1 ? modes[parts[1]] : .fit, parts.count < 3 || mode == .fill
            else { throw invalid("--resize", value) }
            let gravity = parts.count > 2 ? try TransformSteps.gravity("--resize", parts[2]) : .center
            return ResizingTransformer(size: size, mode: mode, gravity: gravity)
        },
        Step(flag: "--crop", value: "X,Y,WxH | WxH[,GRAVITY]",
             help: "Keep the rectangle WxH whose top-left corner is (X, Y), or a WxH window placed by GRAVITY (default center; smart: where the interest is).") { value in
            let parts = fields(value)
            if (1...2).contains(parts.count), let size = size(parts[0]) {
                let gravity = parts.count > 1 ? try TransformSteps.gravity("--crop", parts[1]) : .center
                return CroppingTransformer(size: size, gravity: gravity)
            }
            guard parts.count == 3, let x = Int(parts[0]), let y = Int(parts[1]), let size = size(parts[2]) else {
                throw invalid("--crop", value)
            }
            return CroppingTransformer(rect: PixelRect(x: x, y: y, width: size.width, height: size.height))
        },
        Step(flag: "--rotate", value: "DEGREES[,fit|crop[,#RRGGBB|transparent]]",
             help: "Rotate clockwise (negative: counter-clockwise); multiples of 90 exactly, other angles resampled onto a canvas grown to fit (default) or kept at the image's size (crop), the new corners transparent (default) or a colour.") { value in
            let parts = fields(value)
            guard (1...3).contains(parts.count), let degrees = Double(parts[0]), ["fit", "crop"].contains(parts.count > 1 ? parts[1] : "fit")
            else { throw invalid("--rotate", value) }
            return RotationTransformer(angle: degrees, fitSize: parts.count < 2 || parts[1] == "fit",
                                       background: try background("--rotate", parts.count > 2 ? parts[2] : "transparent"))
        },
        Step(flag: "--flip", value: "h|v|hv", help: "Mirror left-right (h), upside down (v) or both.") { value in
            guard ["h", "v", "hv", "vh"].contains(value) else { throw invalid("--flip", value) }
            return FlippingTransformer(horizontal: value.contains("h"), vertical: value.contains("v"))
        },
        Step(flag: "--overlay", value: "FILE[,GRAVITY[,X,Y[,OPACITY[,SCALE[,SPACING]]]]]",
             help: "Draw the image in FILE over the image (a watermark) at GRAVITY (default southeast), X and Y pixels in from that edge, with OPACITY 0...1, SCALE its width as a fraction of the image's, repeated SPACING pixels apart when given.") { value in
            let parts = fields(value)
            guard (1...7).contains(parts.count), parts.count != 3 else { throw invalid("--overlay", value) }
            let mark = try ImageDecoder().decode(try readFile(parts[0]))
            let gravity = parts.count > 1 ? try TransformSteps.gravity("--overlay", parts[1]) : .southEast
            var offset = (x: 0, y: 0), opacity = 1.0, scale: Double?, spacing: Int?
            if parts.count > 3 {
                guard let x = Int(parts[2]), let y = Int(parts[3]) else { throw invalid("--overlay", value) }
                offset = (x, y)
            }
            if parts.count > 4 {
                guard let number = Double(parts[4]) else { throw invalid("--overlay", value) }
                opacity = number
            }
            if parts.count > 5 {
                guard let number = Double(parts[5]) else { throw invalid("--overlay", value) }
                scale = number
            }
            if parts.count > 6 {
                guard let number = Int(parts[6]) else { throw invalid("--overlay", value) }
                spacing = number
            }
            // The mark's identity in the key: its file name, without the characters keys reserve.
            let name = String(parts[0].split(separator: "/").last ?? "mark").map { "(),".contains($0) ? "_" : $0 }
            return OverlayTransformer(mark: mark, markKey: String(name), gravity: gravity, offset: offset,
                                      opacity: opacity, scale: scale, tile: spacing)
        },
        Step(flag: "--pad", value: "TOP,RIGHT,BOTTOM,LEFT[,#RRGGBB|transparent]",
             help: "Add that many pixels on each side, transparent (default) or a colour.") { value in
            let parts = fields(value)
            guard (4...5).contains(parts.count) else { throw invalid("--pad", value) }
            let sides = parts[0..<4].compactMap { Int($0) }
            guard sides.count == 4 else { throw invalid("--pad", value) }
            return PaddingTransformer(top: sides[0], right: sides[1], bottom: sides[2], left: sides[3],
                                      background: try background("--pad", parts.count > 4 ? parts[4] : "transparent"))
        },
        Step(flag: "--extend", value: "RATIO[,GRAVITY[,#RRGGBB|transparent]]",
             help: "Extend the canvas the shorter way to the aspect ratio RATIO (width / height), the image placed by GRAVITY (default center), the new canvas transparent (default) or a colour.") { value in
            let parts = fields(value)
            guard (1...3).contains(parts.count), let ratio = Double(parts[0]) else { throw invalid("--extend", value) }
            let gravity = parts.count > 1 ? try TransformSteps.gravity("--extend", parts[1]) : .center
            return PaddingTransformer(aspectRatio: ratio, gravity: gravity,
                                      background: try background("--extend", parts.count > 2 ? parts[2] : "transparent"))
        },
        Step(flag: "--trim", value: "THRESHOLD[,#RRGGBB]",
             help: "Cut off the border within THRESHOLD levels (0...255) of the colour, by default the top-left pixel's.") { value in
            let parts = fields(value)
            guard (1...2).contains(parts.count), let threshold = Double(parts[0]) else { throw invalid("--trim", value) }
            guard parts.count == 1 else {
                guard let color = RGBColor(hex: parts[1]) else { throw invalid("--trim", value) }
                return TrimTransformer(threshold: threshold, background: color)
            }
            return TrimTransformer(threshold: threshold)
        },
        Step(flag: "--blur", value: "SIGMA", help: "Gaussian blur; SIGMA in pixels.") { value in
            guard let sigma = Double(value) else { throw invalid("--blur", value) }
            return BlurTransformer(sigma: sigma)
        },
        Step(flag: "--sharpen", value: "SIGMA[,AMOUNT[,THRESHOLD]]",
             help: "Unsharp mask: the blur's SIGMA, AMOUNT (default 1) and THRESHOLD in levels (default 0).") { value in
            let numbers = try doubles("--sharpen", value, count: 1...3)
            guard numbers.count < 3 || numbers[2] == numbers[2].rounded() else { throw invalid("--sharpen", value) }
            return SharpenTransformer(sigma: numbers[0], amount: numbers.count > 1 ? numbers[1] : 1,
                                      threshold: numbers.count > 2 ? Int(numbers[2]) : 0)
        },
        Step(flag: "--round", value: "RADIUS[,BORDER[,#RRGGBB]]",
             help: "Round every corner to RADIUS pixels, with an optional border of width BORDER and a colour (default black).") { value in
            let parts = fields(value)
            guard (1...3).contains(parts.count), let radius = Double(parts[0]) else { throw invalid("--round", value) }
            let border = parts.count > 1 ? Double(parts[1]) : 0
            let color = parts.count > 2 ? RGBColor(hex: parts[2]) : .black
            guard let border, let color else { throw invalid("--round", value) }
            return RoundCornerTransformer(radius: radius, borderWidth: border, borderColor: color)
        },
        Step(flag: "--circle", value: nil, help: "Keep the largest centred circle (transparent outside).") { _ in
            RoundCornerTransformer.circle()
        },
        Step(flag: "--tint", value: "#RRGGBB[,OPACITY]",
             help: "Tint with the colour (SDWebImage's tint: the image's alpha kept) at OPACITY 0...1 (default 1).") { value in
            let parts = fields(value)
            guard (1...2).contains(parts.count), let color = RGBColor(hex: parts[0]),
                  let opacity = parts.count == 2 ? Double(parts[1]) : 1
            else { throw invalid("--tint", value) }
            return TintTransformer(color: color, opacity: opacity)
        },
        Step(flag: "--grayscale", value: nil, help: "Shades of grey (Rec. 709 luma).") { _ in GrayscaleTransformer() },
        Step(flag: "--adjust", value: "BRIGHTNESS,CONTRAST,SATURATION",
             help: "Scale brightness, contrast and saturation (1 leaves each as it is).") { value in
            let n = try doubles("--adjust", value, count: 3...3)
            return ColorAdjustTransformer(brightness: n[0], contrast: n[1], saturation: n[2])
        },
        Step(flag: "--pixelate", value: "BLOCK", help: "Blocks of BLOCK x BLOCK pixels, each its average.") { value in
            guard let block = Int(value) else { throw invalid("--pixelate", value) }
            return PixelateTransformer(blockSize: block)
        },
    ]

    /// The help's list of operation flags, one per line.
    static var helpText: String {
        all.map { "  \($0.flag)\($0.value.map { " " + $0 } ?? "")\n      \($0.help)" }.joined(separator: "\n")
    }

    /// The transformers `arguments` name, in their order: each operation flag, followed by its
    /// value when it takes one (`--blur 2` or `--blur=2`).
    static func parse(_ arguments: [String]) throws -> [any ImageTransformer] {
        var result: [any ImageTransformer] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard let step = all.first(where: { $0.flag == name }) else {
                throw ValidationError("unknown operation \(argument); the operations are \(all.map(\.flag).joined(separator: ", "))")
            }
            guard step.value != nil else {
                guard name == argument else { throw ValidationError("\(step.flag) takes no value") }
                result.append(try step.make(""))
                continue
            }
            let value: String
            if name != argument {
                value = String(argument.dropFirst(name.count + 1))
            } else if let next = rest.popFirst() {
                value = next
            } else {
                throw ValidationError("\(step.flag) needs a value: \(step.flag) \(step.value!)")
            }
            result.append(try step.make(value))
        }
        return result
    }

    /// `value` split at its commas, but not those inside parentheses (`focus(0.3,0.2)` is one field).
    static func fields(_ value: String) -> [String] {
        var result: [String] = [], field = "", depth = 0
        for character in value {
            switch character {
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 0:
                result.append(field)
                field = ""
                continue
            default: break
            }
            field.append(character)
        }
        return result + [field]
    }

    /// `transparent` or a colour `#rrggbb`.
    static func background(_ flag: String, _ text: String) throws -> Background {
        if text == "transparent" { return .transparent }
        guard let color = RGBColor(hex: text) else {
            throw ValidationError("\(flag): \(text) is neither transparent nor a colour #rrggbb")
        }
        return .color(color)
    }

    /// The gravity a command line names (`north`, `focus(0.3,0.2)`, `smart`, …).
    static func gravity(_ flag: String, _ text: String) throws -> Gravity {
        guard let gravity = Gravity(key: text) else {
            throw ValidationError("\(flag): \(text) is not a gravity (center, north, northeast, east, southeast, south, southwest, west, northwest, focus(X,Y) with X and Y in 0...1, smart)")
        }
        return gravity
    }

    /// `WxH` (either side may be 0 for a resize; the transformer checks).
    private static func size(_ text: String) -> PixelSize? {
        let sides = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, let w = Int(sides[0]), let h = Int(sides[1]) else { return nil }
        return PixelSize(width: w, height: h)
    }

    private static func doubles(_ flag: String, _ value: String, count: ClosedRange<Int>) throws -> [Double] {
        let numbers = fields(value).compactMap(Double.init)
        guard numbers.count == fields(value).count, count.contains(numbers.count) else { throw invalid(flag, value) }
        return numbers
    }

    private static func invalid(_ flag: String, _ value: String) -> ValidationError {
        let step = all.first { $0.flag == flag }
        return ValidationError("\(flag) \(value): expected \(flag) \(step?.value ?? "")")
    }
}
