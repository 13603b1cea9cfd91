import CImageCore
import ImageKit
import XCTest

/// The destination policy's rules without a transfer (`ic_fetch_policy.h`): how hosts and
/// addresses are read, which class each address is, and what a policy decides.
final class DestinationPolicyRulesTests: XCTestCase {
    /// The NUL-terminated text in `buffer`.
    private func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The canonical form of `host`, or nil when it is no valid host.
    private func normalized(_ host: String) -> String? {
        var out = [CChar](repeating: 0, count: Int(IC_NET_HOST_TEXT))
        let n = host.withCString { ic_net_host_normalize($0, strlen($0), &out, out.count) }
        return n == 0 ? nil : text(out)
    }

    /// The class of the address `host` spells, or nil when it spells none.
    private func hostClass(_ host: String) -> ic_net_class? {
        var a = ic_net_addr()
        guard host.withCString({ ic_net_host_address($0, strlen($0), &a) }) else { return nil }
        return ic_net_addr_classify(&a)
    }

    private func address(_ text: String) -> ic_net_addr? {
        var a = ic_net_addr()
        return text.withCString { ic_net_addr_parse($0, strlen($0), &a) } ? a : nil
    }

    private func formatted(_ a: ic_net_addr) -> String {
        var a = a
        var out = [CChar](repeating: 0, count: Int(IC_NET_ADDR_TEXT))
        _ = ic_net_addr_format(&a, &out, out.count)
        return text(out)
    }

    /// nil when `policy` allows `host` at `addr`, else its sentence.
    private func refusal(_ policy: OpaquePointer?, host: String?, addr: String?,
                         file: StaticString = #filePath, line: UInt = #line) -> String? {
        var a = ic_net_addr()
        if let addr {
            guard let parsed = address(addr) else {
                XCTFail("\(addr) does not parse", file: file, line: line)
                return nil
            }
            a = parsed
        }
        var why = [CChar](repeating: 0, count: Int(IC_FETCH_POLICY_REASON))
        let allowed = withUnsafePointer(to: &a) { ap in
            (host ?? "").withCString { h in
                ic_fetch_policy_check(policy, host == nil ? nil : h, host.map { strlen($0) } ?? 0,
                                      addr == nil ? nil : ap, &why, why.count)
            }
        }
        if !allowed { XCTAssertFalse(text(why).isEmpty, "a refusal says why", file: file, line: line) }
        return allowed ? nil : text(why)
    }

    private func makePolicy(allow: UInt32 = 0, allowList: [String] = [], denyList: [String] = []) throws -> OpaquePointer {
        var spec = ic_fetch_policy_spec()
        ic_fetch_policy_spec_init(&spec)
        spec.allow = allow
        let a = allowList.map { strdup($0) }, d = denyList.map { strdup($0) }
        defer { (a + d).forEach { free($0) } }
        var out: OpaquePointer?
        var err = ic_error()
        let ap: [UnsafePointer<CChar>?] = a.map { UnsafePointer($0) }, dp: [UnsafePointer<CChar>?] = d.map { UnsafePointer($0) }
        let st = ap.withUnsafeBufferPointer { ab in
            dp.withUnsafeBufferPointer { db in
                spec.allow_list = ab.baseAddress
                spec.allow_count = ab.count
                spec.deny_list = db.baseAddress
                spec.deny_count = db.count
                return ic_fetch_policy_create(&spec, &out, &err)
            }
        }
        guard st == IC_OK, let out else { throw ImageKitErrorText(err) }
        addTeardownBlock { ic_fetch_policy_release(out) }
        return out
    }

