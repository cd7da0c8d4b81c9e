/// Who a run of stream bytes belongs to, as a protocol's reader says it (docs/METERING.md §2c):
/// what `MessageSink.claim` takes. Offsets are those of the reader's own stream (one direction,
/// one stream), whatever carries it.
public enum StreamOwner: Equatable, Sendable {
    /// The message whose first byte is at this offset of the same side's stream (for a server
    /// push, the promised request, whose bytes the server sends).
    case message(startingAt: Int64)
    /// Bytes a protocol spends on itself, of the kind it registered (HTTP/2's preface and
    /// control frames: `h2_control`); no message owns them.
    case overhead(OverheadKind)
    /// Bytes no message claims: between messages, skipped, tunnels not read.
    case unclaimed
}

/// Who a run of bytes belongs to in a ledger: a message's slot, or an overhead kind of the
/// connection (`unclaimed` among them). A class reference or one byte: copying it retains at
/// most.
public enum CostOwner {
    case message(LayerSlot)
    case overhead(OverheadKind)

    /// Bytes no message claims.
    @inlinable public static var unclaimed: CostOwner { .overhead(.unclaimed) }

    @inlinable public func isSame(as other: CostOwner) -> Bool {
        switch (self, other) {
        case let (.message(a), .message(b)): return a === b
        case let (.overhead(a), .overhead(b)): return a == b
        default: return false
        }
    }
}
