import CImageCore
import Glibc

/// A ``DestinationPolicy`` in the C engine's form (`ic_fetch_policy`), built once and
/// handed to every transfer that uses it (the engine keeps its own reference while a
/// transfer runs).
final class CompiledDestinationPolicy: Sendable {
    // @unchecked Sendable: an ic_fetch_policy never changes after ic_fetch_policy_create
    // and its reference count is atomic (ic_fetch_policy.h), so any thread may use it.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let handle: Handle

    /// The C policy, valid while this object lives.
    var pointer: OpaquePointer { handle.pointer }

    /// Builds `policy`; fails with ``ImageKitError/invalidArgument(_:)`` naming an entry
    /// that is not a host name, an address or a CIDR prefix (or, in the allow-list, an origin).
    init(_ policy: DestinationPolicy) throws(ImageKitError) {
        var spec = ic_fetch_policy_spec()
        ic_fetch_policy_spec_init(&spec)
        var allow: UInt32 = 0
        if policy.allowsLoopback { allow |= UInt32(IC_FETCH_ALLOW_LOOPBACK) }
        if policy.allowsPrivateNetworks { allow |= UInt32(IC_FETCH_ALLOW_PRIVATE) }
        if policy.allowsLinkLocal { allow |= UInt32(IC_FETCH_ALLOW_LINK_LOCAL) }
        spec.allow = allow
        let allowList = policy.allowList.map { strdup($0) }
        let denyList = policy.denyList.map { strdup($0) }
        defer {
            allowList.forEach { free($0) }
            denyList.forEach { free($0) }
        }
        guard !allowList.contains(nil), !denyList.contains(nil) else {
            throw .outOfMemory("download: cannot copy the destination policy's lists")
        }
        var out: OpaquePointer?
        var err = ic_error()
        let allowPointers: [UnsafePointer<CChar>?] = allowList.map { UnsafePointer($0) }
        let denyPointers: [UnsafePointer<CChar>?] = denyList.map { UnsafePointer($0) }
        let st = allowPointers.withUnsafeBufferPointer { a in
            denyPointers.withUnsafeBufferPointer { d in
                spec.allow_list = a.baseAddress
                spec.allow_count = a.count
                spec.deny_list = d.baseAddress
                spec.deny_count = d.count
                return ic_fetch_policy_create(&spec, &out, &err)
            }
        }
        guard st == IC_OK, let out else { throw ImageKitError(status: st, error: err) }
        handle = Handle(pointer: out)
    }

    deinit {
        ic_fetch_policy_release(handle.pointer)
    }
}
