import CImageCore
import CImageCore.Testing
import Foundation
import XCTest

/// The disk tier's files through the C API: atomic writes, reads that delete
/// damaged files, scanning, clearing, a vanished directory, injected write faults.
final class StoreFileTests: XCTestCase {
    /// Writes `image` for `key` with default options; with a non-zero `faultErrno`, the
    /// write fails with it once `faultAfter` bytes of the file are written (test-only hook).
    private func write(_ dir: String, key: String, image: UnsafePointer<ic_image>,
                       faultErrno: Int32 = 0, faultAfter: UInt64 = 0) -> (ic_status, ic_store_written, ic_error) {
        var opts = ic_store_write_options()
        ic_store_write_options_init(&opts)
        var entry = ic_store_entry()
        entry.kind = IC_STORE_KIND_BITMAP
        entry.image = image
        var written = ic_store_written()
        var err = ic_error()
        let st = key.withCString { k -> ic_status in
            entry.key = k
            entry.key_length = strlen(k)
            return faultErrno == 0 ? ic_store_write(dir, &entry, &opts, &written, &err)
                : ic_store_write_with_fault(dir, &entry, &opts, faultErrno, faultAfter, &written, &err)
        }
        return (st, written, err)
    }

    private func read(_ dir: String, key: String) -> (ic_status, ic_store_record) {
        var record = ic_store_record()
        var err = ic_error()
        let st = key.withCString { ic_store_read(dir, IC_STORE_KIND_BITMAP, $0, strlen($0), nil, &record, &err) }
        return (st, record)
    }

