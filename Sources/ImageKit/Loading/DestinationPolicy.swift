/// Which network destinations a ``Downloader`` may connect to: its defence against
/// server-side request forgery when the URLs come from users.
///
/// By default (``publicOnly``) a download may reach public addresses only: not this
/// machine, not private networks, not link-local addresses, and never a cloud metadata
/// service. The check runs on the address actually connected to — after name
/// resolution, for the first request and every redirect, and again before each request
/// sent over a reused connection — so every spelling of an address (`2130706433`,
/// `0x7f.1`, `[::ffff:127.0.0.1]`, `0.0.0.0`, a name that resolves to `10.0.0.5`) meets
/// the same check, and a refused destination receives no byte. A refusal fails the
/// download with ``ImageKitError/destinationRefused(_:)``, for example
/// `"destination 127.0.0.1 is loopback, which the policy does not allow"`.
///
/// Entries of ``allowList`` and ``denyList`` are host names (`"images.internal"`),
/// wildcard names (`"*.internal"`: every name below `internal`, not `internal` itself),
/// addresses (`"10.0.0.5"`, `"fd00::5"`) or CIDR prefixes (`"10.0.0.0/8"`, `"fd00::/8"`).
/// The deny-list wins over everything; an allowed name allows whatever addresses its host
/// resolves to; an allowed address or prefix allows the addresses it holds whatever their
/// class. Cloud metadata addresses (169.254.169.254, fd00:ec2::254 and the other platform
/// endpoints listed in `ic_fetch_policy.h`) are refused unless the allow-list names
/// that exact address or a host name that resolves to it — the opt-ins below never allow
/// them. Unlisted multicast and reserved addresses are always refused. Such entries hold
/// their hosts on every port and under both schemes.
///
/// ``allowList`` also takes origins — `"http://images.internal:8080"`,
/// `"https://10.0.0.5"`, `"http://[fd00::5]:81"` (the scheme's port when none is given; no
/// user, path or query) — each allowing exactly that scheme, host and port. Trusting your
/// own origin, name it so: a redirect from it to another port or scheme of the same host is
/// then judged like any other destination, not waved through as the origin.
///
/// With a ``DownloaderConfiguration/proxy`` the connection goes to the proxy, which the
/// operator chose and which resolves the host names: then the policy checks only the URL's
/// host (an address by its class, a name against the lists), and the proxy must refuse
/// internal destinations itself.
public struct DestinationPolicy: Sendable, Hashable {
    /// Allow this machine: 127.0.0.0/8, ::1, the unspecified 0.0.0.0 and :: (connecting to
    /// them reaches this machine), and the `localhost` names (RFC 6761). Default off.
    public var allowsLoopback: Bool
    /// Allow private networks: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, CGNAT
    /// 100.64.0.0/10, IPv6 unique-local fc00::/7 and site-local fec0::/10. Default off.
    public var allowsPrivateNetworks: Bool
    /// Allow link-local addresses: 169.254.0.0/16 and fe80::/10 (cloud metadata addresses
    /// among them stay refused). Default off.
    public var allowsLinkLocal: Bool
    /// Host names, addresses and CIDR prefixes allowed on every port whatever their class, and
    /// origins (`"http://host:port"`) allowed for exactly their scheme, host and port.
    public var allowList: [String]
    /// Host names, addresses and CIDR prefixes refused whatever else says otherwise.
    public var denyList: [String]

    /// A policy; the defaults allow public destinations only.
    public init(allowsLoopback: Bool = false, allowsPrivateNetworks: Bool = false, allowsLinkLocal: Bool = false,
                allowList: [String] = [], denyList: [String] = []) {
        self.allowsLoopback = allowsLoopback
        self.allowsPrivateNetworks = allowsPrivateNetworks
        self.allowsLinkLocal = allowsLinkLocal
        self.allowList = allowList
        self.denyList = denyList
    }

    /// Public destinations only: the default of ``DownloaderConfiguration/destinationPolicy``.
    public static let publicOnly = DestinationPolicy()
}
