import CaptureIO
import DequeModule
import Flows

/// What one direction of one stream cost, packet by packet, shared out over the messages and
/// the connection's overhead kinds (docs/METERING.md §2c). Packets wait (a bounded queue of
/// plain values) until the bytes they carry are placed. A TCP connection has one stream per
/// direction; a QUIC connection will have one ledger per (direction, stream).
/// Its state is not checked for overlapping access at run time (see `LayerSlot`).
public final class DirectionLedger {
    @exclusivity(unchecked) public private(set) var claims: ClaimMap
    @exclusivity(unchecked) private var pending: Deque<PacketCost> = []
    private let maxPending: Int
    @exclusivity(unchecked) public private(set) var cost = DirectionCost()
    /// When nothing more can come to this direction's bytes: the transport's rule.
    public let settlement: SettlementRule
    @exclusivity(unchecked) public private(set) var closed = false
    /// A tunnel's direction: its claims go, shifted, to the outer connection's direction,
    /// which counts the packets.
    private let forward: (link: TunnelCostLink, outerSide: Direction)?

    public init(
        limits: CostLimits = CostLimits(), settlement: SettlementRule = PeerAcknowledgement(),
        forward: (link: TunnelCostLink, outerSide: Direction)? = nil
    ) {
        claims = ClaimMap(maxRuns: limits.maxCostHistoryRuns)
        maxPending = max(1, limits.maxPacketsAwaitingOwner)
        self.settlement = settlement
        self.forward = forward
    }

    /// The ledger that counts this direction's packets: the outer one for a tunnel.
    public var counting: DirectionLedger {
        guard let forward else { return self }
        return forward.link.outer[forward.outerSide]
    }

    public func hasPending(before offset: Int64) -> Bool { pending.contains { $0.offset < offset } }

    public func claim(_ range: Range<Int64>, by owner: CostOwner) {
        if let forward {
            guard let base = forward.link.base(of: forward.outerSide) else { return }
            return counting.claim((range.lowerBound &+ base)..<(range.upperBound &+ base), by: owner)
        }
        if let placed = claims.claim(range.lowerBound, range.upperBound, owner), case let .message(slot) = owner {
            slot.claimed = saturatingSum(slot.claimed, Int(clamping: placed.upperBound - placed.lowerBound))
            slot.carrierEnd = max(slot.carrierEnd, placed.upperBound)
        }
        drain()
    }

    public func settle(upTo offset: Int64) {
        if let forward {
            guard let base = forward.link.base(of: forward.outerSide) else { return }
            return counting.settle(upTo: offset == .max ? .max : offset &+ base)
        }
        claims.settle(upTo: offset)
        drain()
    }

    public func add(_ packet: PacketCost) {
        guard Self.count(packet, in: &cost) else { return }
        if pending.isEmpty && packet.end <= claims.end {
            charge(packet)
        } else {
            pending.append(packet)
            while pending.count > maxPending {
                // Waited too long for its owner: what is still unplaced belongs to no message.
                let oldest = pending.removeFirst()
                cost.forcedPackets += 1
                claims.settle(upTo: oldest.end)
                charge(oldest)
            }
        }
    }

    /// Counts the packet in the direction's totals (one access to `cost` per packet, not one
    /// per figure); false when it has no payload, so there is nothing more to share out.
    private static func count(_ packet: PacketCost, in cost: inout DirectionCost) -> Bool {
        let payload = packet.payloadLength
        var whole = LayerBytes()
        whole.tcp = payload
        whole.ip = saturatingSum(payload, packet.headerBytes)
        whole.frame = saturatingSum(whole.ip, packet.linkBytes)
        cost.total.tcp = saturatingSum(cost.total.tcp, whole.tcp)
        cost.total.ip = saturatingSum(cost.total.ip, whole.ip)
        cost.total.frame = saturatingSum(cost.total.frame, whole.frame)
        guard payload > 0 else {
            cost[.emptyPackets].add(whole)
            cost.emptyPacketCount += 1
            if packet.repeatsControl { cost.retransmittedSegments += 1 }
            return false
        }
        if packet.repeatedBytes > 0 {
            cost.retransmittedSegments += 1
            cost.retransmittedBytes = saturatingSum(cost.retransmittedBytes, packet.repeatedBytes)
        }
        return true
    }

