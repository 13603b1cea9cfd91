import Foundation
import ImageKit
import ImageKitServer
import InMemoryTracing
import Tracing
import XCTest

/// ``ImageKitTracing`` against swift-distributed-tracing's in-memory tracer: a span per load,
/// under the caller's span, with a child per stage.
final class ImageKitTracingTests: ServerTestCase {
    private func tracedManager(_ tracer: InMemoryTracer) throws -> ImageManager {
        try makeManager { $0.loadObserverFactories = [ImageKitTracing(tracer: tracer)] }
    }

    private func spans(_ tracer: InMemoryTracer, named name: String) -> [FinishedInMemorySpan] {
        tracer.finishedSpans.filter { $0.operationName == name }
    }

    private func children(_ tracer: InMemoryTracer, of parent: FinishedInMemorySpan) -> [FinishedInMemorySpan] {
        tracer.finishedSpans.filter { $0.parentSpanID == parent.spanID }
    }

    func testALoadIsASpanUnderTheCallersWithAChildPerStage() async throws {
        let o = try origin
        let tracer = InMemoryTracer()
        let m = try tracedManager(tracer)
        let url = o.nginx.url("/photo.png")
        try await tracer.withSpan("GET /thumb") { _ in
            _ = try await m.image(for: url)
        }
        await settle(m)
        let request = try XCTUnwrap(spans(tracer, named: "GET /thumb").first)
        let load = try XCTUnwrap(spans(tracer, named: "imagekit.load").first)
        XCTAssertEqual(load.parentSpanID, request.spanID, "under the caller's span")
        XCTAssertEqual(load.traceID, request.traceID)
        XCTAssertEqual(load.attributes.get("url.full"), .string(url.absoluteString))
        XCTAssertEqual(load.attributes.get("imagekit.result"), .string("success"))
        XCTAssertEqual(load.attributes.get("imagekit.cache.tier"), .string("network"))
        XCTAssertNil(load.status)

        let stages = children(tracer, of: load)
            .sorted { $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch }
        XCTAssertEqual(stages.map(\.operationName),
                       ["imagekit.cache.query", "imagekit.cache.query", "imagekit.cache.query", "imagekit.download",
                        "imagekit.decode", "imagekit.store"])
        XCTAssertEqual(stages.prefix(3).map { $0.attributes.get("imagekit.cache.tier") },
                       [.string("memory"), .string("disk"), .string("original")])
        XCTAssertTrue(stages.prefix(3).allSatisfy { $0.attributes.get("imagekit.cache.hit") == .bool(false) })
        let download = stages[3]
        XCTAssertEqual(download.kind, .client)
        XCTAssertEqual(download.attributes.get("http.response.status_code"), .int64(200))
        XCTAssertEqual(download.attributes.get("imagekit.download.bytes"), .int64(Int64(o.photo.count)))
        XCTAssertEqual(stages[4].attributes.get("imagekit.image.width"), .int64(40))
        XCTAssertEqual(stages[4].attributes.get("imagekit.image.height"), .int64(30))
        XCTAssertEqual(stages[5].attributes.get("imagekit.cache.tier"), .string("memory"),
                       "the disk write the load did not wait for is in no trace")
        // Every stage lies within the load (and starts no earlier than a millisecond before it:
        // stage spans are placed from the durations they report).
        for stage in stages {
            XCTAssertEqual(stage.traceID, load.traceID)
            XCTAssertLessThanOrEqual(stage.startInstant.nanosecondsSinceEpoch, stage.endInstant.nanosecondsSinceEpoch)
            XCTAssertGreaterThanOrEqual(stage.startInstant.nanosecondsSinceEpoch + 1_000_000,
                                        load.startInstant.nanosecondsSinceEpoch, stage.operationName)
            XCTAssertLessThanOrEqual(stage.endInstant.nanosecondsSinceEpoch, load.endInstant.nanosecondsSinceEpoch,
                                     stage.operationName)
        }
    }

