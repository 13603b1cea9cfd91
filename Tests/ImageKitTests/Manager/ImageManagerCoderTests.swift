import Foundation
@testable import ImageKit
import ImageKitTestSupport
import XCTest

/// The manager decoding and encoding through coders: its own ``ImageCodersManager``, a
/// context's coder, failing and cancelled coders. Images come from `file:` URLs.
final class ImageManagerCoderTests: XCTestCase {
    private let dir = TemporaryDirectory("imagekit-coders")

    private func manager(coders: (any ImageCoding)? = nil, observer: EventRecorder? = nil,
                         helperThreadWhenIdle: Bool = true) throws -> ImageManager {
        var configuration = ImageManagerConfiguration()
        configuration.allowsLocalFiles = true
        configuration.decodeThreads = 2
        configuration.decodeHelperThreadWhenIdle = helperThreadWhenIdle
        configuration.observers = observer.map { [$0] } ?? []
        let cache = try ImageCache(namespace: "coders", directory: dir.url.appendingPathComponent("cache"),
                                   disk: DiskCacheConfiguration(sweepInterval: nil))
        let m = ImageManager(cache: cache, downloader: try Downloader(), coders: coders, configuration: configuration)
        let heldManager = ManagerShutdown(m)
        addTeardownBlock { await heldManager.run() }
        return m
    }

    private func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = dir.url.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    private func toyFile(_ name: String) throws -> (URL, [UInt8]) {
        let straight = TestPixels.rgba(width: 6, height: 3, opaque: false)
        return (try file(name, ToyFile.bytes(width: 6, height: 3, straightRGBA: straight)), Pixels.premultiplied(straight))
    }

    func testTheDefaultCodersAreTheBuiltInCoderOverTheConfigurationsPool() throws {
        let m = try manager()
        let coders = try XCTUnwrap(m.coders as? ImageCodersManager)
        XCTAssertEqual(coders.coders.count, 1)
        let builtIn = try XCTUnwrap(coders.coders.first as? BuiltInImageCoder)
        XCTAssertTrue(builtIn.bufferPool === m.configuration.bufferPool)
    }

    func testUndecodableBytesFailAsBeforeWithTheDefaultCoders() async throws {
        let m = try manager()
        let bytes = Array("TOY1 but nobody reads it".utf8)
        let url = try file("unknown.bin", bytes)
        var expected: ImageKitError?
        XCTAssertThrowsError(try ImageDecoder().decode(bytes)) { expected = $0 as? ImageKitError }
        let error = await ManagerTesting.error(m, url)
        XCTAssertEqual(error, expected)
        XCTAssertEqual(error?.code, ImageKitError.unknownFormat("").code)
    }

    func testTheManagersCodersDecodeAToyFormatEndToEnd() async throws {
        let coders = ImageCodersManager()
        coders.add(ToyCoder())
        let recorder = EventRecorder()
        let m = try manager(coders: coders, observer: recorder)
        let (url, expected) = try toyFile("a.toy")
        let first = try await ManagerTesting.image(m, url, options: .waitStoreCache)
        XCTAssertEqual(first.source, .loader)
        XCTAssertEqual(first.image.packedPixels(), expected)
        XCTAssertTrue(recorder.events.all.contains { if case .decoded = $0 { true } else { false } },
                      "the decode is reported as before")
        let again = try await ManagerTesting.image(m, url)
        XCTAssertEqual(again.source, .memory)
        XCTAssertTrue(again.image === first.image)

        let png = try file("b.png", ManagerFixture.png(width: 30, height: 20))
        let builtIn = try await ManagerTesting.image(m, png)
        XCTAssertEqual(builtIn.image.sourceFormat, .png, "the built-in formats still decode")
    }

    func testAContextsCoderOverridesTheManagers() async throws {
        let m = try manager()
        let (url, expected) = try toyFile("context.toy")
        let refused = await ManagerTesting.error(m, url, options: .fromLoaderOnly)
        XCTAssertEqual(refused?.code, ImageKitError.unknownFormat("").code, "the manager's coders do not read TOY1")

        let viaContext = try await ManagerTesting.image(m, url, options: [.fromLoaderOnly, .retryFailed],
                                                        context: ImageContext(coder: ToyCoder()))
        XCTAssertEqual(viaContext.image.packedPixels(), expected)

        let png = try file("context.png", ManagerFixture.png(width: 8, height: 8))
        let stub = StubCoder("\u{0}", red: 7)
        let stubbed = ImageCodersManager(coders: [StubCoder(bytes: [0x89, 0x50, 0x4E, 0x47], red: 7), stub])
        let overridden = try await ManagerTesting.image(m, png, options: .fromLoaderOnly,
                                                        context: ImageContext(coder: stubbed))
        XCTAssertEqual(overridden.image.packedPixels(), [7, 0, 0, 255], "even for a built-in format")
    }

    func testLoadsWithDifferentCodersDoNotShareADecode() async throws {
        let m = try manager()
        let url = try file("shared.bin", Array("any bytes".utf8))
        let gated = GatedCoder(red: 1)
        let options: ImageOptions = .fromLoaderOnly
        let first = ManagerTesting.start(m, url, options: options, context: ImageContext(coder: gated))
        await DownloadTesting.waitUntil("the gated decode started") { gated.decodes == 1 }
        let joined = ManagerTesting.start(m, url, options: options, context: ImageContext(coder: gated))

        let other = try await ManagerTesting.image(m, url, options: options,
                                                   context: ImageContext(coder: StubCoder("any", red: 2)))
        XCTAssertEqual(other.image.packedPixels(), [2, 0, 0, 255], "decoded by its own coder while the first waits")
        gated.open()
        await DownloadTesting.waitUntil("both gated loads completed") {
            first.completions.all.count == 1 && joined.completions.all.count == 1
        }
        for completions in [first.completions.all, joined.completions.all] {
            XCTAssertEqual(try completions.first?.get().image.packedPixels(), [1, 0, 0, 255])
        }
        XCTAssertEqual(gated.decodes, 1, "loads with the same coder share one decode")
    }