    /// The connection is over: everything unplaced belongs to no message.
    public func close() {
        guard !closed else { return }
        let last = pending.reduce(claims.end) { max($0, $1.end) }
        claims.settle(upTo: last)
        drain()
        closed = true
    }

    /// A slot whose record never came (bytes a parser dropped): its figures go to `unclaimed`.
    public func release(_ slot: LayerSlot) {
        if forward != nil { return counting.release(slot) }
        guard !slot.sealed else { return }
        slot.sealed = true
        let layers = LayerBytes(tls: slot.tls, tcp: slot.layers.tcp, ip: slot.layers.ip, frame: slot.layers.frame)
        cost[.unclaimed].add(layers)
    }

    /// Bytes of the layer above the carrier (TLS records) of an owner; a message's are in its slot.
    public func addTLS(_ bytes: Int, to owner: CostOwner) {
        switch owner {
        case let .message(slot) where !slot.sealed: slot.addUpper(bytes)
        case .message: cost[.unclaimed].tls = saturatingSum(cost[.unclaimed].tls, bytes)
        case let .overhead(kind): cost[kind].tls = saturatingSum(cost[kind].tls, bytes)
        }
    }

    public func addTLSTotal(_ bytes: Int) { cost.total.tls = saturatingSum(cost.total.tls, bytes) }

    private func drain() {
        while let first = pending.first, first.end <= claims.end { charge(pending.removeFirst()) }
    }

    /// Splits a placed packet: its payload byte-wise by owner, its headers and link bytes to
    /// the owner of its first payload byte.
    private func charge(_ packet: PacketCost) {
        let headers = LayerBytes(
            tcp: 0, ip: packet.headerBytes, frame: saturatingSum(packet.headerBytes, packet.linkBytes))
        if let owner = claims.newestOwner(ofAll: packet.offset..<packet.end) {
            // One owner for the whole packet: headers and payload in one step.
            let length = packet.payloadLength
            var bytes = LayerBytes(tcp: length, ip: saturatingSum(length, headers.ip))
            bytes.frame = saturatingSum(length, headers.frame)
            let repeated = min(length, packet.repeatedBytes)
            if add(bytes, repeated: repeated, carried: length - repeated, packets: 1, to: owner) {
                cost.lateCopies += 1
            }
            return
        }
        let head = claims.owner(at: packet.offset) ?? .unclaimed
        var late = add(headers, repeated: 0, carried: 0, packets: 1, to: head)
        let repeatedEnd = packet.offset &+ Int64(packet.repeatedBytes)
        claims.forEachPiece(in: packet.offset..<packet.end) { piece, owner in
            let length = Int(clamping: piece.upperBound - piece.lowerBound)
            let repeated = Int(clamping: max(0, min(piece.upperBound, repeatedEnd) - piece.lowerBound))
            let pieceLate = add(
                LayerBytes(tcp: length, ip: length, frame: length), repeated: repeated, carried: length - repeated,
                packets: 0, to: owner ?? .unclaimed)
            late = late || pieceLate
        }
        if late { cost.lateCopies += 1 }
    }

    /// Returns true when the bytes were a message's whose record had already taken its figures,
    /// or a copy of bytes the transport had settled (however soon the record takes its figures).
    private func add(_ bytes: LayerBytes, repeated: Int, carried: Int, packets: Int, to owner: CostOwner) -> Bool {
        switch owner {
        case let .message(slot):
            guard !slot.sealed, !closed, repeated == 0 || !slot.isSettled else {
                cost[.unclaimed].add(bytes)
                return true
            }
            slot.add(bytes, repeated: repeated, carried: carried, packets: packets)
        case let .overhead(kind): cost[kind].add(bytes)
        }
        return false
    }
}

