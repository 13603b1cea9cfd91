import CImageCore
import ImageKit

/// Consistent hashing over Redis nodes: each node owns ``virtualNodes`` points on a 64-bit ring
/// and a key belongs to the node of the first point at or after the key's position. A node
/// joining or leaving moves only the keys of its own arcs; every other key stays where it was.
public struct RedisHashRing: Sendable {
    /// The nodes on the ring, in the order given.
    public let nodes: [RedisEndpoint]
    /// Points per node.
    public let virtualNodes: Int
    /// (position, index into ``nodes``), sorted by position.
    private let points: [(position: UInt64, node: Int)]

    /// A ring of `nodes` (at least one), each with `virtualNodes` points.
    public init(nodes: [RedisEndpoint], virtualNodes: Int = 160) {
        precondition(!nodes.isEmpty && virtualNodes > 0, "a hash ring needs nodes and points")
        self.nodes = nodes
        self.virtualNodes = virtualNodes
        var points: [(position: UInt64, node: Int)] = []
        points.reserveCapacity(nodes.count * virtualNodes)
        for (index, node) in nodes.enumerated() {
            for point in 0..<virtualNodes {
                points.append((Self.position(of: "\(node.host):\(node.port)#\(point)"), index))
            }
        }
        // Ties (vanishingly rare) are broken by the node's name, so every process agrees.
        self.points = points.sorted {
            $0.position != $1.position ? $0.position < $1.position
                : nodes[$0.node].description < nodes[$1.node].description
        }
    }

    /// The index into ``nodes`` of the node owning the ring position `position`.
    public func nodeIndex(forPosition position: UInt64) -> Int {
        var low = 0, high = points.count
        while low < high {
            let mid = (low + high) / 2
            if points[mid].position < position { low = mid + 1 } else { high = mid }
        }
        return points[low == points.count ? 0 : low].node
    }

    /// The node owning `key` (placed at the XXH64 of its UTF-8 bytes).
    public func node(for key: String) -> RedisEndpoint {
        nodes[nodeIndex(forPosition: Self.position(of: key))]
    }

    /// Where `text` sits on the ring.
    static func position(of text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { ic_xxh64($0.baseAddress, $0.count, 0x5245_4449) }
    }
}