    func testATransformedVariantHasTransformAndEncodeSpansAfterTheDecode() async throws {
        let o = try origin
        let tracer = InMemoryTracer()
        let m = try tracedManager(tracer)
        let context = ImageContext(imageTransformer: RotationTransformer(quarterTurns: 1))
        let result = try await tracer.withSpan("GET /rotated") { _ in
            try await m.encodedImage(for: o.nginx.url("/photo.png"), as: .fixed(.png()), context: context)
        }
        await settle(m)
        let load = try XCTUnwrap(spans(tracer, named: "imagekit.load").first)
        XCTAssertEqual(load.attributes.get("imagekit.result"), .string("success"))
        let stages = children(tracer, of: load)
        func stage(_ name: String) throws -> FinishedInMemorySpan {
            try XCTUnwrap(stages.first { $0.operationName == name }, "\(stages.map(\.operationName))")
        }
        let decode = try stage("imagekit.decode"), transform = try stage("imagekit.transform")
        let encode = try stage("imagekit.encode")
        XCTAssertEqual(transform.attributes.get("imagekit.transformer"), .string("rotate(90)"))
        XCTAssertNil(transform.status)
        XCTAssertEqual(encode.attributes.get("imagekit.image.format"), .string("png"))
        XCTAssertEqual(encode.attributes.get("imagekit.encoded.bytes"), .int64(Int64(result.encoded.data.count)))
        XCTAssertNil(encode.status)
        XCTAssertLessThanOrEqual(decode.endInstant.nanosecondsSinceEpoch, transform.endInstant.nanosecondsSinceEpoch)
        XCTAssertLessThanOrEqual(transform.endInstant.nanosecondsSinceEpoch, encode.endInstant.nanosecondsSinceEpoch)
        XCTAssertEqual(stages.filter { $0.operationName == "imagekit.transform" }.count, 1)
        XCTAssertEqual(stages.filter { $0.operationName == "imagekit.encode" }.count, 1)
    }

    func testAMemoryHitIsALoadWithOneLookup() async throws {
        let o = try origin
        let tracer = InMemoryTracer()
        let m = try tracedManager(tracer)
        let url = o.nginx.url("/other.png")
        _ = try await m.image(for: url)
        await settle(m)
        tracer.clearFinishedSpans()
        _ = try await m.image(for: url)  // no span around it: the load's span is a root
        let load = try XCTUnwrap(spans(tracer, named: "imagekit.load").first)
        XCTAssertNil(load.parentSpanID)
        XCTAssertEqual(load.attributes.get("imagekit.cache.tier"), .string("memory"))
        let lookups = children(tracer, of: load)
        XCTAssertEqual(lookups.map(\.operationName), ["imagekit.cache.query"])
        XCTAssertEqual(lookups.first?.attributes.get("imagekit.cache.hit"), .bool(true))
        XCTAssertEqual(lookups.first?.attributes.get("imagekit.cache.key"), .string(url.absoluteString))
        XCTAssertEqual(tracer.activeSpans.count, 0)
    }

    func testAFailedLoadRecordsItsErrorOnTheLoadAndTheStage() async throws {
        let o = try origin
        let tracer = InMemoryTracer()
        let m = try tracedManager(tracer)
        _ = await loadError(m, o.nginx.url("/missing.png"))
        await settle(m)
        let load = try XCTUnwrap(spans(tracer, named: "imagekit.load").first)
        XCTAssertEqual(load.status?.code, .error)
        XCTAssertEqual(load.attributes.get("imagekit.result"), .string("failure"))
        XCTAssertEqual(load.attributes.get("imagekit.error"), .string("http_status"))
        XCTAssertEqual(load.errors.count, 1)
        guard (load.errors.first?.error as? ImageKitError)?.httpStatus == 404 else {
            return XCTFail("\(load.errors)")
        }
        let download = try XCTUnwrap(children(tracer, of: load).first { $0.operationName == "imagekit.download" })
        XCTAssertEqual(download.status?.code, .error)
        XCTAssertEqual(download.attributes.get("http.response.status_code"), .int64(404))
        XCTAssertEqual(download.errors.count, 1)
    }

    func testCoalescedLoadsEachHaveTheSharedStagesInTheirOwnTrace() async throws {
        let o = try origin
        let tracer = InMemoryTracer()
        let m = try tracedManager(tracer)
        let k = unique("shared")
        let url = o.script.url("/gate_png?key=\(k)")
        let first = Task { try await tracer.withSpan("first") { _ in _ = try await m.image(for: url) } }
        await waitUntil("the request reached the server") { try o.script.stats(k).count == 1 }
        let second = Task { try await tracer.withSpan("second") { _ in _ = try await m.image(for: url) } }
        await waitUntil("both loads wait") { m.statistics.runningTasks == 2 }
        try o.script.open(k)
        try await first.value
        try await second.value
        await settle(m)
        let loads = spans(tracer, named: "imagekit.load")
        XCTAssertEqual(loads.count, 2)
        XCTAssertNotEqual(loads[0].traceID, loads[1].traceID)
        for load in loads {
            let names = children(tracer, of: load).map(\.operationName)
            XCTAssertEqual(names.filter { $0 == "imagekit.download" }.count, 1, "\(names)")
            XCTAssertEqual(names.filter { $0 == "imagekit.decode" }.count, 1, "\(names)")
        }
    }

    func testNothingIsMadeWithTheNoOpTracer() throws {
        let factory = ImageKitTracing(tracer: NoOpTracer())
        XCTAssertNil(factory.makeObserver(task: 1, url: URL(string: "https://images.example/a.png")))
    }
}