/// Every direction and stream of one connection: a ledger per (direction, stream). A TCP
/// connection (HTTP/1.x, HTTP/2, TLS) has stream 0 alone, settled by the peer's ACK, and those two
/// ledgers are inline `let`s: no look-up per packet. Other streams (QUIC's, later) get a ledger
/// of their own on their first claim; the connection's cost per direction sums its streams.
public final class ConnectionCostLedger {
    /// Stream 0 of each direction.
    public let initiator: DirectionLedger
    public let responder: DirectionLedger
    /// TCP's settlement rule, per direction: held concretely, so that an ACK is a direct call.
    private let initiatorAcknowledged: PeerAcknowledgement
    private let responderAcknowledged: PeerAcknowledgement
    private let limits: CostLimits
    /// Streams other than 0, by (direction, stream); empty on TCP.
    private var streams: [StreamKey: DirectionLedger] = [:]

    private struct StreamKey: Hashable {
        var side: Direction
        var stream: UInt64
    }

    public init(limits: CostLimits = CostLimits(), tunnel link: TunnelCostLink? = nil) {
        let initiatorAcknowledged = PeerAcknowledgement()
        let responderAcknowledged = PeerAcknowledgement()
        self.initiatorAcknowledged = initiatorAcknowledged
        self.responderAcknowledged = responderAcknowledged
        self.limits = limits
        initiator = DirectionLedger(
            limits: limits, settlement: initiatorAcknowledged, forward: link.map { ($0, $0.initiatorSide) })
        responder = DirectionLedger(
            limits: limits, settlement: responderAcknowledged, forward: link.map { ($0, $0.initiatorSide.peer) })
    }

    /// Stream 0 of `side`: TCP's one byte stream.
    public subscript(side: Direction) -> DirectionLedger { side == .up ? initiator : responder }

    /// The ledger of `side`'s `stream`, made on first use (stream 0: the inline one). A stream
    /// other than 0 gets its own settlement rule, for its transport to feed.
    public subscript(side: Direction, stream stream: UInt64) -> DirectionLedger {
        if stream == 0 { return self[side] }
        let key = StreamKey(side: side, stream: stream)
        if let known = streams[key] { return known }
        let made = DirectionLedger(limits: limits, settlement: PeerAcknowledgement())
        streams[key] = made
        return made
    }

    /// How far the peer acknowledged `side`'s stream.
    public func acknowledged(_ side: Direction) -> Int64 {
        side == .up ? initiatorAcknowledged.acknowledged : responderAcknowledged.acknowledged
    }

    // Per packet: the `let` ledgers are called directly; the subscript would hand out a
    // retained reference each time. A TCP packet carries stream 0.
    public func add(_ packet: PacketCost, from side: Direction) {
        if side == .up {
            if let acknowledged = packet.acknowledged { responderAcknowledged.acknowledge(upTo: acknowledged) }
            initiator.add(packet)
        } else {
            if let acknowledged = packet.acknowledged { initiatorAcknowledged.acknowledge(upTo: acknowledged) }
            responder.add(packet)
        }
    }

    public func settle(_ side: Direction, stream: UInt64 = 0, upTo offset: Int64) {
        if stream != 0 { return self[side, stream: stream].settle(upTo: offset) }
        if side == .up { initiator.settle(upTo: offset) } else { responder.settle(upTo: offset) }
    }

    /// Everything unplaced belongs to no message; call before the claims' `close`.
    public func close() {
        initiator.close()
        responder.close()
        for ledger in streams.values { ledger.close() }
    }

    /// The cost of the client's and the server's direction, every stream summed; `clientSide`
    /// is the transport side of the client.
    public func costs(clientSide: Direction) -> (client: DirectionCost, server: DirectionCost) {
        var client = self[clientSide].cost
        var server = self[clientSide.peer].cost
        for (key, ledger) in streams {
            if key.side == clientSide { client.add(ledger.cost) } else { server.add(ledger.cost) }
        }
        return (client, server)
    }
}
