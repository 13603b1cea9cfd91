import Foundation
import Hummingbird
import NIOCore

/// The largest body sent as one buffer, and the size of the slices a larger one is sent in.
let responseSliceBytes = 64 << 10

/// A response body with `data`'s bytes for a connection served by `eventLoop`. A small body is
/// one buffer; a larger one is written a slice at a time as the client reads it, so a connection
/// holds about one slice of it, never a copy of the whole: ImageKit's cached bytes are shared,
/// never copied.
///
/// The back-pressure needs one step of our own: a write is handed to the event loop, and only
/// when the loop has written it does the channel report that it is full, so a writer that does
/// not wait for the loop queues the whole body before the first report (≈ 9 MB of a 12 MB
/// answer to a client that did not read, in a debug build). After each slice the writer waits
/// for the loop's turn; the next write then waits while the connection is not writable.
func responseBody(_ data: Data, eventLoop: any EventLoop) -> ResponseBody {
    guard data.count > responseSliceBytes else { return ResponseBody(byteBuffer: ByteBuffer(bytes: data)) }
    return ResponseBody(contentLength: data.count) { writer in
        var start = data.startIndex
        while start < data.endIndex {
            let end = min(start + responseSliceBytes, data.endIndex)
            try await writer.write(ByteBuffer(bytes: data[start..<end]))
            try await eventLoop.submit {}.get()
            start = end
        }
        try await writer.finish(nil)
    }
}
