import CImageCore
import Foundation
import ImageKitTestSupport
import XCTest

/// The disk tier's file format through the C API, in memory: round trips for
/// every filter and shape, and damaged input of every kind.
final class StoreFormatTests: XCTestCase {
    func testXXH64MatchesReferenceValues() {
        // Reference values from the xxhash Python package (the reference C implementation).
        let data = (0..<200).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        let cases: [(Int, UInt64, UInt64)] = [
            (0, 0, 0xEF46_DB37_51D8_E999), (1, 0, 0x1F25_C8D0_BC1F_4BB6), (4, 0, 0x9BB6_4B7D_66EE_9FDA),
            (7, 0, 0x9A7B_1499_59CE_60D8), (8, 0, 0xDAB9_9D95_C6F9_0092), (12, 0, 0xD52E_4078_33AF_5133),
            (31, 0, 0xA2AA_5F33_CC4A_6119), (32, 0, 0x23C3_C17E_F790_FD97), (33, 0, 0x50A7_CFC7_BA58_8784),
            (63, 0, 0x5E3E_54B4_31C7_493C), (64, 0, 0x0EB6_4B3E_F6EE_B01F), (100, 0, 0xA61F_8D4C_170F_E531),
            (200, 0, 0xA6CB_3C09_BC82_9B24), (33, 12345, 0x1EDC_9934_57CF_1FD8), (200, 12345, 0x9011_D9D7_7993_2D3B),
        ]
        for (n, seed, expected) in cases {
            XCTAssertEqual(data.withUnsafeBytes { ic_xxh64($0.baseAddress, n, seed) }, expected, "length \(n) seed \(seed)")
        }
        XCTAssertEqual(Array("abc".utf8).withUnsafeBytes { ic_xxh64($0.baseAddress, 3, 0) }, 0x44BC_2CF5_AD77_0999)
    }

    func testEveryFilterRoundTripsExactlyForAwkwardShapes() {
        let filters: [ic_store_filter] = [IC_STORE_FILTER_NONE, IC_STORE_FILTER_UP, IC_STORE_FILTER_RGB,
                                          IC_STORE_FILTER_RGB_UP]
        // Widths around the 4-pixel vector steps and their tails, padded and unpadded strides.
        for (width, height) in [(1, 1), (2, 3), (5, 4), (6, 2), (7, 7), (16, 5), (17, 9), (63, 3), (256, 8)] {
            for opaque in [true, false] {
                let img = makeCImage(width: width, height: height, seed: UInt64(width), opaque: opaque)
                defer { ic_image_free(img) }
                for filter in filters {
                    for chunk: UInt32 in [0, UInt32(width * 4), UInt32(width * 4 * 3)] {
                        let bytes = encodeEntry(img, filter: filter, chunkBytes: chunk)
                        var (st, record) = decodeEntry(bytes)
                        defer { ic_store_record_free(&record) }
                        XCTAssertEqual(st, IC_OK, "\(width)x\(height) opaque \(opaque) filter \(filter.rawValue)")
                        guard st == IC_OK else { continue }
                        XCTAssertTrue(sameImage(img, record.image), "\(width)x\(height) filter \(filter.rawValue) chunk \(chunk)")
                        let rgb = filter == IC_STORE_FILTER_RGB || filter == IC_STORE_FILTER_RGB_UP
                        if rgb && !opaque {
                            // rgb filters drop alpha, so a transparent image keeps it with the RGBA counterpart.
                            XCTAssertEqual(record.filter, filter == IC_STORE_FILTER_RGB ? IC_STORE_FILTER_NONE : IC_STORE_FILTER_UP)
                        } else {
                            XCTAssertEqual(record.filter, filter)
                        }
                        XCTAssertEqual(record.stored_size, UInt64(bytes.count))
                    }
                }
            }
        }
    }

    func testAutomaticFilterIsRgbForOpaqueAndUpOtherwise() {
        for (opaque, expected) in [(true, IC_STORE_FILTER_RGB), (false, IC_STORE_FILTER_UP)] {
            let img = makeCImage(width: 40, height: 30, opaque: opaque)
            defer { ic_image_free(img) }
            var (st, record) = decodeEntry(encodeEntry(img))
            defer { ic_store_record_free(&record) }
            XCTAssertEqual(st, IC_OK)
            XCTAssertEqual(record.filter, expected)
            XCTAssertTrue(sameImage(img, record.image))
        }
    }

