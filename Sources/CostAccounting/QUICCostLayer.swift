import CaptureIO
import DequeModule
import Flows

/// QUIC's cost layers (docs/METERING.md §2d): every byte of a connection's datagrams (QUIC
/// packets, UDP, IP and link headers) lands in one place, a message or an overhead kind.
///
/// A QUIC packet carries pieces of several streams, so the rule is TCP's (`DirectionLedger`)
/// per STREAM frame: a frame's data bytes go byte-wise to the owners of those stream bytes (the
/// reader's claims, per direction and stream), the frame's own header to the owner of its first
/// data byte; the packet's other bytes (header, packet number, AEAD tag, frames beside the
/// STREAM frames) to the owner of its first STREAM frame's first byte, and so do the UDP, IP and
/// link bytes of a datagram whose first packet it is. A packet without STREAM data goes whole to
/// its kind (`Kinds`); zeros after a datagram's last packet are `padding`, bytes no packet
/// could be read from `unclaimed`.
///
/// Settlement: a message's layers are final when the connection closes (its packets may come
/// again until then, and no acknowledgement is followed yet); records wait for it, within the
/// record sink's bound. Its slots' ledgers are the connection ledger's per-stream ones, which
/// close with it.
///
/// Every packet and STREAM frame touches the per-direction state, so it is not checked for
/// overlapping access at run time (`@exclusivity(unchecked)`, as in `LayerSlot`): a layer lives
/// on the parsing thread alone, each change is a plain read-modify-write of one value, and the
/// one closure that runs while a claim map is read (`forEachPiece`'s, in `charge`) changes only
/// `cost`, `overheadUDP` and slots, never the map or the queues. `QUICCostLayerTests` run every
/// path in debug builds.
public final class QUICCostLayer: MessageClaims {
    /// What a packet carried (the QUIC module's `QUICPacketClass`, without depending on it).
    public enum PacketKind: Sendable {
        case handshake, stream, ackOnly, control, unread
    }

    /// The overhead kinds QUIC registers.
    public struct Kinds: Sendable {
        public var handshake: OverheadKind
        public var ack: OverheadKind
        public var control: OverheadKind
        public var padding: OverheadKind

        public init(handshake: OverheadKind, ack: OverheadKind, control: OverheadKind, padding: OverheadKind) {
            self.handshake = handshake
            self.ack = ack
            self.control = control
            self.padding = padding
        }
    }

    private struct StreamKey: Hashable {
        var side: Direction
        var stream: UInt64

        /// One word hashed (stream ids are 62-bit): a STREAM frame's stream is looked up
        /// several times per packet.
        func hash(into hasher: inout Hasher) { hasher.combine(stream << 1 | UInt64(side.rawValue & 1)) }
    }

    /// A stream's claim map, held by reference so that a claim or a settle changes it in place
    /// (one look-up, no copy of its runs).
    private final class StreamClaims {
        @exclusivity(unchecked) var map: ClaimMap
        init(_ map: ClaimMap) { self.map = map }
    }

    private struct SlotKey: Hashable {
        var side: Direction
        var stream: UInt64
        var start: Int64
    }

    /// One STREAM frame of a packet: its data's range, the frame's other bytes, and how many of
    /// its first data bytes repeat bytes sent before.
    private struct Piece {
        var stream: UInt64
        var start: Int64
        var end: Int64
        var frameOverhead: Int
        var repeated: Int
    }

    /// A packet waiting for the owners of its STREAM data: its bytes, the datagram headers it
    /// goes with (0 unless first in its datagram) and how many pieces (`pieces`' front) are its.
    private struct Packet {
        var kind: PacketKind
        var bytes: Int
        var udpHeader: Int
        var ipHeader: Int
        var link: Int
        var pieceCount: Int
    }

    /// The datagram being read, per direction.
    private struct Datagram {
        var payload = 0
        var udpHeader = 0
        var ipHeader = 0
        var link = 0
        var packetBytes = 0
        var headersGiven = false
    }

    private let costs: ConnectionCostLedger
    private let kinds: Kinds
    private let limits: CostLimits
    @exclusivity(unchecked) private var claimMaps: [StreamKey: StreamClaims] = [:]
    /// The claim map looked up last: a packet's stream is looked up at its settle, when it is
    /// placed and when it is charged.
    @exclusivity(unchecked) private var lastClaims: (key: StreamKey, claims: StreamClaims)?
    @exclusivity(unchecked) private var slots: [SlotKey: LayerSlot] = [:]
    /// Per direction: the STREAM frames of waiting packets, then of the packet being read.
    @exclusivity(unchecked) private var pieces: [Deque<Piece>] = [[], []]
    @exclusivity(unchecked) private var piecesOfNextPacket = [0, 0]
    @exclusivity(unchecked) private var waiting: [Deque<Packet>] = [[], []]
    @exclusivity(unchecked) private var datagrams = [Datagram(), Datagram()]
    @exclusivity(unchecked) private var closed = false

