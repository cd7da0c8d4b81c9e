import Analysis
import CaptureIO
import DequeModule
import Flows
import MessageModel
import Records
import TCPReassembly

/// One message's cost layers while its packets are counted (docs/METERING.md §2c). Its record
/// takes the figures once the peer has acknowledged the message's last byte (retransmissions
/// come before that ACK) or the connection is over; later copies go to the connection's
/// overhead.
///
/// Its figures and the ledger's state are touched for every packet, so they are not checked
/// for overlapping access at run time (`@exclusivity(unchecked)`, here and in `DirectionLedger`
/// and `CleartextClaims`): a slot and its ledger live on the parsing thread alone, each change is
/// a plain read-modify-write of one value, and no closure or callback runs while one is being
/// changed (`forEachPiece`'s closure reads `claims` and changes the other properties only).
/// `CostLayerTests` and `LowerLayerRunTests` run every path in debug builds.
final class LayerSlot {
    @exclusivity(unchecked) var layers = LowerLayers(tcp: 0, ip: 0, frame: 0)
    /// TLS record bytes the message owns (its plaintext and its records' overhead); 0 in cleartext.
    @exclusivity(unchecked) var tls = 0
    /// TCP stream bytes claimed for the message, and how many of them captured packets carried:
    /// fewer means a gap, and every layer is a lower bound.
    @exclusivity(unchecked) var claimed = 0
    @exclusivity(unchecked) var carried = 0
    /// Just past the message's last claimed TCP byte.
    @exclusivity(unchecked) var tcpEnd: Int64 = .min
    /// Over TLS: how far the message's plaintext was claimed, and how far the TLS records
    /// carrying it were claimed at the TCP level; its TCP end is final once they meet.
    @exclusivity(unchecked) var plaintextEnd: Int64 = .min
    @exclusivity(unchecked) var plaintextClaimedBelow: Int64 = .min
    /// The direction that sent it; weak: a closed connection's ledger may be gone.
    weak var ledger: DirectionLedger?
    /// Set when its record took the figures.
    @exclusivity(unchecked) var sealed = false

    init(ledger: DirectionLedger) { self.ledger = ledger }

    /// Whether nothing more can come to it: the peer acknowledged its end (or the connection
    /// is over) and no waiting packet starts inside it.
    var isSettled: Bool {
        guard let ledger, !ledger.closed else { return true }
        return plaintextClaimedBelow >= plaintextEnd && ledger.acknowledged >= tcpEnd && ledger.claims.end >= tcpEnd
            && !ledger.hasPending(before: tcpEnd)
    }

    /// Counts bytes the message's packets carried (one access to `layers`, not one per figure).
    func add(_ bytes: LayerBytes, repeated: Int, carried: Int, packets: Int) {
        Self.add(bytes, repeated: repeated, packets: packets, to: &layers)
        self.carried = saturatingSum(self.carried, carried)
    }

    private static func add(_ bytes: LayerBytes, repeated: Int, packets: Int, to layers: inout LowerLayers) {
        layers.tcp = saturatingSum(layers.tcp, bytes.tcp)
        layers.ip = saturatingSum(layers.ip, bytes.ip)
        layers.frame = saturatingSum(layers.frame, bytes.frame)
        layers.retransmitted = saturatingSum(layers.retransmitted, repeated)
        layers.packets += packets
    }

    /// The record's layers; what comes after goes to the connection's overhead. Taken before
    /// they settled (too many records waiting), they are lower bounds.
    func seal(settled: Bool) -> LowerLayers {
        sealed = true
        var result = layers
        result.lowerBound = carried < claimed || !settled
        return result
    }
}

/// Who a run of stream bytes belongs to, below the HTTP layer.
enum CostOwner {
    case message(LayerSlot)
    case tlsControl
    case http2Control
    case unclaimed

    func isSame(as other: CostOwner) -> Bool {
        switch (self, other) {
        case let (.message(a), .message(b)): return a === b
        case (.tlsControl, .tlsControl), (.http2Control, .http2Control), (.unclaimed, .unclaimed): return true
        default: return false
        }
    }
}

/// One direction's stream cut into runs by owner, in stream order, with a bounded history so
/// that a late copy finds the message whose bytes it repeats. Offsets before `end` are placed.
struct ClaimMap {
    struct Run {
        var start: Int64
        var end: Int64
        var owner: CostOwner
    }

    private(set) var runs: Deque<Run> = []
    /// Every byte before this offset has an owner.
    private(set) var end: Int64 = 0
    let maxRuns: Int

    init(maxRuns: Int) { self.maxRuns = max(2, maxRuns) }

