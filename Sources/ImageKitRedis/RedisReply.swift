#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A Redis reply, as ``RedisReplyParser`` reads it.
enum RedisReply: Sendable, Equatable {
    /// A bulk string.
    case string(Data)
    /// A simple status (`OK`).
    case status(String)
    /// An integer.
    case integer(Int64)
    /// No value (a missing key).
    case null
    /// An error reply (`OOM command not allowed …`): the node is fine, the command was refused.
    case error(String)
    /// An array of replies.
    case array([RedisReply])
}
