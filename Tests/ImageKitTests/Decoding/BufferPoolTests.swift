import ImageKit
import XCTest

final class BufferPoolTests: XCTestCase {
    /// A PNG big enough (1024×512 RGBA = 2 MiB) for its output to be pooled.
    private let png = PNGWriter(width: 1024, height: 512, colorType: .gray, bitDepth: 8,
                                samples: [UInt16](repeating: 9, count: 1024 * 512)).encode()

    func testFreedBuffersAreReusedAndBounded() throws {
        let pool = BufferPool(maxIdleBytes: 8 << 20, maxIdleMilliseconds: 60_000)
        let decoder = ImageDecoder(bufferPool: pool)
        XCTAssertEqual(pool.idleBytes, 0)
        do { _ = try decoder.decode(png) }
        XCTAssertEqual(pool.idleBytes, 2 << 20, "the freed output is kept")
        let again = try decoder.decode(png)
        XCTAssertEqual(pool.reuseCount, 1)
        XCTAssertEqual(pool.idleBytes, 0)
        XCTAssertEqual(again.packedPixels()[0..<4], [9, 9, 9, 255], "a reused buffer holds the new pixels")
        // Eight images alive at once, then freed: only 8 MiB may stay idle.
        var images = try (0..<8).map { _ in try decoder.decode(png) }
        XCTAssertEqual(images.count, 8)
        images.removeAll()
        XCTAssertLessThanOrEqual(pool.idleBytes, 8 << 20)
        XCTAssertGreaterThan(pool.idleBytes, 0)
        pool.trim()
        XCTAssertEqual(pool.idleBytes, 0)
    }

    func testIdleBuffersExpireAndSmallImagesAreNotPooled() throws {
        let pool = BufferPool(maxIdleBytes: 64 << 20, maxIdleMilliseconds: 0)
        let decoder = ImageDecoder(bufferPool: pool)
        do { _ = try decoder.decode(png) }
        usleep(5_000)
        let small = PNGWriter(width: 8, height: 8, colorType: .gray, bitDepth: 8, samples: [UInt16](repeating: 1, count: 64))
        do { _ = try decoder.decode(png) } // expires the first buffer on the way in
        XCTAssertEqual(pool.reuseCount, 0)
        do { _ = try decoder.decode(small.encode()) }
        XCTAssertLessThanOrEqual(pool.idleBytes, 2 << 20)
    }

    func testImagesOutliveTheirPool() throws {
        var pool: BufferPool? = BufferPool(maxIdleBytes: 8 << 20, maxIdleMilliseconds: 60_000)
        let image = try ImageDecoder(bufferPool: pool).decode(png)
        pool = nil
        XCTAssertEqual(image.packedPixels().count, 1024 * 512 * 4)
        XCTAssertNil(pool)
    }

    func testNoPoolAllocatesFresh() throws {
        let image = try ImageDecoder(bufferPool: nil).decode(png)
        XCTAssertEqual(image.width, 1024)
    }
}