    /// Per direction: the totals and the overhead by kind; `total.tcp` and each kind's `tcp`
    /// hold UDP payload bytes (the QUIC layer).
    @exclusivity(unchecked) public private(set) var cost = [DirectionCost(), DirectionCost()]
    /// Per direction: UDP bytes (payload + 8 per datagram) in all, and of each overhead kind
    /// (by `OverheadKind.index`).
    @exclusivity(unchecked) public private(set) var totalUDP = [0, 0]
    @exclusivity(unchecked) public private(set) var overheadUDP = [[Int]](
        repeating: [Int](repeating: 0, count: OverheadKind.capacity), count: 2)

    public init(costs: ConnectionCostLedger, kinds: Kinds, limits: CostLimits) {
        self.costs = costs
        self.kinds = kinds
        self.limits = limits
    }

    // MARK: What the transport read

    /// A datagram of `side` begins: its UDP payload, headers and link bytes (`headerBytes` is
    /// the IP length minus the UDP payload: IP and UDP headers).
    public func beginDatagram(from side: Direction, _ packet: PacketCost) {
        let d = side.rawValue
        let udpHeader = min(8, max(0, packet.headerBytes))
        datagrams[d] = Datagram(
            payload: packet.payloadLength, udpHeader: udpHeader, ipHeader: max(0, packet.headerBytes - udpHeader),
            link: max(0, packet.linkBytes))
        cost[d].total.tcp = saturatingSum(cost[d].total.tcp, packet.payloadLength)
        let ip = saturatingSum(packet.payloadLength, packet.headerBytes)
        cost[d].total.ip = saturatingSum(cost[d].total.ip, ip)
        cost[d].total.frame = saturatingSum(cost[d].total.frame, saturatingSum(ip, packet.linkBytes))
        totalUDP[d] = saturatingSum(totalUDP[d], saturatingSum(packet.payloadLength, udpHeader))
    }

    /// A STREAM frame of the packet being read (they come before `packet`).
    public func streamFrame(
        _ stream: UInt64, from side: Direction, offset: UInt64, dataBytes: Int, frameBytes: Int, repeated: Int
    ) {
        let start = Int64(clamping: offset)
        let d = side.rawValue
        pieces[d].append(
            Piece(
                stream: stream, start: start, end: start &+ Int64(max(0, dataBytes)),
                frameOverhead: max(0, frameBytes - dataBytes), repeated: min(max(0, repeated), max(0, dataBytes))))
        piecesOfNextPacket[d] += 1
    }

    /// A packet of the datagram being read: what it carried and its bytes.
    public func packet(from side: Direction, _ kind: PacketKind, bytes: Int, firstInDatagram: Bool) {
        let d = side.rawValue
        var packet = Packet(kind: kind, bytes: max(0, bytes), udpHeader: 0, ipHeader: 0, link: 0, pieceCount: 0)
        if kind == .stream { packet.pieceCount = piecesOfNextPacket[d] } else { dropPieces(d) }
        piecesOfNextPacket[d] = 0
        if !datagrams[d].headersGiven {
            datagrams[d].headersGiven = true
            packet.udpHeader = datagrams[d].udpHeader
            packet.ipHeader = datagrams[d].ipHeader
            packet.link = datagrams[d].link
        }
        datagrams[d].packetBytes = saturatingSum(datagrams[d].packetBytes, packet.bytes)
        waiting[d].append(packet)
        drain(d)
        while waiting[d].count > max(1, limits.maxPacketsAwaitingOwner) {
            cost[d].forcedPackets += 1
            charge(d, forced: true)
        }
    }

    /// The datagram's packets are read; `padding` of its remaining bytes were zeros after its last
    /// packet, the rest could not be read.
    public func endDatagram(from side: Direction, padding: Int) {
        let d = side.rawValue
        dropPieces(d)
        let datagram = datagrams[d]
        let rest = max(0, datagram.payload - datagram.packetBytes)
        let zeros = min(max(0, padding), rest)
        // A datagram without a packet read gives its headers to its first bytes' kind.
        var headers = !datagram.headersGiven
        if zeros > 0 { chargeRest(zeros, of: datagram, headers: &headers, to: kinds.padding, d) }
        if rest > zeros || headers { chargeRest(rest - zeros, of: datagram, headers: &headers, to: .unclaimed, d) }
        datagrams[d] = Datagram()
    }

