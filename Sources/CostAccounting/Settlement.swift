/// The transport's rule for "nothing more can come to these bytes": a message's layers are
/// final once it says so for the message's last carried byte (docs/METERING.md §2c). TCP's is
/// the peer's cumulative ACK (`PeerAcknowledgement`); QUIC's will be its packets' acknowledgement
/// (a packet keeps the slots it carried until an ACK range covers its number).
///
/// Consulted per message (and per repeated piece of a packet), never per packet: the transport
/// feeds its acknowledgements to the concrete rule it holds, not through this protocol.
public protocol SettlementRule: AnyObject {
    /// True when the carrier can bring nothing more to this direction's bytes before `end`
    /// (a copy of them from now on is late).
    func settles(through end: Int64) -> Bool
}

/// TCP's rule: the peer acknowledged the stream past `end`; retransmissions come before that ACK.
public final class PeerAcknowledgement: SettlementRule {
    /// How far the peer acknowledged this direction's stream. Changed per ACK on the parsing
    /// thread alone, with no callback running (see `LayerSlot`).
    @exclusivity(unchecked) public private(set) var acknowledged: Int64 = .min

    public init() {}

    /// The peer acknowledged this direction's stream up to `offset`.
    @inline(__always) public func acknowledge(upTo offset: Int64) {
        if offset > acknowledged { acknowledged = offset }
    }

    public func settles(through end: Int64) -> Bool { acknowledged >= end }
}

/// Bounds of the cost ledgers (`Limits` holds them for a run).
public struct CostLimits: Sendable {
    /// Packets of one connection direction waiting for the owner of their bytes; past this,
    /// the oldest is charged to the connection's overhead.
    public var maxPacketsAwaitingOwner: Int
    /// Runs of stream bytes by owner remembered per direction, so that a late copy finds the
    /// message it repeats; older copies are charged to the connection's overhead.
    public var maxCostHistoryRuns: Int

    public init(maxPacketsAwaitingOwner: Int = 2048, maxCostHistoryRuns: Int = 256) {
        self.maxPacketsAwaitingOwner = maxPacketsAwaitingOwner
        self.maxCostHistoryRuns = maxCostHistoryRuns
    }
}