    /// Gives `start..<stop` to `owner` (the part before `end` is placed already); bytes between
    /// `end` and `start` belong to no message. Returns the range newly placed for `owner`.
    @discardableResult
    mutating func claim(_ start: Int64, _ stop: Int64, _ owner: CostOwner) -> Range<Int64>? {
        if start > end { append(end, start, .unclaimed) }
        let from = max(start, end)
        guard stop > from else { return nil }
        append(from, stop, owner)
        return from..<stop
    }

    /// Whatever no claim took before `offset` belongs to no message.
    mutating func settle(upTo offset: Int64) {
        if offset > end { append(end, offset, .unclaimed) }
    }

    private mutating func append(_ start: Int64, _ stop: Int64, _ owner: CostOwner) {
        if var last = runs.last, last.end == start, last.owner.isSame(as: owner) {
            last.end = stop
            runs[runs.count - 1] = last
        } else {
            runs.append(Run(start: start, end: stop, owner: owner))
            if runs.count > maxRuns { runs.removeFirst() }
        }
        end = stop
    }

    /// The index of the run holding `offset`, nil when it is before the history or not placed.
    private func index(of offset: Int64) -> Int? {
        guard let first = runs.first, offset >= first.start, offset < end else { return nil }
        var low = 0
        var high = runs.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if runs[middle].start <= offset { low = middle } else { high = middle - 1 }
        }
        return offset < runs[low].end ? low : nil
    }

    func owner(at offset: Int64) -> CostOwner? { index(of: offset).map { runs[$0].owner } }

    /// The owner of all of `range` when the newest run holds it (the common case: a packet of
    /// the message being read), nil otherwise.
    func newestOwner(ofAll range: Range<Int64>) -> CostOwner? {
        guard let last = runs.last, range.lowerBound >= last.start, range.upperBound <= last.end else { return nil }
        return last.owner
    }

    /// Calls `body` for each owned piece of `range`, in order; pieces no run covers (before the
    /// history, or not placed) come with a nil owner.
    func forEachPiece(in range: Range<Int64>, _ body: (Range<Int64>, CostOwner?) -> Void) {
        var cursor = range.lowerBound
        var runIndex: Int? = index(of: cursor)
        if runIndex == nil, let first = runs.first, cursor < first.start {
            let stop = min(range.upperBound, first.start)
            body(cursor..<stop, nil)
            cursor = stop
            runIndex = cursor < range.upperBound ? index(of: cursor) : nil
        }
        while cursor < range.upperBound, let i = runIndex, i < runs.count {
            let stop = min(range.upperBound, runs[i].end)
            body(cursor..<stop, runs[i].owner)
            cursor = stop
            runIndex = i + 1
        }
        if cursor < range.upperBound { body(cursor..<range.upperBound, nil) }
    }
}

/// What one direction of a connection cost, packet by packet, shared out over the messages
/// and the connection's overhead kinds (docs/METERING.md §2c). Packets wait (a bounded queue
/// of plain values) until the bytes they carry are placed.
/// Its state is not checked for overlapping access at run time (see `LayerSlot`).
final class DirectionLedger {
    @exclusivity(unchecked) private(set) var claims: ClaimMap
    @exclusivity(unchecked) private var pending: Deque<PacketCost> = []
    private let maxPending: Int
    @exclusivity(unchecked) private(set) var cost = DirectionCost()
    /// How far the peer acknowledged this direction's stream.
    @exclusivity(unchecked) var acknowledged: Int64 = .min
    @exclusivity(unchecked) private(set) var closed = false
    /// A tunnel's direction: its claims go, shifted, to the outer connection's direction,
    /// which counts the packets.
    private let forward: (link: TunnelCostLink, outerSide: Direction)?

    init(limits: Limits, forward: (link: TunnelCostLink, outerSide: Direction)? = nil) {
        claims = ClaimMap(maxRuns: limits.maxCostHistoryRuns)
        maxPending = max(1, limits.maxPacketsAwaitingOwner)
        self.forward = forward
    }

    /// The ledger that counts this direction's packets: the outer one for a tunnel.
    var counting: DirectionLedger {
        guard let forward else { return self }
        return forward.link.outer[forward.outerSide]
    }

    /// The peer acknowledged this direction's stream up to `offset`.
    func acknowledge(upTo offset: Int64) {
        if offset > acknowledged { acknowledged = offset }
    }

    func hasPending(before offset: Int64) -> Bool { pending.contains { $0.offset < offset } }

    func claim(_ range: Range<Int64>, by owner: CostOwner) {
        if let forward {
            guard let base = forward.link.base(of: forward.outerSide) else { return }
            return counting.claim((range.lowerBound &+ base)..<(range.upperBound &+ base), by: owner)
        }
        if let placed = claims.claim(range.lowerBound, range.upperBound, owner), case let .message(slot) = owner {
            slot.claimed = saturatingSum(slot.claimed, Int(clamping: placed.upperBound - placed.lowerBound))
            slot.tcpEnd = max(slot.tcpEnd, placed.upperBound)
        }
        drain()
    }

