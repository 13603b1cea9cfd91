import Foundation
import ImageKit
import XCTest

/// The destination policy seen through the manager: a refusal is a lasting failure the
/// blocklist keeps, it becomes 403 for a service, and a load may carry its own policy.
final class ImageManagerDestinationPolicyTests: ManagerTestCase {
    func testARefusedDestinationIsBlocklistedAndSendsNothing() async throws {
        let f = try fixture
        let m = try makeManager(downloader: { $0.destinationPolicy = .publicOnly })
        let path = "/\(unique("refused")).png"
        try f.write(path, ManagerFixture.tile(3))
        let url = f.nginx.url(path)
        let refused = await ManagerTesting.error(m, url)
        let sentence = "destination 127.0.0.1 is loopback, which the policy does not allow"
        XCTAssertEqual(refused, .destinationRefused(sentence))
        XCTAssertEqual(refused?.suggestedHTTPStatus, 403)
        XCTAssertTrue(m.isBlocklisted(url))
        let again = await ManagerTesting.error(m, url)
        guard again?.code == .blocklisted else { return XCTFail("\(String(describing: again))") }
        XCTAssertEqual(again?.original, refused)
        XCTAssertEqual(again?.suggestedHTTPStatus, 403)

        // A load may carry its own policy (here through the request modifier), once it may retry.
        let context = ImageContext(requestModifier: { request in
            var r = request
            r.destinationPolicy = DestinationPolicy(allowsLoopback: true)
            return r
        })
        let loaded = try await ManagerTesting.image(m, url, options: .retryFailed, context: context)
        XCTAssertEqual(loaded.image.width, 24 + 3 % 5)
        let logged = await f.requests(path, atLeast: 1).count
        XCTAssertEqual(logged, 1, "only the allowed load reached nginx")
        await ManagerTesting.assertIdle(m)
    }
}