    private func chargeRest(_ length: Int, of datagram: Datagram, headers: inout Bool, to kind: OverheadKind, _ d: Int) {
        let udp = headers ? datagram.udpHeader : 0
        let ip = headers ? datagram.ipHeader : 0
        let link = headers ? datagram.link : 0
        headers = false
        let bytes = LayerBytes(tcp: length, ip: length + udp + ip, frame: length + udp + ip + link)
        add(bytes, udpHeader: udp, repeated: 0, carried: 0, packets: 0, to: .overhead(kind), d)
    }

    /// STREAM frames of a packet that turned out not to be a `stream` one (none, normally).
    private func dropPieces(_ d: Int) {
        while piecesOfNextPacket[d] > 0 {
            pieces[d].removeLast()
            piecesOfNextPacket[d] -= 1
        }
    }

    // MARK: What the reader claims

    public func claim(_ range: Range<Int64>, of side: Direction, stream: UInt64, by owner: StreamOwner) {
        let claims = claimsMade(StreamKey(side: side, stream: stream))
        let costOwner = costOwner(owner, side, stream)
        if let placed = claims.map.claim(range.lowerBound, range.upperBound, costOwner),
            case let .message(slot) = costOwner
        {
            slot.claimed = saturatingSum(slot.claimed, Int(clamping: placed.upperBound - placed.lowerBound))
            slot.carrierEnd = max(slot.carrierEnd, placed.upperBound)
        }
        drain(side.rawValue)
    }

    public func settle(_ side: Direction, stream: UInt64, upTo offset: Int64) {
        claimsMade(StreamKey(side: side, stream: stream)).map.settle(upTo: offset)
        drain(side.rawValue)
    }

    /// The stream's claim map, nil before its first claim or settle.
    private func claims(_ key: StreamKey) -> StreamClaims? {
        if let last = lastClaims, last.key == key { return last.claims }
        guard let found = claimMaps[key] else { return nil }
        lastClaims = (key, found)
        return found
    }

    /// The stream's claim map, made empty on first use.
    private func claimsMade(_ key: StreamKey) -> StreamClaims {
        if let found = claims(key) { return found }
        let made = StreamClaims(ClaimMap(maxRuns: limits.maxCostHistoryRuns))
        claimMaps[key] = made
        lastClaims = (key, made)
        return made
    }

    public func takeSlot(of side: Direction, stream: UInt64, startingAt offset: Int64) -> LayerSlot? {
        slots.removeValue(forKey: SlotKey(side: side, stream: stream, start: offset))
    }

    private func costOwner(_ owner: StreamOwner, _ side: Direction, _ stream: UInt64) -> CostOwner {
        switch owner {
        case let .message(start):
            let key = SlotKey(side: side, stream: stream, start: start)
            if let slot = slots[key] { return .message(slot) }
            let slot = LayerSlot(ledger: costs[side, stream: stream])
            // Settled when the connection closes: its end is past anything acknowledged.
            slot.carrierEnd = 0
            slot.layers.udp = 0
            slots[key] = slot
            return .message(slot)
        case let .overhead(kind): return .overhead(kind)
        case .unclaimed: return .unclaimed
        }
    }

    // MARK: Charging

    /// Charges the waiting packets whose STREAM data is placed, in order.
    private func drain(_ d: Int) {
        while let packet = waiting[d].first, isPlaced(packet, d) { charge(d, forced: false) }
    }

    private func isPlaced(_ packet: Packet, _ d: Int) -> Bool {
        let side = Direction(rawValue: d)!
        for index in 0..<packet.pieceCount {
            let piece = pieces[d][index]
            guard let claims = claims(StreamKey(side: side, stream: piece.stream)), claims.map.end >= piece.end else {
                return false
            }
        }
        return true
    }