    func settle(upTo offset: Int64) {
        if let forward {
            guard let base = forward.link.base(of: forward.outerSide) else { return }
            return counting.settle(upTo: offset == .max ? .max : offset &+ base)
        }
        claims.settle(upTo: offset)
        drain()
    }

    func add(_ packet: PacketCost) {
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
            cost.emptyPackets.add(whole)
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
    func close() {
        guard !closed else { return }
        let last = pending.reduce(claims.end) { max($0, $1.end) }
        claims.settle(upTo: last)
        drain()
        closed = true
    }

    /// A slot whose record never came (bytes a parser dropped): its figures go to `unclaimed`.
    func release(_ slot: LayerSlot) {
        if forward != nil { return counting.release(slot) }
        guard !slot.sealed else { return }
        slot.sealed = true
        let layers = LayerBytes(tls: slot.tls, tcp: slot.layers.tcp, ip: slot.layers.ip, frame: slot.layers.frame)
        cost.unclaimed.add(layers)
    }

    /// TLS record bytes (the layer above TCP) of an overhead kind; a message's are in its slot.
    func addTLS(_ bytes: Int, to owner: CostOwner) {
        switch owner {
        case let .message(slot) where !slot.sealed: slot.tls = saturatingSum(slot.tls, bytes)
        case .message, .unclaimed: cost.unclaimed.tls = saturatingSum(cost.unclaimed.tls, bytes)
        case .tlsControl: cost.tlsControl.tls = saturatingSum(cost.tlsControl.tls, bytes)
        case .http2Control: cost.http2Control.tls = saturatingSum(cost.http2Control.tls, bytes)
        }
    }

    func addTLSTotal(_ bytes: Int) { cost.total.tls = saturatingSum(cost.total.tls, bytes) }

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
    /// or a copy of bytes the peer had acknowledged (however soon the record takes its figures).
    private func add(_ bytes: LayerBytes, repeated: Int, carried: Int, packets: Int, to owner: CostOwner) -> Bool {
        switch owner {
        case let .message(slot):
            guard !slot.sealed, !closed, repeated == 0 || !slot.isSettled else {
                cost.unclaimed.add(bytes)
                return true
            }
            slot.add(bytes, repeated: repeated, carried: carried, packets: packets)
        case .tlsControl: cost.tlsControl.add(bytes)
        case .http2Control: cost.http2Control.add(bytes)
        case .unclaimed: cost.unclaimed.add(bytes)
        }
        return false
    }
}

/// Both directions of one TCP connection.
final class ConnectionCostLedger {
    let initiator: DirectionLedger
    let responder: DirectionLedger

    init(limits: Limits, tunnel link: TunnelCostLink? = nil) {
        initiator = DirectionLedger(limits: limits, forward: link.map { ($0, $0.initiatorSide) })
        responder = DirectionLedger(limits: limits, forward: link.map { ($0, $0.initiatorSide.peer) })
    }

    subscript(side: Direction) -> DirectionLedger { side == .up ? initiator : responder }

    // Per packet: the `let` ledgers are called directly; the subscript would hand out a
    // retained reference each time.
    func add(_ packet: PacketCost, from side: Direction) {
        if side == .up {
            if let acknowledged = packet.acknowledged { responder.acknowledge(upTo: acknowledged) }
            initiator.add(packet)
        } else {
            if let acknowledged = packet.acknowledged { initiator.acknowledge(upTo: acknowledged) }
            responder.add(packet)
        }
    }

    func settle(_ side: Direction, upTo offset: Int64) {
        if side == .up { initiator.settle(upTo: offset) } else { responder.settle(upTo: offset) }
    }

    /// Everything unplaced belongs to no message; call before the claims' `close`.
    func close() {
        initiator.close()
        responder.close()
    }

    /// Fills a row's cost columns; `clientSide` is the TCP side of the row's client.
    func fill(_ row: inout ConnectionRow, clientSide: Direction) {
        row.clientCost = self[clientSide].cost
        row.serverCost = self[clientSide.peer].cost
    }
}

/// Claims of an HTTP layer that reads the TCP stream itself (cleartext HTTP/1.x, h2c): its
/// sides are TCP sides, its offsets TCP offsets, and its messages' slots wait here for their
/// records.
/// Its slot tables are not checked for overlapping access at run time (see `LayerSlot`).
final class CleartextClaims: MessageClaims {
    private let ledger: ConnectionCostLedger
    @exclusivity(unchecked) private var slots: [[Int64: LayerSlot]] = [[:], [:]]

    init(ledger: ConnectionCostLedger) { self.ledger = ledger }

