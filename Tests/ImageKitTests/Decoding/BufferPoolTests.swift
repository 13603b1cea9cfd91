import Foundation
import ImageKit
import XCTest

/// What a pool keeps, hands out again and gives back, seen through its counters
/// and through the pixels of the images decoded into its buffers.
final class BufferPoolTests: XCTestCase {
    private let width = 1024, height = 512

    /// A grey PNG of `width`×`height`, every sample `value`: its 2 MiB output is pooled.
    private func png(_ value: UInt16) -> [UInt8] {
        PNGWriter(width: width, height: height, colorType: .gray, bitDepth: 8,
                  samples: [UInt16](repeating: value, count: width * height)).encode()
    }

    /// Whether every pixel of `image` is the opaque grey `value`.
    private func isUniform(_ image: Image, _ value: UInt8) -> Bool {
        var expected = [UInt8](repeating: value, count: width * height * 4)
        for i in stride(from: 3, to: expected.count, by: 4) { expected[i] = 255 }
        return image.packedPixels() == expected
    }

    func testAFreedBufferIsReusedForTheNextDecodeOfItsSize() throws {
        let pool = BufferPool(maxIdleBytes: 8 << 20, maxIdleMilliseconds: 60_000)
        let decoder = ImageDecoder(bufferPool: pool)
        XCTAssertEqual(pool.idleBytes, 0)
        do { _ = try decoder.decode(png(9)) }
        XCTAssertEqual(pool.idleBytes, 2 << 20, "the freed output is kept")
        XCTAssertEqual(pool.reuseCount, 0)
        let again = try decoder.decode(png(200))
        XCTAssertEqual(pool.reuseCount, 1)
        XCTAssertEqual(pool.idleBytes, 0, "the kept buffer is in use again")
        XCTAssertTrue(isUniform(again, 200), "the reused buffer holds the new pixels only")
    }

    func testIdleBytesStayWithinTheLimit() throws {
        let pool = BufferPool(maxIdleBytes: 8 << 20, maxIdleMilliseconds: 60_000)
        let decoder = ImageDecoder(bufferPool: pool)
        // Eight 2 MiB images alive at once, then freed: four fit in 8 MiB, the rest are unmapped.
        // (Each `do` ends its images' lifetime; withExtendedLifetime keeps a release build
        // from freeing them before the assertions that need them alive.)
        do {
            let images = try (0..<8).map { _ in try decoder.decode(png(9)) }
            withExtendedLifetime(images) { XCTAssertEqual(pool.reuseCount, 0) }
        }
        XCTAssertEqual(pool.idleBytes, 8 << 20)
        do {
            let images = try (0..<6).map { _ in try decoder.decode(png(9)) }
            withExtendedLifetime(images) {
                XCTAssertEqual(pool.reuseCount, 4, "only the four kept buffers come back")
                XCTAssertEqual(pool.idleBytes, 0)
            }
        }
        XCTAssertEqual(pool.idleBytes, 8 << 20)
        pool.trim()
        XCTAssertEqual(pool.idleBytes, 0)

        // A buffer larger than the whole limit is never kept.
        let tiny = BufferPool(maxIdleBytes: 1 << 20, maxIdleMilliseconds: 60_000)
        do { _ = try ImageDecoder(bufferPool: tiny).decode(png(9)) }
        XCTAssertEqual(tiny.idleBytes, 0)
    }

    func testIdleBuffersExpire() throws {
        let pool = BufferPool(maxIdleBytes: 64 << 20, maxIdleMilliseconds: 0)
        let decoder = ImageDecoder(bufferPool: pool)
        do { _ = try decoder.decode(png(9)) }
        XCTAssertEqual(pool.idleBytes, 2 << 20, "kept until the pool is next used")
        usleep(5_000)
        let image = try decoder.decode(png(9))
        XCTAssertEqual(pool.reuseCount, 0, "the expired buffer is not handed out")
        XCTAssertEqual(pool.idleBytes, 0, "the expired buffer is gone")
        XCTAssertTrue(isUniform(image, 9))
    }

    func testSmallImagesAreNotPooled() throws {
        let pool = BufferPool(maxIdleBytes: 64 << 20, maxIdleMilliseconds: 60_000)
        let decoder = ImageDecoder(bufferPool: pool)
        let small = PNGWriter(width: 8, height: 8, colorType: .gray, bitDepth: 8,
                              samples: [UInt16](repeating: 1, count: 64)).encode()
        for _ in 0..<2 {
            let image = try decoder.decode(small)
            XCTAssertEqual(image.packedPixels()[0..<4], [1, 1, 1, 255])
        }
        XCTAssertEqual(pool.idleBytes, 0)
        XCTAssertEqual(pool.reuseCount, 0)
    }

    func testImagesOutliveTheirPool() throws {
        var pool: BufferPool? = BufferPool(maxIdleBytes: 8 << 20, maxIdleMilliseconds: 60_000)
        weak let released = pool
        var image: Image? = try ImageDecoder(bufferPool: pool).decode(png(9))
        pool = nil
        XCTAssertNil(released, "the image does not keep the Swift pool alive")
        XCTAssertTrue(isUniform(try XCTUnwrap(image), 9), "its pixels stay valid")
        // Its buffer goes back to the C pool the image still holds, which then frees itself
        // (`make sanitize` reports a use after free or a leak here if it goes wrong).
        image = nil
    }

    func testDecodersUseTheSharedPoolUnlessToldOtherwise() throws {
        XCTAssertEqual(ImageDecoder().bufferPool, BufferPool.shared)
        let decoder = ImageDecoder(bufferPool: nil)
        XCTAssertNil(decoder.bufferPool)
        // Without a pool, each large buffer is mapped afresh and unmapped when freed.
        for value: UInt16 in [9, 200] {
            XCTAssertTrue(isUniform(try decoder.decode(png(value)), UInt8(value)))
        }
    }
}
