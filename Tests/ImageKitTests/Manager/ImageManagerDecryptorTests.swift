import Foundation
import ImageKit
import ImageKitTestSupport
import XCTest

/// A manager decoding images stored encrypted on the origin, through the downloader's
/// ``DownloaderConfiguration/decryptor``, against nginx on 127.0.0.1.
final class ImageManagerDecryptorTests: ManagerTestCase {
    func testTheDecryptedBodyIsWhatIsDecodedAndStored() async throws {
        let f = try fixture
        let png = ManagerFixture.png(width: 14, height: 9)
        let (url, _) = try f.copy(png.map { $0 ^ 0x5A }, named: "encrypted.bin")

        let plain = try makeManager()
        let shutdownPlain = ManagerShutdown(plain)
        addTeardownBlock { await shutdownPlain.run() }
        let undecodable = await ManagerTesting.error(plain, url)
        XCTAssertEqual(undecodable?.code, ImageKitError.unknownFormat("").code, "the stored bytes are no image")

        let m = try makeManager(downloader: { $0.decryptor = { data, _ in Data(data.map { $0 ^ 0x5A }) } })
        let heldManager = ManagerShutdown(m)
        addTeardownBlock { await heldManager.run() }
        let result = try await ManagerTesting.image(m, url, options: .waitStoreCache)
        XCTAssertEqual([result.image.width, result.image.height], [14, 9])
        let original = try await m.builtInCache.diskCache.data(forKey: url.absoluteString)
        XCTAssertEqual(original.map(Array.init), png, "the original-data store keeps the decrypted bytes")
    }
}