    private func name(_ key: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(IC_STORE_NAME_CAPACITY))
        key.withCString { ic_store_entry_name(IC_STORE_KIND_BITMAP, $0, strlen($0), &buffer) }
        return buffer.withUnsafeBytes { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    func testEntryNamesAreHexDigestsPerKindAndKey() {
        let a = name("https://example.com/a.png")
        XCTAssertEqual(a.count, 68)
        XCTAssertTrue(a.hasSuffix(".ikc"))
        XCTAssertEqual(ic_store_is_entry_name(a), 1)
        XCTAssertNotEqual(a, name("https://example.com/b.png"))
        var data = ic_store_written().name
        withUnsafeMutableBytes(of: &data) { out in
            "https://example.com/a.png".withCString {
                ic_store_entry_name(IC_STORE_KIND_DATA, $0, strlen($0), out.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
        }
        XCTAssertNotEqual(cString(data), a)
        for bad in ["", "x.ikc", String(a.dropLast()), a.uppercased(), ".tmp-" + a] {
            XCTAssertEqual(ic_store_is_entry_name(bad), 0, bad)
        }
    }

    func testWriteReadRemoveAndScan() throws {
        let dir = TemporaryDirectory()
        let img = makeCImage(width: 45, height: 31)
        defer { ic_image_free(img) }
        let (st, written, _) = write(dir.path, key: "k1", image: img)
        XCTAssertEqual(st, IC_OK)
        XCTAssertEqual(cString(written.name), name("k1"))
        XCTAssertEqual(written.directory_created, 0)
        XCTAssertEqual(dir.files(), [name("k1")], "no temporary file left behind")
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.path + "/" + name("k1"))
        XCTAssertEqual((attributes[.size] as? NSNumber)?.uint64Value, written.size)

        var (rst, record) = read(dir.path, key: "k1")
        XCTAssertEqual(rst, IC_OK)
        XCTAssertTrue(sameImage(img, record.image))
        ic_store_record_free(&record)
        XCTAssertEqual(read(dir.path, key: "k2").0, IC_ERR_NOT_FOUND)

        // Rewriting replaces.
        let other = makeCImage(width: 9, height: 9, seed: 4)
        defer { ic_image_free(other) }
        XCTAssertEqual(write(dir.path, key: "k1", image: other).0, IC_OK)
        (rst, record) = read(dir.path, key: "k1")
        XCTAssertTrue(sameImage(other, record.image))
        ic_store_record_free(&record)

        XCTAssertEqual(write(dir.path, key: "k2", image: img).0, IC_OK)
        XCTAssertTrue(FileManager.default.createFile(atPath: dir.path + "/notes.txt", contents: Data("mine".utf8)))
        var listing = ic_store_listing()
        var err = ic_error()
        XCTAssertEqual(ic_store_scan(dir.path, 60_000, &listing, &err), IC_OK)
        let names = (0..<listing.count).map { cString(listing.files[$0].name) }
        ic_store_listing_free(&listing)
        XCTAssertEqual(Set(names), [name("k1"), name("k2")])

        XCTAssertEqual(ic_store_remove(dir.path, name("k1"), &err), IC_OK)
        XCTAssertEqual(ic_store_remove(dir.path, name("k1"), &err), IC_ERR_NOT_FOUND)
        XCTAssertEqual(ic_store_remove(dir.path, "../notes.txt", &err), IC_ERR_INVALID_ARGUMENT)
        var removed = 0
        XCTAssertEqual(ic_store_clear(dir.path, &removed, &err), IC_OK)
        XCTAssertEqual(removed, 1)
        XCTAssertEqual(dir.files(), ["notes.txt"], "files the store did not write are left alone")
    }

    func testScanOfMissingDirectoryIsEmpty() {
        var listing = ic_store_listing()
        var err = ic_error()
        XCTAssertEqual(ic_store_scan("/nonexistent/imagekit/\(UUID().uuidString)", 0, &listing, &err), IC_OK)
        XCTAssertEqual(listing.count, 0)
    }

    func testScanDeletesOnlyStaleTemporaryFiles() throws {
        let dir = TemporaryDirectory()
        let stale = dir.path + "/.tmp-0123456789abcdef-AAAAAA"
        let fresh = dir.path + "/.tmp-0123456789abcdef-BBBBBB"
        XCTAssertTrue(FileManager.default.createFile(atPath: stale, contents: Data([1, 2, 3])))
        XCTAssertTrue(FileManager.default.createFile(atPath: fresh, contents: Data([1, 2, 3])))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: stale)
        var listing = ic_store_listing()
        var err = ic_error()
        XCTAssertEqual(ic_store_scan(dir.path, 600_000, &listing, &err), IC_OK)
        XCTAssertEqual(listing.count, 0)
        ic_store_listing_free(&listing)
        XCTAssertEqual(dir.files(), [".tmp-0123456789abcdef-BBBBBB"])
    }

    func testDamagedFilesReadAsMissesAndAreDeleted() throws {
        let dir = TemporaryDirectory()
        let img = makeCImage(width: 64, height: 64)
        defer { ic_image_free(img) }
        let damages: [(String, (inout [UInt8]) -> Void)] = [
            ("bad magic", { $0[1] ^= 0xFF }),
            ("truncated", { $0.removeLast($0.count / 3) }),
            ("payload bit", { $0[$0.count / 2] ^= 0x04 }),
            ("empty", { $0 = [] }),
            ("extended", { $0.append(contentsOf: [0, 0, 0, 0]) }),
        ]
        for (what, damage) in damages {
            XCTAssertEqual(write(dir.path, key: "k", image: img).0, IC_OK)
            let path = dir.path + "/" + name("k")
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            damage(&bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            var (st, record) = read(dir.path, key: "k")
            XCTAssertEqual(st, IC_ERR_CORRUPT, what)
            XCTAssertNil(record.image, what)
            ic_store_record_free(&record)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "\(what): damaged file not deleted")
        }
    }

    func testHitRefreshesAnOldModificationTime() throws {
        let dir = TemporaryDirectory()
        let img = makeCImage(width: 4, height: 4)
        defer { ic_image_free(img) }
        XCTAssertEqual(write(dir.path, key: "k", image: img).0, IC_OK)
        let path = dir.path + "/" + name("k")
        let old = Date(timeIntervalSinceNow: -7200)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        var (st, record) = read(dir.path, key: "k")
        XCTAssertEqual(st, IC_OK)
        XCTAssertEqual(Double(record.accessed_ms) / 1000, old.timeIntervalSince1970, accuracy: 1)
        ic_store_record_free(&record)
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        XCTAssertGreaterThan(modified ?? .distantPast, Date(timeIntervalSinceNow: -600))
    }

    func testDeletedDirectoryIsRecreatedByTheNextWrite() throws {
        let parent = TemporaryDirectory()
        let dir = parent.path + "/a/b/cache"
        let img = makeCImage(width: 4, height: 4)
        defer { ic_image_free(img) }
        var err = ic_error()
        XCTAssertEqual(ic_store_create_directory(dir, &err), IC_OK)
        XCTAssertEqual(write(dir, key: "k", image: img).1.directory_created, 0)
        try FileManager.default.removeItem(atPath: parent.path + "/a")
        XCTAssertEqual(read(dir, key: "k").0, IC_ERR_NOT_FOUND)
        let (st, written, _) = write(dir, key: "k", image: img)
        XCTAssertEqual(st, IC_OK)
        XCTAssertEqual(written.directory_created, 1)
        var (rst, record) = read(dir, key: "k")
        XCTAssertEqual(rst, IC_OK)
        ic_store_record_free(&record)
    }

    func testInjectedWriteFaultsFailCleanly() {
        let dir = TemporaryDirectory()
        let img = makeCImage(width: 300, height: 200)
        defer { ic_image_free(img) }
        let (kept, written, _) = write(dir.path, key: "kept", image: img)
        XCTAssertEqual(kept, IC_OK)
        for (errnum, expected) in [(ENOSPC, IC_ERR_NO_SPACE), (EDQUOT, IC_ERR_NO_SPACE), (EIO, IC_ERR_IO)] {
            // In the header, in the payload, at the last byte.
            for after in [0, 50, written.size / 2, written.size - 1] {
                let (st, _, err) = write(dir.path, key: "next", image: img, faultErrno: errnum, faultAfter: after)
                XCTAssertEqual(st, expected, "errno \(errnum) after \(after) bytes")
                XCTAssertEqual(err.code, expected)
                XCTAssertEqual(dir.files(), [name("kept")], "a failed write leaves nothing behind")
            }
        }
        // Reads keep working, and writes work again without the fault.
        var (st, record) = read(dir.path, key: "kept")
        XCTAssertEqual(st, IC_OK)
        ic_store_record_free(&record)
        XCTAssertEqual(write(dir.path, key: "next", image: img).0, IC_OK)
    }
}