    func testNoiseIsStoredPlainAndFlatColourCompressed() {
        let img = makeCImage(width: 200, height: 100)
        defer { ic_image_free(img) }
        var rng = SplitMix(seed: 3)
        for y in 0..<100 {
            let row = img.pointee.pixels + y * img.pointee.stride
            for x in 0..<200 {
                let v = rng.next()
                row[4 * x] = UInt8(truncatingIfNeeded: v)
                row[4 * x + 1] = UInt8(truncatingIfNeeded: v >> 8)
                row[4 * x + 2] = UInt8(truncatingIfNeeded: v >> 16)
                row[4 * x + 3] = 255
            }
        }
        let noise = encodeEntry(img, filter: IC_STORE_FILTER_NONE)
        XCTAssertGreaterThan(noise.count, 200 * 100 * 4, "noise is kept as it is, not expanded by LZ4")
        XCTAssertLessThan(noise.count, 200 * 100 * 4 + 200)
        var (st, record) = decodeEntry(noise)
        XCTAssertEqual(st, IC_OK)
        XCTAssertTrue(sameImage(img, record.image))
        ic_store_record_free(&record)

        for y in 0..<100 { memset(img.pointee.pixels + y * img.pointee.stride, 0x40, 200 * 4) }
        img.pointee.is_opaque = 0
        let flat = encodeEntry(img)
        XCTAssertLessThan(flat.count, 1000)
        (st, record) = decodeEntry(flat)
        XCTAssertEqual(st, IC_OK)
        XCTAssertTrue(sameImage(img, record.image))
        ic_store_record_free(&record)
    }

    func testMinimumLZ4SavingDecidesWhatIsCompressed() {
        let img = makeCImage(width: 120, height: 90, opaque: false)
        defer { ic_image_free(img) }
        var sizes: [Int] = []
        for saving: Int32 in [0, 12, 100] {
            let bytes = encodeEntry(img) { $0.min_lz4_saving_percent = saving }
            var (st, record) = decodeEntry(bytes)
            XCTAssertEqual(st, IC_OK)
            XCTAssertTrue(sameImage(img, record.image))
            ic_store_record_free(&record)
            sizes.append(bytes.count)
        }
        XCTAssertLessThan(sizes[0], 120 * 90 * 4 * 3 / 4, "this picture compresses well")
        XCTAssertEqual(sizes[0], sizes[1])
        XCTAssertGreaterThan(sizes[2], 120 * 90 * 4, "100 % saving is never reached: every chunk plain")
    }

    func testImageClaimingOpacityFalselyKeepsItsAlpha() {
        let img = makeCImage(width: 33, height: 20, opaque: false)
        defer { ic_image_free(img) }
        img.pointee.is_opaque = 1  // a lie: the rgb filter must notice and fall back
        var (st, record) = decodeEntry(encodeEntry(img))
        defer { ic_store_record_free(&record) }
        XCTAssertEqual(st, IC_OK)
        guard st == IC_OK else { return }
        XCTAssertEqual(record.filter, IC_STORE_FILTER_UP)
        XCTAssertEqual(record.image.pointee.is_opaque, 0, "the stored entry tells the truth")
        img.pointee.is_opaque = 0
        XCTAssertTrue(sameImage(img, record.image))
    }

    func testAnimationKeepsFramesDelaysAndLoopCount() {
        let img = makeCImage(width: 21, height: 13, frames: 5, opaque: false)
        defer { ic_image_free(img) }
        var (st, record) = decodeEntry(encodeEntry(img, chunkBytes: 21 * 4 * 4))
        defer { ic_store_record_free(&record) }
        XCTAssertEqual(st, IC_OK)
        XCTAssertEqual(record.image.pointee.frame_count, 5)
        XCTAssertEqual(record.image.pointee.loop_count, 3)
        XCTAssertEqual(record.image.pointee.frame_delays_ms[4], 80)
        XCTAssertTrue(sameImage(img, record.image))
    }