    func claim(_ range: Range<Int64>, of side: Direction, by owner: StreamOwner) {
        ledger[side].claim(range, by: costOwner(owner, side))
    }

    func settle(_ side: Direction, upTo offset: Int64) { ledger.settle(side, upTo: offset) }

    func takeSlot(of side: Direction, startingAt offset: Int64) -> LayerSlot? {
        slots[side.rawValue].removeValue(forKey: offset)
    }

    /// Per side, the message claimed last: the same one claims again with each packet.
    @exclusivity(unchecked) private var lastClaimed: [(start: Int64, slot: LayerSlot)?] = [nil, nil]

    private func costOwner(_ owner: StreamOwner, _ side: Direction) -> CostOwner {
        switch owner {
        case let .message(start):
            if let last = lastClaimed[side.rawValue], last.start == start, !last.slot.sealed {
                return .message(last.slot)
            }
            // Stored only when new: a hit is one look-up, not a look-up and a write.
            let slot: LayerSlot
            if let known = slots[side.rawValue][start] {
                slot = known
            } else {
                slot = LayerSlot(ledger: ledger[side].counting)
                slots[side.rawValue][start] = slot
            }
            lastClaimed[side.rawValue] = (start, slot)
            return .message(slot)
        case .overhead: return .http2Control  // HTTP/2's control bytes: the one kind a protocol claims
        case .unclaimed: return .unclaimed
        }
    }

    /// Slots no record took: their bytes belong to no message.
    func close() {
        for side in [Direction.up, .down] {
            for slot in slots[side.rawValue].values { ledger[side].release(slot) }
            slots[side.rawValue] = [:]
        }
    }
}

/// Where an HTTP layer's claims go (docs/METERING.md §2c), and where a finished message finds
/// the slot its packets were counted in. Sides and offsets are the HTTP layer's.
protocol MessageClaims: AnyObject {
    func claim(_ range: Range<Int64>, of side: Direction, by owner: StreamOwner)
    func settle(_ side: Direction, upTo offset: Int64)
    func takeSlot(of side: Direction, startingAt offset: Int64) -> LayerSlot?
}

/// The claims of a reader inside a connection's stream (the HTTP/2 an h2c Upgrade started):
/// its offsets count from the tunnel's first byte and its initiator is the client, so each
/// claim is shifted and turned to the outer connection's sides and offsets.
final class TunnelClaims: MessageClaims {
    private let outer: MessageClaims
    /// The outer side that is the tunnel's initiator.
    private let initiatorSide: Direction
    /// Per tunnel side: the outer offset of its first byte, once known.
    private var base: [Int64?] = [nil, nil]

    init(outer: MessageClaims, initiatorSide: Direction) {
        self.outer = outer
        self.initiatorSide = initiatorSide
    }

    private func outerSide(_ side: Direction) -> Direction { side == .up ? initiatorSide : initiatorSide.peer }

    /// The outer connection's `side` begins the tunnel at `offset`.
    func begins(onOuter side: Direction, at offset: Int64) {
        base[side == initiatorSide ? 0 : 1] = offset
    }

    func claim(_ range: Range<Int64>, of side: Direction, by owner: StreamOwner) {
        guard let shift = base[side.rawValue] else { return }
        var shifted = owner
        if case let .message(start) = owner { shifted = .message(startingAt: start &+ shift) }
        outer.claim((range.lowerBound &+ shift)..<(range.upperBound &+ shift), of: outerSide(side), by: shifted)
    }

    func settle(_ side: Direction, upTo offset: Int64) {
        guard let shift = base[side.rawValue] else { return }
        outer.settle(outerSide(side), upTo: offset == .max ? .max : offset &+ shift)
    }

    func takeSlot(of side: Direction, startingAt offset: Int64) -> LayerSlot? {
        guard let shift = base[side.rawValue] else { return nil }
        return outer.takeSlot(of: outerSide(side), startingAt: offset &+ shift)
    }
}

/// What ties a proxy `CONNECT` tunnel's ledger to its outer connection's: the tunnel's claims
/// (offsets from its first byte, its initiator the client) are shifted onto the outer
/// connection's stream, whose packets carried them (docs/METERING.md §2c).
final class TunnelCostLink {
    let outer: ConnectionCostLedger
    /// The outer side that is the tunnel's initiator.
    let initiatorSide: Direction
    /// Per outer side: the offset of the tunnel's first byte, once known.
    private var bases: [Int64?] = [nil, nil]

    init(outer: ConnectionCostLedger, initiatorSide: Direction) {
        self.outer = outer
        self.initiatorSide = initiatorSide
    }

    func begins(onOuter side: Direction, at offset: Int64) { bases[side.rawValue] = offset }

    func base(of outerSide: Direction) -> Int64? { bases[outerSide.rawValue] }
}