    func testALoneDecodeIsOfferedAHelperThreadUnlessTheConfigurationSaysNo() async throws {
        for allowed in [true, false] {
            let m = try manager(helperThreadWhenIdle: allowed)
            let url = try file("lone-\(allowed).bin", Array("any bytes".utf8))
            let gated = GatedCoder(red: 1)
            gated.open()
            _ = try await ManagerTesting.image(m, url, options: .fromLoaderOnly, context: ImageContext(coder: gated))
            XCTAssertEqual(gated.helperThreads, [allowed])
        }
    }

    func testADecodeStartingBesideAnotherIsNotOfferedAHelperThread() async throws {
        let m = try manager()
        let gated = GatedCoder(red: 1)
        let context = ImageContext(coder: gated)
        let first = ManagerTesting.start(m, try file("first.bin", Array("one".utf8)), options: .fromLoaderOnly,
                                         context: context)
        await DownloadTesting.waitUntil("the first decode started") { gated.decodes == 1 }
        let second = ManagerTesting.start(m, try file("second.bin", Array("two".utf8)), options: .fromLoaderOnly,
                                          context: context)
        await DownloadTesting.waitUntil("the second decode started") { gated.decodes == 2 }
        // The first decode's helper (had it one that repeats work) gives way while both run.
        XCTAssertTrue(m.workers.helperYield.isRaised, "the helper-yield signal is up while two decodes run")
        gated.open()
        await DownloadTesting.waitUntil("both loads completed") {
            first.completions.all.count == 1 && second.completions.all.count == 1
        }
        XCTAssertEqual(gated.helperThreads, [true, false], "the first ran alone; the second beside it")
        XCTAssertEqual(gated.yieldAtStart, [false, true], "each decode carries the pool's signal, up for the second")
        await DownloadTesting.waitUntil("the helper-yield signal is lowered once the decodes end") {
            !m.workers.helperYield.isRaised
        }
    }

    func testAThrowingCoderFailsTheLoadWithItsError() async throws {
        let recorder = EventRecorder()
        let m = try manager(observer: recorder)
        let url = try file("throws.toy", Array("TOY".utf8))
        let corrupt = await ManagerTesting.error(m, url, options: .fromLoaderOnly, context: ImageContext(
            coder: StubCoder("TOY", error: ImageKitError.corrupt("TOY: bad header"))))
        XCTAssertEqual(corrupt, .corrupt("TOY: bad header"))
        XCTAssertTrue(recorder.events.all.contains { if case .decodeFailed = $0 { true } else { false } })

        struct ToyFailure: Error, CustomStringConvertible {
            var description: String { "toy failure 42" }
        }
        let other = await ManagerTesting.error(m, url, options: [.fromLoaderOnly, .retryFailed],
                                               context: ImageContext(coder: StubCoder("TOY", error: ToyFailure())))
        XCTAssertEqual(other?.code, ImageKitError.internal("").code, "a foreign error is wrapped")
        XCTAssertEqual(other?.message, "toy failure 42")
    }

    func testCancellingTheLoadReachesACustomCodersDecode() async throws {
        let m = try manager()
        let coder = WaitingCoder()
        let url = try file("slow.toy", Array("TOY1".utf8))
        let (task, completions) = ManagerTesting.start(m, url, options: .fromLoaderOnly,
                                                       context: ImageContext(coder: coder))
        await DownloadTesting.waitUntil("the coder's decode started") { coder.started }
        task.cancel()
        await DownloadTesting.waitUntil("the coder's decode ended") { coder.finished }
        XCTAssertTrue(coder.sawCancellation, "the decode saw its cancellation")
        await ManagerTesting.assertIdle(m)
        await ManagerTesting.drain(m.configuration.callbackQueue)
        XCTAssertTrue(completions.all.isEmpty, "a cancelled load does not complete")
    }

    func testEncodedImagesAreEncodedByTheCoder() async throws {
        let m = try manager()
        let url = try file("encode.png", ManagerFixture.png(width: 16, height: 12))
        let coder = ImageCodersManager()
        let pngEncoder = StubCoder("\u{0}", encodes: [.png])
        coder.add(pngEncoder)
        let result = try await m.encodedImage(for: url, as: .fixed(.png()), options: .fromLoaderOnly,
                                              context: ImageContext(coder: coder))
        XCTAssertEqual(pngEncoder.log, ["encode PNG"], "decoded by the built-in coder, encoded by the stub")
        let decoded = try ImageDecoder().decode(Data(contentsOf: url))
        XCTAssertEqual(result.encoded, try BuiltInImageCoder().encode(decoded, as: .png(compressionLevel: 0)))
        XCTAssertNotEqual(result.encoded.data, try ImageEncoder.encode(decoded, as: .png()))

        let failing = StubCoder("\u{0}", error: ImageKitError.encodeFailed("stub: no"), encodes: [.webp])
        do {
            _ = try await m.encodedImage(for: url, as: .fixed(.webp()), options: .fromLoaderOnly,
                                         context: ImageContext(coder: ImageCodersManager(coders: [failing,
                                                                                                  BuiltInImageCoder()])))
            XCTFail("the coder's encode failure fails the load")
        } catch {
            XCTAssertEqual(error, .encodeFailed("stub: no"))
        }
    }
}