    func testLargeEntryDecodesIdenticallyWithSeveralThreads() {
        // 6.5 MB of pixels: above IC_STORE_PARALLEL_MIN_BYTES, many chunks.
        let img = makeCImage(width: 1300, height: 1250, seed: 9)
        defer { ic_image_free(img) }
        let bytes = encodeEntry(img)
        for threads: Int32 in [1, 2, 3, 16] {
            var (st, record) = decodeEntry(bytes, threads: threads)
            XCTAssertEqual(st, IC_OK)
            if st == IC_OK { XCTAssertTrue(sameImage(img, record.image), "\(threads) threads") }
            ic_store_record_free(&record)
        }
        // Damage in the last chunk is found whichever thread decodes it.
        var damaged = bytes
        damaged[damaged.count - 200] ^= 0x10
        var (st, record) = decodeEntry(damaged, threads: 4)
        XCTAssertEqual(st, IC_ERR_CORRUPT)
        XCTAssertNil(record.image)
        ic_store_record_free(&record)
    }

    /// Decodes `bytes` split into `threads` parts that `runParts` runs.
    private func decodeInParts(_ bytes: [UInt8], threads: Int32,
                               runParts: ic_store_run_parts_fn?) -> (ic_status, ic_store_record) {
        var options = ic_store_read_options()
        ic_store_read_options_init(&options)
        options.threads = threads
        options.run_parts = runParts
        var record = ic_store_record()
        var err = ic_error()
        let st = bytes.withUnsafeBufferPointer {
            ic_store_decode($0.baseAddress, $0.count, IC_STORE_KIND_BITMAP, "key", 3, &options, &record, &err)
        }
        XCTAssertEqual(err.code, st)
        return (st, record)
    }

    func testSplitReadsRunEveryPartThroughTheCallersRunner() {
        let img = makeCImage(width: 1300, height: 1250, seed: 4)
        defer { ic_image_free(img) }
        let bytes = encodeEntry(img)
        // Parts in reverse order, all on the calling thread.
        var (st, record) = decodeInParts(bytes, threads: 5) { _, count, part, arg in
            for i in (0..<count).reversed() { part!(arg, i) }
        }
        XCTAssertEqual(st, IC_OK)
        if st == IC_OK { XCTAssertTrue(sameImage(img, record.image)) }
        ic_store_record_free(&record)
        // Without a runner the read is not split.
        (st, record) = decodeInParts(bytes, threads: 5, runParts: nil)
        XCTAssertEqual(st, IC_OK)
        if st == IC_OK { XCTAssertTrue(sameImage(img, record.image)) }
        ic_store_record_free(&record)
        // A runner that leaves a part out fails the read rather than return missing rows.
        (st, record) = decodeInParts(bytes, threads: 5) { _, count, part, arg in
            for i in 0..<count - 1 { part!(arg, i) }
        }
        XCTAssertEqual(st, IC_ERR_INTERNAL)
        XCTAssertNil(record.image)
        ic_store_record_free(&record)
    }