    /// Charges the first waiting packet; stream bytes without an owner are nobody's.
    private func charge(_ d: Int, forced: Bool) {
        let packet = waiting[d].removeFirst()
        let headerIP = packet.udpHeader + packet.ipHeader
        let datagramHeaders = LayerBytes(tcp: 0, ip: headerIP, frame: headerIP + packet.link)
        let packets = packet.udpHeader > 0 ? 1 : 0
        guard packet.kind == .stream, packet.pieceCount > 0 else {
            let kind: OverheadKind
            switch packet.kind {
            case .handshake: kind = kinds.handshake
            case .ackOnly: kind = kinds.ack
            case .control, .stream: kind = kinds.control
            case .unread: kind = .unclaimed
            }
            var bytes = datagramHeaders
            bytes.tcp = packet.bytes
            bytes.ip = saturatingSum(bytes.ip, packet.bytes)
            bytes.frame = saturatingSum(bytes.frame, packet.bytes)
            add(bytes, udpHeader: packet.udpHeader, repeated: 0, carried: 0, packets: packets, to: .overhead(kind), d)
            return
        }
        let side = Direction(rawValue: d)!
        var head: CostOwner?
        var frameBytes = 0
        var repeatedInPacket = 0
        for _ in 0..<packet.pieceCount {
            let piece = pieces[d].removeFirst()
            frameBytes = saturatingSum(frameBytes, saturatingSum(piece.frameOverhead, Int(clamping: piece.end - piece.start)))
            repeatedInPacket += piece.repeated
            let map = claims(StreamKey(side: side, stream: piece.stream))?.map
            var overhead = piece.frameOverhead
            let repeatedEnd = piece.start &+ Int64(piece.repeated)
            if piece.end == piece.start {
                // A frame without data (a FIN alone): the owner of the byte before it.
                let owner = map?.owner(at: piece.start) ?? (piece.start > 0 ? map?.owner(at: piece.start - 1) : nil)
                    ?? .unclaimed
                if head == nil { head = owner }
                add(LayerBytes(tcp: overhead, ip: overhead, frame: overhead), udpHeader: 0, repeated: 0, carried: 0, packets: 0, to: owner, d)
                continue
            }
            // One closure literal handed straight to a non-escaping parameter: its captures stay
            // on the stack, where a closure value or a local function passed on boxed them, with
            // run-time exclusivity checks on every access (three per STREAM frame).
            map.forEachPiece(in: piece.start..<piece.end) { range, found in
                let owner = found ?? .unclaimed
                if head == nil { head = owner }
                let length = Int(clamping: range.upperBound - range.lowerBound)
                let repeated = Int(clamping: max(0, min(range.upperBound, repeatedEnd) - range.lowerBound))
                let bytes = length + overhead
                overhead = 0
                add(
                    LayerBytes(tcp: bytes, ip: bytes, frame: bytes), udpHeader: 0, repeated: repeated,
                    carried: length - repeated, packets: 0, to: owner, d)
            }
        }
        // The packet's own bytes and its datagram's headers: the owner of its first STREAM byte.
        let rest = max(0, packet.bytes - frameBytes)
        var bytes = datagramHeaders
        bytes.tcp = rest
        bytes.ip = saturatingSum(bytes.ip, rest)
        bytes.frame = saturatingSum(bytes.frame, rest)
        add(bytes, udpHeader: packet.udpHeader, repeated: 0, carried: 0, packets: packets, to: head ?? .unclaimed, d)
        if repeatedInPacket > 0 {
            cost[d].retransmittedSegments += 1
            cost[d].retransmittedBytes = saturatingSum(cost[d].retransmittedBytes, repeatedInPacket)
        }
    }

    private func add(
        _ bytes: LayerBytes, udpHeader: Int, repeated: Int, carried: Int, packets: Int, to owner: CostOwner, _ d: Int
    ) {
        var kind = OverheadKind.unclaimed
        switch owner {
        case let .message(slot) where !slot.sealed && !closed:
            slot.addQUIC(bytes, udpHeaders: udpHeader, repeated: repeated, carried: carried, packets: packets)
            return
        case .message: cost[d].lateCopies += 1
        case let .overhead(overheadKind): kind = overheadKind
        }
        cost[d][kind].add(bytes)
        overheadUDP[d][Int(kind.index)] = saturatingSum(
            overheadUDP[d][Int(kind.index)], saturatingSum(bytes.tcp, udpHeader))
    }

    /// The connection is over (after its reader handed its last records): waiting packets are
    /// charged, stream bytes nobody claimed are nobody's, every slot settles, and the slots no
    /// record took give their bytes to `unclaimed`.
    public func close() {
        guard !closed else { return }
        for d in 0..<2 {
            dropPieces(d)
            while !waiting[d].isEmpty { charge(d, forced: true) }
        }
        closed = true
        costs.close()
        for (key, slot) in slots where !slot.sealed {
            slot.sealed = true
            let d = key.side.rawValue
            let layers = slot.layers
            cost[d][.unclaimed].add(LayerBytes(tcp: layers.tcp, ip: layers.ip, frame: layers.frame))
            overheadUDP[d][Int(OverheadKind.unclaimed.index)] = saturatingSum(
                overheadUDP[d][Int(OverheadKind.unclaimed.index)], layers.udp ?? 0)
        }
        slots = [:]
        claimMaps = [:]
        lastClaims = nil
        for d in 0..<2 {
            cost[d].udp = totalUDP[d]
            cost[d].overheadUDP = overheadUDP[d].reduce(0, +)
        }
    }

    /// Σ over the overhead kinds of one direction's UDP bytes.
    public func overheadUDPSum(_ side: Direction) -> Int { overheadUDP[side.rawValue].reduce(0, +) }
}