    func testEverySpellingOfLoopbackReadsAsLoopback() {
        let spellings = [
            "127.0.0.1", "2130706433", "0x7f.1", "0x7F000001", "0177.0.0.1", "0177.1", "127.1", "127.0.0.1.",
            "017700000001", "127.255.255.254", "0.0.0.0", "0", "0x0", "[::1]", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]",
            "[::FFFF:7f00:1]", "[::]", "[::1%25lo]", "[0::1]",
        ]
        for host in spellings {
            XCTAssertEqual(hostClass(host), IC_NET_LOOPBACK, host)
        }
        XCTAssertEqual(normalized("2130706433"), "127.0.0.1")
        XCTAssertEqual(normalized("0x7f.1"), "127.0.0.1")
        XCTAssertEqual(normalized("[::FFFF:7f00:1]"), "[::ffff:127.0.0.1]")
        XCTAssertEqual(normalized("[0:0:0:0:0:0:0:1]"), "[::1]")
        XCTAssertEqual(normalized("LocalHost."), "localhost")
        XCTAssertEqual(normalized("Images.Example.COM."), "images.example.com")
    }

    func testClassesOfAddresses() {
        let cases: [(String, ic_net_class)] = [
            ("10.0.0.5", IC_NET_PRIVATE), ("172.16.0.1", IC_NET_PRIVATE), ("172.31.255.255", IC_NET_PRIVATE),
            ("172.32.0.1", IC_NET_PUBLIC), ("192.168.1.1", IC_NET_PRIVATE), ("100.64.0.1", IC_NET_PRIVATE),
            ("100.127.255.255", IC_NET_PRIVATE), ("100.128.0.1", IC_NET_PUBLIC), ("[fd12:3456::1]", IC_NET_PRIVATE),
            ("[fc00::1]", IC_NET_PRIVATE), ("[fec0::1]", IC_NET_PRIVATE), ("169.254.1.1", IC_NET_LINK_LOCAL),
            ("[fe80::1%25eth0]", IC_NET_LINK_LOCAL), ("169.254.169.254", IC_NET_METADATA),
            ("0xa9.0xfe.0xa9.0xfe", IC_NET_METADATA), ("2852039166", IC_NET_METADATA),
            ("[::ffff:169.254.169.254]", IC_NET_METADATA), ("[fd00:ec2::254]", IC_NET_METADATA),
            ("[64:ff9b::a9fe:a9fe]", IC_NET_METADATA), ("169.254.170.2", IC_NET_METADATA),
            ("100.100.100.200", IC_NET_METADATA), ("168.63.129.16", IC_NET_METADATA), ("192.0.0.192", IC_NET_METADATA),
            ("[64:ff9b::a00:5]", IC_NET_PRIVATE), ("[2002:7f00:1::]", IC_NET_LOOPBACK), ("[64:ff9b::808:808]", IC_NET_PUBLIC),
            ("224.0.0.1", IC_NET_MULTICAST), ("[ff02::1]", IC_NET_MULTICAST), ("255.255.255.255", IC_NET_RESERVED),
            ("240.0.0.1", IC_NET_RESERVED), ("192.0.2.1", IC_NET_RESERVED), ("198.18.0.1", IC_NET_RESERVED),
            ("0.1.2.3", IC_NET_RESERVED), ("[2001:db8::1]", IC_NET_RESERVED), ("[::1.2.3.4]", IC_NET_RESERVED),
            ("8.8.8.8", IC_NET_PUBLIC), ("93.184.216.34", IC_NET_PUBLIC), ("[2606:4700::1111]", IC_NET_PUBLIC),
        ]
        for (host, expected) in cases {
            XCTAssertEqual(hostClass(host), expected, host)
        }
    }

    func testHostsThatAreNotAddressesOrNotValid() {
        for name in ["example.com", "images.internal", "a.0x7g", "localhost", "xn--nxasmq6b.example", "_dmarc.example.com"] {
            XCTAssertNil(hostClass(name), name)
            XCTAssertNotNil(normalized(name), name)
        }
        // Numbers that are no IPv4 address, malformed names and addresses: no valid host.
        for bad in ["256.0.0.1", "1.2.3.4.5", "0x100000000", "4294967296", "08.0.0.1", "1.2.3.09", "example.123",
                    "a..b", ".a", "", ".", "a b", "a/b", "ex\u{e4}mple.com", "[::1", "[1::2::3]", "[1:2:3:4:5:6:7:8:9]",
                    "[::ffff:1.2.3]", "[12345::]", "[::1%25]", String(repeating: "a", count: 64) + ".com"] {
            XCTAssertNil(normalized(bad), bad)
            XCTAssertNil(hostClass(bad), bad)
        }
    }

    func testAddressesParseAndFormatBothWays() {
        let cases = [
            ("192.0.2.1", "192.0.2.1"), ("::", "::"), ("::1", "::1"), ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("2001:db8:0:0:0:0:2:1", "2001:db8::2:1"), ("1:0:0:2:0:0:0:3", "1:0:0:2::3"), ("1::", "1::"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"), ("[fe80::1%eth0]", "fe80::1"), ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
            ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
        ]
        for (text, canonical) in cases {
            guard let a = address(text) else {
                XCTFail("\(text) does not parse")
                continue
            }
            XCTAssertEqual(formatted(a), canonical, text)
            XCTAssertEqual(address(canonical).map(formatted), canonical, "round trip of \(canonical)")
        }
        // The strict form takes no URL spellings.
        for loose in ["2130706433", "127.1", "0177.0.0.1", "01.2.3.4", "1.2.3.256", "1.2.3", ":1", "1:", "1:::2"] {
            XCTAssertNil(address(loose), loose)
        }
    }

    func testDefaultPolicyAllowsPublicDestinationsOnly() {
        let pointer = ic_fetch_policy_default()
        XCTAssertEqual(refusal(pointer, host: "127.0.0.1", addr: "127.0.0.1"),
                       "destination 127.0.0.1 is loopback, which the policy does not allow")
        XCTAssertEqual(refusal(pointer, host: "cdn.example.com", addr: "10.0.0.5"),
                       "destination 10.0.0.5 (cdn.example.com) is private, which the policy does not allow")
        XCTAssertEqual(refusal(pointer, host: "2130706433", addr: nil),
                       "destination 127.0.0.1 is loopback, which the policy does not allow")
        XCTAssertEqual(refusal(pointer, host: "localhost.", addr: nil),
                       "destination localhost is loopback, which the policy does not allow")
        XCTAssertEqual(refusal(pointer, host: "a.localhost", addr: "93.184.216.34"),
                       "destination 93.184.216.34 (a.localhost) is loopback, which the policy does not allow")
        XCTAssertEqual(refusal(pointer, host: "x.example", addr: "::ffff:169.254.169.254"),
                       "destination ::ffff:169.254.169.254 (x.example) is a cloud metadata address, which the policy allows only when its allow-list names it")
        XCTAssertEqual(refusal(pointer, host: "a.0x7f.1.2", addr: nil),
                       "destination host \"a.0x7f.1.2\" is not a valid host name")
        XCTAssertNotNil(refusal(pointer, host: "example.com", addr: "224.0.0.1"))
        XCTAssertNil(refusal(pointer, host: "example.com", addr: "93.184.216.34"))
        XCTAssertNil(refusal(pointer, host: "example.com", addr: nil), "a name is checked again once resolved")
        XCTAssertNil(refusal(pointer, host: nil, addr: "2606:4700::1111"))
    }

    func testOptInsAllowTheirClassButNeverMetadata() throws {
        let all = UInt32(IC_FETCH_ALLOW_LOOPBACK) | UInt32(IC_FETCH_ALLOW_PRIVATE) | UInt32(IC_FETCH_ALLOW_LINK_LOCAL)
        let p = try makePolicy(allow: all)
        for addr in ["127.0.0.1", "::1", "0.0.0.0", "10.0.0.5", "100.64.1.1", "fd00::5", "169.254.1.1", "fe80::1"] {
            XCTAssertNil(refusal(p, host: "host.example", addr: addr), addr)
        }
        for addr in ["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe"] {
            XCTAssertEqual(refusal(p, host: nil, addr: addr),
                           "destination \(addr) is a cloud metadata address, which the policy allows only when its allow-list names it")
        }
        XCTAssertNotNil(refusal(p, host: nil, addr: "239.1.1.1"), "multicast has no opt-in")
        let loopbackOnly = try makePolicy(allow: UInt32(IC_FETCH_ALLOW_LOOPBACK))
        XCTAssertNil(refusal(loopbackOnly, host: "localhost.", addr: nil))
        XCTAssertNotNil(refusal(loopbackOnly, host: nil, addr: "10.0.0.1"))
        XCTAssertNotNil(refusal(loopbackOnly, host: nil, addr: "169.254.1.1"))
    }

    func testListsNamesPrefixesAndPrecedence() throws {
        let p = try makePolicy(allowList: ["images.internal", "*.corp.example", "10.1.0.0/16", "fd00:1::/32", "169.254.0.0/16",
                                           "169.254.169.254/32", "LOCALHOST."],
                               denyList: ["bad.corp.example", "10.1.2.0/24", "*.evil.example", "64.0.0.0/8"])
        XCTAssertNil(refusal(p, host: "images.internal", addr: "10.9.9.9"), "an allowed name allows what it resolves to")
        XCTAssertNil(refusal(p, host: "IMAGES.internal.", addr: "127.0.0.1"))
        XCTAssertNil(refusal(p, host: "a.b.corp.example", addr: "192.168.0.1"))
        XCTAssertNotNil(refusal(p, host: "corp.example", addr: "192.168.0.1"), "a wildcard holds names below it only")
        XCTAssertNil(refusal(p, host: "x.example", addr: "10.1.200.3"))
        XCTAssertNil(refusal(p, host: nil, addr: "fd00:1:ffff::1"))
        XCTAssertNil(refusal(p, host: nil, addr: "::ffff:10.1.3.3"), "an IPv4 prefix holds the IPv4-mapped spelling")
        XCTAssertNil(refusal(p, host: "localhost", addr: "::1"))
        XCTAssertNil(refusal(p, host: nil, addr: "169.254.169.254"), "named exactly: allowed")
        XCTAssertEqual(refusal(p, host: nil, addr: "169.254.169.253"),
                       "destination 169.254.169.253 is a cloud metadata address, which the policy allows only when its allow-list names it")
        XCTAssertEqual(refusal(p, host: "bad.corp.example", addr: "8.8.8.8"),
                       "destination 8.8.8.8 (bad.corp.example) is on the policy's deny-list")
        XCTAssertEqual(refusal(p, host: "bad.corp.example", addr: nil),
                       "destination bad.corp.example is on the policy's deny-list")
        XCTAssertNotNil(refusal(p, host: "x.example", addr: "10.1.2.7"), "the deny-list wins over the allow-list")
        XCTAssertNotNil(refusal(p, host: "a.evil.example", addr: "8.8.8.8"))
        XCTAssertNotNil(refusal(p, host: nil, addr: "64:ff9b::4001:203"), "NAT64 carries 64.1.2.3")
        XCTAssertNil(refusal(p, host: "evil.example", addr: "8.8.8.8"))
    }

    func testInternationalisedNamesAreCheckedByAddressOnly() throws {
        let host = "b\u{fc}cher.example"
        XCTAssertNil(refusal(ic_fetch_policy_default(), host: host, addr: "93.184.216.34"))
        XCTAssertEqual(refusal(ic_fetch_policy_default(), host: host, addr: "127.0.0.1"),
                       "destination 127.0.0.1 (\(host)) is loopback, which the policy does not allow")
        // Their punycode form is what the resolver sees: no entry matches them, and a deny-list of
        // names, which they could slip past, refuses them.
        let allowing = try makePolicy(allowList: ["xn--bcher-kva.example", host.replacingOccurrences(of: "\u{fc}", with: "u")])
        XCTAssertNotNil(refusal(allowing, host: host, addr: "10.0.0.1"))
        let denying = try makePolicy(denyList: ["*.internal"])
        XCTAssertEqual(refusal(denying, host: host, addr: "93.184.216.34"),
                       "destination host \"\(host)\" is an internationalised name, which a deny-list of names cannot check")
        XCTAssertNil(refusal(denying, host: "xn--bcher-kva.example", addr: "93.184.216.34"))
    }

    func testBadEntriesAreRefusedByName() {
        for entry in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/", "10.0.0.0/x", "*.", "*.10.0.0.1", "a..b", "", "http://x/a",
                      "ftp://x", "1.2.3.4.5", "exa mple"] {
            XCTAssertThrowsError(try makePolicy(allowList: [entry]), entry) { error in
                XCTAssertTrue("\(error)".contains("allow-list entry"), "\(error)")
            }
        }
        XCTAssertThrowsError(try Downloader(configuration: {
            var c = DownloaderConfiguration()
            c.destinationPolicy = DestinationPolicy(denyList: ["10.0.0.0/99"])
            return c
        }())) { error in
            XCTAssertEqual(error as? ImageKitError, .invalidArgument(
                "fetch policy: deny-list entry \"10.0.0.0/99\" is not a host name, an IP address or a CIDR prefix"))
        }
    }
}
