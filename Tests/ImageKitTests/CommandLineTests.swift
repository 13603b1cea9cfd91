import Foundation
import ImageKit
import TestServers
import ImageKitTestSupport
import XCTest

/// Runs the built `imagekit` binary as a user would.
final class CommandLineTests: XCTestCase {
    private var binary: URL {
        BuiltProducts.imagekit
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        // Standard error goes to a file: a pipe nobody reads would stall a chatty child.
        let errors = try temporaryFile("stderr-\(UUID().uuidString)", [])
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let status = process.terminationStatus
        // (FileHandle: String(contentsOfFile:) leaks its buffer for an empty file, LSan says.)
        let stderr = String(decoding: FileHandle(forReadingAtPath: errors)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        // A sanitizer's report (exit 66 under TSan) is the failure to show, not the output.
        if stderr.contains("Sanitizer") { XCTFail("imagekit \(arguments.joined(separator: " ")): \(stderr)") }
        return (status, String(decoding: data, as: UTF8.self))
    }

    private func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imagekit-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func testAPNGFramesInInfoAndDecode() throws {
        let apng = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/apng/delay.png").path
        let info = try run(["info", apng])
        XCTAssertEqual(info.output, "\(apng)\tPNG\t128x64\t4\torientation=1\talpha=1\tdepth=8\tprogressive=0\ticc=none\n")
        let all = try run(["decode", "--all-frames", "--json", apng])
        XCTAssertEqual(all.status, 0)
        XCTAssertTrue(all.output.contains("\"frames\":4"), all.output)
    }

    func testDecodePrintsOneLinePerFileAndFailsWithExitCode1() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: binary.path), "imagekit not built at \(binary.path)")
        let png = PNGWriter(width: 2, height: 1, colorType: .rgba, bitDepth: 8, samples: [255, 0, 0, 255, 0, 0, 255, 128]).encode()
        let good = try temporaryFile("a.png", png)
        let bad = try temporaryFile("b.tif", Array("II*\0".utf8) + [UInt8](repeating: 0, count: 40))
        let ok = try run(["decode", "--sha256", good])
        XCTAssertEqual(ok.status, 0)
        // SHA-256 of the premultiplied, tightly packed pixels: FF 00 00 FF 00 00 80 80.
        XCTAssertEqual(ok.output, "\(good)\tPNG\t2x1\t1\te20d2c83aa12446cec80d294734b97eedd158dcbbd618fb700e6d767ca900ea5\n")
        let mixed = try run(["decode", good, bad])
        XCTAssertEqual(mixed.status, 1)
        XCTAssertEqual(mixed.output, "\(good)\tPNG\t2x1\t1\n\(bad)\terror\tunsupported format: TIFF\n")
        let missing = good + ".missing"
        let unreadable = try run(["decode", missing])
        XCTAssertEqual(unreadable.output, "\(missing)\terror\tcannot read \(missing): No such file or directory\n")
        let json = try run(["decode", "--json", bad])
        XCTAssertEqual(json.status, 1)
        XCTAssertTrue(json.output.contains("\"message\":\"unsupported format: TIFF\""), json.output)
        let info = try run(["info", good])
        XCTAssertEqual(info.status, 0)
        XCTAssertTrue(info.output.hasPrefix("\(good)\tPNG\t2x1\t1\t"), info.output)
        let bench = try run(["decode", "--bench", "3", good])
        XCTAssertEqual(bench.status, 0)
        XCTAssertTrue(bench.output.contains("median"), bench.output)
    }

    func testInfoPrintsTheProfileAndRawColorKeepsTheSourceValues() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/color")
        let p3 = dir.appendingPathComponent("p3.jpg").path
        let info = try run(["info", p3, dir.appendingPathComponent("srgb.jpg").path,
                            dir.appendingPathComponent("corrupt-profile.jpg").path, dir.appendingPathComponent("p3-jpg.ref.png").path])
        XCTAssertEqual(info.status, 0)
        let columns = info.output.split(separator: "\n").map { $0.split(separator: "\t").last.map(String.init) ?? "" }
        XCTAssertEqual(columns, ["icc=RGB:8868:converts", "icc=RGB:8892:srgb", "icc=RGB:8868:ignored", "icc=none"])
        let converted = try run(["decode", "--sha256", p3])
        let raw = try run(["decode", "--sha256", "--raw-color", p3])
        XCTAssertEqual([converted.status, raw.status], [0, 0])
        XCTAssertNotEqual(converted.output, raw.output)
        let thumb = try run(["thumbnail", "--raw-color", p3, "--size", "32"])
        XCTAssertEqual(thumb.status, 0, thumb.output)
    }

    func testThumbnailWritesAndTimes() throws {
        let rgba = Pixels.pattern(width: 120, height: 80, alpha: true)
        let png = PNGWriter(width: 120, height: 80, colorType: .rgba, bitDepth: 8, samples: rgba.map(UInt16.init)).encode()
        let input = try temporaryFile("in.png", png)
        let output = (input as NSString).deletingLastPathComponent + "/out.webp"
        let made = try run(["thumbnail", input, "--size", "30x0", "-o", output])
        XCTAssertEqual(made.status, 0)
        XCTAssertEqual(made.output, "\(input)\tPNG\t30x20\t\(output)\n")
        let written = try ImageDecoder().decode(Data(contentsOf: URL(fileURLWithPath: output)))
        XCTAssertEqual([written.width, written.height], [30, 20])
        let fill = try run(["thumbnail", input, "--size", "25", "--fill"])
        XCTAssertEqual(fill.output, "\(input)\tPNG\t25x25\n")
        let bench = try run(["thumbnail", input, "--size", "16", "--bench", "3"])
        XCTAssertEqual(bench.status, 0)
        XCTAssertTrue(bench.output.contains("median") && bench.output.contains("peak RSS"), bench.output)
        XCTAssertNotEqual(try run(["thumbnail", input, "--size", "abc"]).status, 0)
        // AVIF out (by the extension), then AVIF in: info, decode and a thumbnail of it.
        let avif = (input as NSString).deletingLastPathComponent + "/out.avif"
        XCTAssertEqual(try run(["thumbnail", input, "--size", "60", "--quality", "90", "-o", avif]).status, 0)
        XCTAssertEqual(ImageFormat(detecting: try Data(contentsOf: URL(fileURLWithPath: avif))), .avif)
        let info = try run(["info", avif])
        XCTAssertTrue(info.output.hasPrefix("\(avif)\tAVIF\t60x40\t1\t"), info.output)
        XCTAssertTrue(try run(["decode", avif]).output.hasPrefix("\(avif)\tAVIF\t60x40\t1"))
        XCTAssertEqual(try run(["thumbnail", avif, "--size", "15"]).output, "\(avif)\tAVIF\t15x10\n")
    }

    func testTransformChainsOperationsInTheOrderGiven() throws {
        let rgba = Pixels.pattern(width: 120, height: 80, alpha: true)
        let png = PNGWriter(width: 120, height: 80, colorType: .rgba, bitDepth: 8, samples: rgba.map(UInt16.init)).encode()
        let input = try temporaryFile("in.png", png)
        let output = (input as NSString).deletingLastPathComponent + "/out.png"
        let made = try run(["transform", input, "-o", output, "--resize", "60x0", "--blur=1.5", "--round", "8,2,#ff0000",
                            "--grayscale", "--rotate", "10,crop,#00ff00", "--crop", "4,4,40x30"])
        XCTAssertEqual(made.status, 0)
        let pipeline = PipelineTransformer([
            ResizingTransformer(size: PixelSize(width: 60, height: 0)), BlurTransformer(sigma: 1.5),
            RoundCornerTransformer(radius: 8, borderWidth: 2, borderColor: RGBColor(red: 255, green: 0, blue: 0)),
            GrayscaleTransformer(), RotationTransformer(angle: 10, fitSize: false, background: .color(RGBColor(hex: "00ff00")!)),
            CroppingTransformer(rect: PixelRect(x: 4, y: 4, width: 40, height: 30)),
        ])
        XCTAssertEqual(made.output, "\(input)\t\(pipeline.key)\t40x30\t\(output)\n")
        // The same pixels as the library's pipeline (through the PNG: straight alpha, so compare
        // what a PNG round trip of the library's result gives).
        let expected = try pipeline.transform(ImageDecoder().decode(Data(png)))
        let roundTrip = try ImageDecoder().decode(ImageEncoder.encode(expected, as: .png()))
        let written = try ImageDecoder().decode(Data(contentsOf: URL(fileURLWithPath: output)))
        XCTAssertEqual(written.packedPixels(), roundTrip.packedPixels())
        // The order matters: grayscale then tint is not tint then grayscale.
        let a = try run(["transform", input, "-o", output, "--grayscale", "--tint", "#00ff00,0.5"])
        let b = try run(["transform", input, "-o", output, "--tint", "#00ff00,0.5", "--grayscale"])
        XCTAssertTrue(a.output.contains("\tgrayscale|tint(#00ff0080)\t"), a.output)
        XCTAssertTrue(b.output.contains("\ttint(#00ff0080)|grayscale\t"), b.output)
        // Padding, an extension to an aspect ratio, then a trim that cuts the padding off again.
        let padded = try run(["transform", input, "-o", output, "--pad", "1,2,3,4,#ffffff", "--extend", "1,north",
                              "--trim", "0"])
        let padding = PipelineTransformer([
            PaddingTransformer(top: 1, right: 2, bottom: 3, left: 4, background: .color(.white)),
            PaddingTransformer(aspectRatio: 1, gravity: .north, background: .transparent), TrimTransformer(threshold: 0),
        ])
        // The trim's background is the top-left pixel (white padding): it cuts the top row only,
        // as the transparent canvas below spans the width.
        let trimmed = try padding.transform(ImageDecoder().decode(Data(png)))
        XCTAssertEqual([trimmed.width, trimmed.height], [126, 125])
        XCTAssertEqual(padded.output, "\(input)\t\(padding.key)\t126x125\t\(output)\n")
        // Gravity: a smart fill, then a window at a compass point.
        let placed = try run(["transform", input, "-o", output, "--resize", "50x50,fill,smart", "--crop", "20x10,northeast"])
        let placing = PipelineTransformer([
            ResizingTransformer(size: PixelSize(width: 50, height: 50), mode: .fill, gravity: .smart),
            CroppingTransformer(size: PixelSize(width: 20, height: 10), gravity: .northEast),
        ])
        XCTAssertEqual(placed.output, "\(input)\t\(placing.key)\t20x10\t\(output)\n")
        XCTAssertEqual(try ImageDecoder().decode(Data(contentsOf: URL(fileURLWithPath: output))).packedPixels(),
                       try ImageDecoder().decode(ImageEncoder.encode(placing.transform(ImageDecoder().decode(Data(png))),
                                                                     as: .png())).packedPixels())
        // A watermark from a file, keyed by its name; a focal point's comma stays in its field.
        let markPixels = Pixels.pattern(width: 20, height: 10, alpha: true)
        let mark = try temporaryFile("mark(1).png", PNGWriter(width: 20, height: 10, colorType: .rgba, bitDepth: 8,
                                                              samples: markPixels.map(UInt16.init)).encode())
        let marked = try run(["transform", input, "-o", output, "--overlay", "\(mark),focus(0.25,0.5),2,3,0.5,0.5"])
        XCTAssertEqual(marked.status, 0)
        let overlay = OverlayTransformer(mark: try ImageDecoder().decode(Data(contentsOf: URL(fileURLWithPath: mark))),
                                         markKey: "mark_1_.png", gravity: .focalPoint(x: 0.25, y: 0.5), offset: (2, 3),
                                         opacity: 0.5, scale: 0.5)
        XCTAssertEqual(marked.output, "\(input)\t\(overlay.key)\t120x80\t\(output)\n")
        let overlaid = try ImageDecoder().decode(ImageEncoder.encode(overlay.transform(ImageDecoder().decode(Data(png))),
                                                                     as: .png()))
        XCTAssertEqual(try ImageDecoder().decode(Data(contentsOf: URL(fileURLWithPath: output))).packedPixels(),
                       overlaid.packedPixels())
        // Bad operations and values fail with a message, and write nothing new.
        for bad in [["--blur"], ["--blur", "x"], ["--swirl", "3"], ["--grayscale=1"], ["--crop", "1,2"], [],
                    ["--rotate", "45,tilt"], ["--rotate", "45,fit,#red"], ["--tint", "#12345"], ["--overlay", "\(mark),smart"],
                    ["--overlay", "\(mark),north,1"], ["--overlay", "/nonexistent.png"],
                    ["--resize", "9x9,fit,north"], ["--crop", "9x9,up"], ["--pad", "1,2,3"],
                    ["--extend", "1,north,blue"], ["--trim", "10,white"]] {
            XCTAssertNotEqual(try run(["transform", input, "-o", output] + bad).status, 0, "\(bad)")
        }
        let failing = try run(["transform", input, "-o", output, "--crop", "100,0,40x30"])
        XCTAssertEqual(failing.status, 1, "a rectangle outside the image fails at run time")
    }

    func testThumbnailWritesAnimationsWithAllFrames() throws {
        let frames = (0..<4).map { Pixels.pattern(width: 60, height: 40, seed: $0 * 30) }
        let animation = try Image(width: 60, height: 40, frames: frames, delaysMilliseconds: [50, 60, 70, 80],
                                  loopCount: 2, premultiplied: false)
        let input = try temporaryFile("in.gif", [UInt8](try ImageEncoder.encode(animation, as: .gif())))
        let dir = (input as NSString).deletingLastPathComponent
        for name in ["out.gif", "out.webp"] {
            let output = dir + "/" + name
            let made = try run(["thumbnail", input, "--size", "30", "--all-frames", "-o", output])
            XCTAssertEqual(made.output, "\(input)\tGIF\t30x20\t\(output)\t4 frames\n", name)
            let data = try Data(contentsOf: URL(fileURLWithPath: output))
            let written = try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(data)
            XCTAssertEqual([written.width, written.height, written.frameCount, written.loopCount], [30, 20, 4, 2], name)
            XCTAssertEqual(written.frameDelays, [50, 60, 70, 80], name)
        }
        // Without --all-frames, the first frame alone; --max-file-size keeps the file in its budget.
        let still = dir + "/still.webp"
        let made = try run(["thumbnail", input, "--size", "30", "-o", still, "--max-file-size", "400"])
        XCTAssertEqual(made.output, "\(input)\tGIF\t30x20\t\(still)\n")
        let data = try Data(contentsOf: URL(fileURLWithPath: still))
        XCTAssertLessThanOrEqual(data.count, 400)
        XCTAssertEqual(try ImageDecoder(options: DecodeOptions(firstFrameOnly: false)).decode(data).frameCount, 1)
        XCTAssertNotEqual(try run(["thumbnail", input, "--size", "30", "-o", still, "--max-file-size", "0"]).status, 0)
    }

    /// The defaults the help shows are the library's, so the two cannot drift apart.
    func testHelpShowsTheLibrarysDefaults() throws {
        // Help text wraps at the terminal width: compare with runs of white space made one space.
        func help(_ command: String) throws -> String {
            let result = try run([command, "--help"])
            XCTAssertEqual(result.status, 0, result.output)
            return result.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        let limits = DecodeLimits()
        let decode = try help("decode")
        XCTAssertTrue(decode.contains("Largest image in pixels (default \(limits.maxPixels))."), decode)
        XCTAssertTrue(decode.contains("in bytes (default \(limits.maxMemoryBytes))."), decode)
        var jpeg = -1, webp = -1, avif = -1
        if case .jpeg(let quality, _, _) = EncodeFormat.jpeg() { jpeg = quality }
        if case .webp(let quality) = EncodeFormat.webp() { webp = quality }
        if case .avif(let quality, _, _) = EncodeFormat.avif() { avif = quality }
        let thumbnail = try help("thumbnail")
        XCTAssertTrue(thumbnail.contains("JPEG, WebP or AVIF quality (default \(jpeg) / \(webp) / \(avif))."), thumbnail)
        XCTAssertTrue(thumbnail.contains("Largest source image in pixels (default \(limits.maxPixels))."), thumbnail)
        let fetch = try help("fetch")
        XCTAssertTrue(fetch.contains("Most loads in flight at once. (default: \(DownloaderConfiguration().maxConcurrentDownloads))"), fetch)
        XCTAssertTrue(fetch.contains("Cache directory (default \(ImageCache.defaultDirectory.path))."), fetch)
    }

    func testFetchLoadsThroughTheCacheTiers() throws {
        let pngs = [[40, 30], [20, 40]].map { size in
            PNGWriter(width: size[0], height: size[1], colorType: .rgba, bitDepth: 8,
                      samples: Pixels.pattern(width: size[0], height: size[1]).map(UInt16.init)).encode()
        }
        let nginx = try NginxServer(files: ["a.png": pngs[0], "b.png": pngs[1]])
        defer { nginx.stop() }
        let cache = (try temporaryFile("placeholder", []) as NSString).deletingLastPathComponent + "/cache"
        let a = nginx.url("/a.png").absoluteString, b = nginx.url("/b.png").absoluteString
        let missing = nginx.url("/missing.png").absoluteString

        // Loopback is refused unless allowed, as in the library; private networks do not include it.
        let refused = try run(["fetch", "--cache", cache, "--allow-private-networks", a])
        XCTAssertEqual(refused.status, 1, refused.output)
        let sentence = "destination 127.0.0.1 is loopback, which the policy does not allow"
        XCTAssertTrue(refused.output.contains("\(a)\terror\t\(sentence)"), refused.output)

        let cold = try run(["fetch", "--cache", cache, "--size", "16", "--concurrency", "2", "--allow-loopback",
                            a, b, missing])
        XCTAssertEqual(cold.status, 1, cold.output)
        let lines = cold.output.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(a)\tnetwork\t16x12\t") }, cold.output)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(b)\tnetwork\t8x16\t") }, cold.output)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(missing)\terror\t") && $0.contains("404") }, cold.output)
        XCTAssertTrue(lines.contains { $0.hasPrefix("2 of 3 loaded, 1 failed in ") && $0.hasSuffix(" s") }, cold.output)
        XCTAssertTrue(lines.contains("hits: memory 0, disk 0, network 2"), cold.output)
        XCTAssertTrue(lines.contains("downloaded \(pngs[0].count + pngs[1].count) bytes"), cold.output)
        XCTAssertTrue(lines.contains { $0.hasPrefix("latency p50 ") && $0.contains(" ms, p99 ") }, cold.output)

        let warm = try run(["fetch", "--cache", cache, "--size", "16", "--allow-loopback", a, b])
        XCTAssertEqual(warm.status, 0, warm.output)
        XCTAssertTrue(warm.output.contains("\(a)\tdisk\t16x12\t"), warm.output)
        XCTAssertTrue(warm.output.contains("hits: memory 0, disk 2, network 0\ndownloaded 0 bytes\n"), warm.output)

        let refreshed = try run(["fetch", "--cache", cache, "--size", "16", "--refresh", "--allow-loopback", a, b])
        XCTAssertEqual(refreshed.status, 0, refreshed.output)
        XCTAssertTrue(refreshed.output.contains("hits: memory 0, disk 2, network 0\ndownloaded 0 bytes\n"),
                      refreshed.output)
        // nginx logs a request just after answering it.
        var notModified = 0
        for _ in 0..<500 where notModified < 2 {
            notModified = nginx.accessLog().filter { $0.contains("\" 304 ") }.count
            usleep(10_000)
        }
        XCTAssertEqual(notModified, 2, "revalidated, not downloaded")

        XCTAssertNotEqual(try run(["fetch", "--concurrency", "0", a]).status, 0)
    }
}