    func testDataEntriesAndMetadataRoundTrip() {
        let payload = (0..<1_300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        for data in [[], [7], payload] {
            var options = ic_store_write_options()
            ic_store_write_options_init(&options)
            var entry = ic_store_entry()
            entry.kind = IC_STORE_KIND_DATA
            entry.meta.created_ms = 1_700_000_000_123
            entry.meta.expires_ms = 1_900_000_000_000
            var out: UnsafeMutablePointer<UInt8>?
            var size = 0
            var err = ic_error()
            let etag = "\"abc-123\"", modified = "Wed, 21 Oct 2015 07:28:00 GMT"
            let user: [UInt8] = [0, 1, 2, 255]
            let st = data.withUnsafeBufferPointer { d in
                etag.withCString { e in
                    modified.withCString { m in
                        user.withUnsafeBufferPointer { u in
                            "the-key".withCString { k in
                                entry.key = k
                                entry.key_length = 7
                                entry.data = d.baseAddress
                                entry.data_size = d.count
                                entry.meta.etag = e
                                entry.meta.etag_length = strlen(e)
                                entry.meta.last_modified = m
                                entry.meta.last_modified_length = strlen(m)
                                entry.meta.user_data = u.baseAddress
                                entry.meta.user_data_length = u.count
                                return ic_store_encode(&entry, &options, &out, &size, &err)
                            }
                        }
                    }
                }
            }
            XCTAssertEqual(st, IC_OK)
            let bytes = Array(UnsafeBufferPointer(start: out, count: size))
            free(out)
            var (dst, record) = decodeEntry(bytes, key: "the-key", kind: IC_STORE_KIND_DATA)
            defer { ic_store_record_free(&record) }
            XCTAssertEqual(dst, IC_OK)
            XCTAssertEqual(record.kind, IC_STORE_KIND_DATA)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: record.data, count: record.data_size)), data)
            XCTAssertEqual(record.meta.created_ms, 1_700_000_000_123)
            XCTAssertEqual(record.meta.expires_ms, 1_900_000_000_000)
            XCTAssertEqual(String(decoding: UnsafeRawBufferPointer(start: record.meta.etag, count: record.meta.etag_length), as: UTF8.self), etag)
            XCTAssertEqual(String(decoding: UnsafeRawBufferPointer(start: record.meta.last_modified, count: record.meta.last_modified_length),
                                  as: UTF8.self), modified)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: record.meta.user_data, count: record.meta.user_data_length)), user)
            // The same bytes are not a bitmap entry.
            var (kst, other) = decodeEntry(bytes, key: "the-key", kind: IC_STORE_KIND_BITMAP)
            XCTAssertEqual(kst, IC_ERR_NOT_FOUND)
            ic_store_record_free(&other)
        }
    }

    /// Entries written by format version 1 and committed (Tests/Fixtures/store-seeds, also the
    /// store fuzzer's seeds) must read back in every later build.
    func testCommittedVersion1EntriesStillRead() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/store-seeds")
        func read(_ name: String, _ kind: ic_store_kind) throws -> (ic_status, ic_store_record) {
            decodeEntry([UInt8](try Data(contentsOf: directory.appendingPathComponent(name))), key: "k", kind: kind)
        }
        var (st, r) = try read("animation-up.ikc", IC_STORE_KIND_BITMAP)
        XCTAssertEqual(st, IC_OK)
        if st == IC_OK {
            XCTAssertEqual([r.image.pointee.width, r.image.pointee.height, r.image.pointee.frame_count], [13, 7, 3])
            XCTAssertEqual(r.filter, IC_STORE_FILTER_UP)
            XCTAssertEqual(r.image.pointee.frame_delays_ms[2], 60)
            XCTAssertEqual(r.image.pointee.loop_count, 2)
            XCTAssertEqual(r.image.pointee.source_format, IC_FORMAT_GIF)
            XCTAssertEqual(ic_image_frame(r.image, 2)[4 * 5 + 1], UInt8((2 * r.image.pointee.frame_size / 4 + 5) % 150))
            XCTAssertEqual(r.meta.expires_ms, 1_800_000_000_000)
            XCTAssertEqual(String(decoding: UnsafeRawBufferPointer(start: r.meta.etag, count: r.meta.etag_length), as: UTF8.self),
                           "\"v1\"")
        }
        ic_store_record_free(&r)
        for name in ["opaque-rgb.ikc", "opaque-rgb-up.ikc"] {
            (st, r) = try read(name, IC_STORE_KIND_BITMAP)
            XCTAssertEqual(st, IC_OK, name)
            if st == IC_OK {
                let pixel = r.image.pointee.pixels + 15 * r.image.pointee.stride + 4 * 23
                XCTAssertEqual([pixel[0], pixel[1], pixel[2], pixel[3]], [UInt8(23 * 9), UInt8(15 * 13), 77, 255], name)
            }
            ic_store_record_free(&r)
        }
        (st, r) = try read("data.ikc", IC_STORE_KIND_DATA)
        XCTAssertEqual(st, IC_OK)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: r.data, count: r.data_size)),
                       (0..<700).map { UInt8(truncatingIfNeeded: $0 * 31) })
        ic_store_record_free(&r)
    }

    func testAnotherKeyIsAMissNotAnImage() {
        let img = makeCImage(width: 8, height: 8)
        defer { ic_image_free(img) }
        let bytes = encodeEntry(img, key: "https://a.example/1.jpg")
        for key in ["https://a.example/2.jpg", "https://a.example/1.jp", "https://a.example/1.jpgx"] {
            var (st, record) = decodeEntry(bytes, key: key)
            XCTAssertEqual(st, IC_ERR_NOT_FOUND, key)
            XCTAssertNil(record.image)
            ic_store_record_free(&record)
        }
    }

    func testNewerFormatVersionIsAMissNotCorrupt() {
        let img = makeCImage(width: 8, height: 8)
        defer { ic_image_free(img) }
        var bytes = encodeEntry(img)
        bytes[8] = 2
        var (st, record) = decodeEntry(bytes)
        XCTAssertEqual(st, IC_ERR_NOT_FOUND)
        ic_store_record_free(&record)
    }

    func testEveryTruncationAndExtensionIsCorrupt() {
        let img = makeCImage(width: 30, height: 20, opaque: false)
        defer { ic_image_free(img) }
        let bytes = encodeEntry(img, chunkBytes: 30 * 4 * 4)
        for n in 0..<bytes.count {
            var (st, record) = decodeEntry(Array(bytes[0..<n]))
            XCTAssertEqual(st, IC_ERR_CORRUPT, "truncated to \(n) of \(bytes.count)")
            XCTAssertNil(record.image)
            ic_store_record_free(&record)
        }
        var (st, record) = decodeEntry(bytes + [0])
        XCTAssertEqual(st, IC_ERR_CORRUPT)
        ic_store_record_free(&record)
    }

    func testEveryBitFlipIsDetected() {
        let img = makeCImage(width: 24, height: 12, opaque: true)
        defer { ic_image_free(img) }
        let bytes = encodeEntry(img, chunkBytes: 24 * 4 * 3)
        for i in 0..<bytes.count {
            for bit in [0, 3, 7] {
                var damaged = bytes
                damaged[i] ^= UInt8(1 << bit)
                var (st, record) = decodeEntry(damaged)
                XCTAssertNotEqual(st, IC_OK, "flipping bit \(bit) of byte \(i) went unnoticed")
                XCTAssertNil(record.image)
                ic_store_record_free(&record)
            }
        }
    }

    func testRandomBytesAndRandomDamageNeverDecode() {
        var rng = SystemRandomNumberGenerator()
        let img = makeCImage(width: 50, height: 40, opaque: false)
        defer { ic_image_free(img) }
        let valid = encodeEntry(img, chunkBytes: 50 * 4 * 8)
        for round in 0..<3000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if round % 4 == 0, bytes.count >= 16 {
                    // A valid magic and version, so the parser gets further.
                    bytes.replaceSubrange(0..<10, with: valid[0..<10])
                }
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...8, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                if bytes == valid { continue }
            }
            var (st, record) = decodeEntry(bytes)
            XCTAssertNotEqual(st, IC_OK, "round \(round)")
            ic_store_record_free(&record)
        }
    }

    func testHugeClaimsFailBeforeAllocating() throws {
        let img = makeCImage(width: 16, height: 16)
        defer { ic_image_free(img) }
        var bytes = encodeEntry(img)
        // Claim 30000 x 30000 pixels (3.6 GB, under the default read limit) and re-seal the
        // header, so only the payload being far too short for the claim is wrong.
        let keyLength = 3
        let headerEnd = 96 + keyLength
        func put32(_ v: UInt32, at o: Int) { for i in 0..<4 { bytes[o + i] = UInt8(truncatingIfNeeded: v >> (8 * i)) } }
        func put64(_ v: UInt64, at o: Int) { for i in 0..<8 { bytes[o + i] = UInt8(truncatingIfNeeded: v >> (8 * i)) } }
        put32(30000, at: 16)
        put32(30000, at: 20)
        put64(30000 * 30000 * 4, at: 48)
        put32(30000 * 4, at: 56)
        put64(bytes.withUnsafeBytes { ic_xxh64($0.baseAddress, headerEnd, 0) }, at: headerEnd)
        var (st, record) = decodeEntry(bytes)
        XCTAssertEqual(st, IC_ERR_CORRUPT)
        ic_store_record_free(&record)
        // A caller limit below the real size is reported as such.
        var (lst, limited) = decodeEntry(encodeEntry(img), maxBytes: 1000)
        XCTAssertEqual(lst, IC_ERR_LIMIT_EXCEEDED)
        ic_store_record_free(&limited)
    }

    func testInvalidEntriesAreRejected() {
        var entry = ic_store_entry()
        entry.kind = IC_STORE_KIND_BITMAP
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var err = ic_error()
        // No key.
        XCTAssertEqual(ic_store_encode(&entry, nil, &out, &size, &err), IC_ERR_INVALID_ARGUMENT)
        // No image.
        "k".withCString { k in
            entry.key = k
            entry.key_length = 1
            XCTAssertEqual(ic_store_encode(&entry, nil, &out, &size, &err), IC_ERR_INVALID_ARGUMENT)
        }
        XCTAssertNil(out)
    }
}
