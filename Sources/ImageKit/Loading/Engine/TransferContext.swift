import CImageCore

/// What the C engine's callbacks receive as `ctx`: the core and the transfer's id.
///
/// One retain is handed to the engine with the request and given back in
/// `on_complete`, which the engine calls exactly once.
final class TransferContext: Sendable {
    let id: UInt64
    let core: DownloaderCore

    init(id: UInt64, core: DownloaderCore) {
        self.id = id
        self.core = core
        core.contextCreated()
    }

    deinit {
        core.contextReleased()
    }

    /// The callback table; the head callback only when the core looks at heads, the body
    /// callback only for a streamed body.
    static func callbacks(wantsHead: Bool, streams: Bool) -> ic_fetch_callbacks {
        var cb = ic_fetch_callbacks()
        if wantsHead {
            cb.on_head = { ctx, head in
                let context = Unmanaged<TransferContext>.fromOpaque(ctx!).takeUnretainedValue()
                return context.core.transferDidReceiveHead(context.id, head!.pointee) ? 0 : 1
            }
        }
        if streams {
            cb.on_body = { ctx, data, len in
                let context = Unmanaged<TransferContext>.fromOpaque(ctx!).takeUnretainedValue()
                context.core.transferDidReceiveBody(context.id, UnsafeRawBufferPointer(start: data, count: len))
                return 0
            }
        }
        cb.on_progress = { ctx, received, expected in
            let context = Unmanaged<TransferContext>.fromOpaque(ctx!).takeUnretainedValue()
            context.core.transferDidProgress(context.id, received: received, expected: expected)
        }
        cb.on_complete = { ctx, outcome in
            let context = Unmanaged<TransferContext>.fromOpaque(ctx!).takeRetainedValue()
            context.core.transferDidComplete(context.id, outcome!)
        }
        return cb
    }
}
