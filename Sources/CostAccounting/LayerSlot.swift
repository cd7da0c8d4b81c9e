import CaptureIO

/// One message's cost layers while its packets are counted (docs/METERING.md §2c). Its record
/// takes the figures once the transport's rule settles the message's last carried byte (TCP:
/// the peer acknowledged it; retransmissions come before that ACK) or the connection is over;
/// later copies go to the connection's overhead.
///
/// Its figures and the ledger's state are touched for every packet, so they are not checked
/// for overlapping access at run time (`@exclusivity(unchecked)`, here and in `DirectionLedger`
/// and `CleartextClaims`): a slot and its ledger live on the parsing thread alone, each change is
/// a plain read-modify-write of one value, and no closure or callback runs while one is being
/// changed (`forEachPiece`'s closure reads `claims` and changes the other properties only).
/// `CostLayerTests` and `LowerLayerRunTests` run every path in debug builds.
public final class LayerSlot {
    @exclusivity(unchecked) public internal(set) var layers = LowerLayers(tcp: 0, ip: 0, frame: 0)
    /// Bytes of the layer above the carrier the message owns (over TLS: its plaintext and its
    /// records' overhead); 0 in cleartext.
    @exclusivity(unchecked) public internal(set) var tls = 0
    /// Carrier stream bytes claimed for the message, and how many of them captured packets
    /// carried: fewer means a gap, and every layer is a lower bound.
    @exclusivity(unchecked) public internal(set) var claimed = 0
    @exclusivity(unchecked) public internal(set) var carried = 0
    /// Just past the message's last claimed carrier byte.
    @exclusivity(unchecked) public internal(set) var carrierEnd: Int64 = .min
    /// Under a layer between the message and its carrier (TLS): how far the message's bytes of
    /// that layer were claimed, and how far the records carrying them were placed on the
    /// carrier; its carrier end is final once they meet.
    @exclusivity(unchecked) public internal(set) var upperEnd: Int64 = .min
    @exclusivity(unchecked) public internal(set) var upperPlacedBelow: Int64 = .min
    /// The direction that sent it; weak: a closed connection's ledger may be gone.
    public private(set) weak var ledger: DirectionLedger?
    /// False when no captured packet carries the message (a tunnel whose outer connection's
    /// ledger could not be linked): its record gets no layers under TLS.
    public let hasCarrier: Bool
    /// Set when its record took the figures.
    @exclusivity(unchecked) public internal(set) var sealed = false

    public init(ledger: DirectionLedger) {
        self.ledger = ledger
        hasCarrier = true
    }

    /// A slot no packet will reach: only the layer above the carrier is counted.
    public init(withoutCarrier: ()) {
        ledger = nil
        hasCarrier = false
    }

    /// Whether nothing more can come to it: its upper layer is placed, the transport's rule
    /// settles its end (or the connection is over), and no waiting packet starts inside it.
    public var isSettled: Bool {
        guard hasCarrier else { return upperPlacedBelow >= upperEnd }
        guard let ledger, !ledger.closed else { return true }
        return upperPlacedBelow >= upperEnd && ledger.settlement.settles(through: carrierEnd)
            && ledger.claims.end >= carrierEnd && !ledger.hasPending(before: carrierEnd)
    }

    /// Counts bytes the message's packets carried (one access to `layers`, not one per figure).
    func add(_ bytes: LayerBytes, repeated: Int, carried: Int, packets: Int) {
        Self.add(bytes, repeated: repeated, packets: packets, to: &layers)
        self.carried = saturatingSum(self.carried, carried)
    }

    /// Counts bytes of QUIC packets (`bytes.tcp` their QUIC bytes) and the UDP headers of the
    /// datagrams whose head the message owns (QUICCostLayer).
    func addQUIC(_ bytes: LayerBytes, udpHeaders: Int, repeated: Int, carried: Int, packets: Int) {
        add(bytes, repeated: repeated, carried: carried, packets: packets)
        layers.udp = saturatingSum(layers.udp ?? 0, saturatingSum(bytes.tcp, udpHeaders))
    }

    private static func add(_ bytes: LayerBytes, repeated: Int, packets: Int, to layers: inout LowerLayers) {
        layers.tcp = saturatingSum(layers.tcp, bytes.tcp)
        layers.ip = saturatingSum(layers.ip, bytes.ip)
        layers.frame = saturatingSum(layers.frame, bytes.frame)
        layers.retransmitted = saturatingSum(layers.retransmitted, repeated)
        layers.packets += packets
    }

    /// The record's layers under its upper layer, nil when no packet carries it; what comes
    /// after goes to the connection's overhead. Taken before they settled (too many records
    /// waiting), they are lower bounds.
    public func seal(settled: Bool) -> LowerLayers? {
        sealed = true
        guard hasCarrier else { return nil }
        var result = layers
        result.lowerBound = carried < claimed || !settled
        return result
    }

    /// Notes an upper-layer claim reaching `end` (TLSCostLayer).
    @inline(__always) func upperClaimed(to end: Int64) { upperEnd = max(upperEnd, end) }

    /// Notes upper-layer bytes before `end` placed on the carrier (TLSCostLayer).
    @inline(__always) func upperPlaced(below end: Int64) { upperPlacedBelow = max(upperPlacedBelow, end) }

    /// Adds bytes of the upper layer (TLS record bytes) the message owns.
    @inline(__always) func addUpper(_ bytes: Int) { tls = saturatingSum(tls, bytes) }
}
