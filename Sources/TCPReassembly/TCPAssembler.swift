import CaptureIO
import Flows
import PacketLayers

/// Turns TCP segments, in capture order, into ordered byte streams per connection
/// (gopacket's assembler): retransmissions and overlaps are trimmed, segments that arrive
/// ahead of a hole wait in a bounded buffer, and bytes the capture lost become gaps.
///
/// A hole is given up as lost, and reported as a gap, when the peer acknowledges data past
/// it (the receiver had the bytes, so the capture missed them), when the buffers go over
/// their limits, or when the connection ends.
///
/// A RST ends the connection only once its sender has gone quiet: until then it is pending,
/// and if the sender goes on (new data, or acknowledging more of the peer's stream) the RST
/// was forged or not taken, and is counted in `ignoredResets` instead. A pending RST takes
/// effect, at its own time, after `closedLinger` of capture time without such a sign, at a
/// new SYN on the 4-tuple, or at the end of the capture.
public final class TCPAssembler {
    public let limits: ReassemblyLimits
    private let factory: ByteStreamHandlerFactory
    private var connections: [FlowKey: Connection] = [:]
    /// The connection of the previous segment: captures mostly carry runs of packets of one
    /// connection, and comparing keys is much cheaper than hashing one.
    private var lastFlow: (key: FlowKey, connection: Connection)?
    private var nextConnectionNumber = 0
    /// Out-of-order bytes held over all connections (internal: tests check it stays bounded).
    private(set) var bufferedBytesTotal = 0
    private var lastSweep: Int64 = .min
    /// Payload bytes of the packet being handled that repeat bytes already seen (not those of
    /// buffered segments it lets through).
    private var packetRepeated = 0

    /// Connections seen so far.
    public var connectionCount: Int { nextConnectionNumber }

    /// Takes the next connection number for a flow of another transport (UDP), so that the
    /// numbers of one input stay unique and in order of first packet.
    public func takeConnectionNumber() -> Int {
        defer { nextConnectionNumber += 1 }
        return nextConnectionNumber
    }
    /// Packets with no payload that belonged to no known connection (stray ACKs, late RSTs).
    public private(set) var strayControlPackets = 0
    /// RSTs that did not end their connection because the sender went on (over all connections).
    public private(set) var ignoredResets = 0

    public init(limits: ReassemblyLimits = ReassemblyLimits(), factory: ByteStreamHandlerFactory) {
        self.limits = limits
        self.factory = factory
    }

    /// Feeds one segment. Its payload is only read during the call.
    public func process(_ segment: TCPSegment) {
        sweepIdleConnections(now: segment.timestamp)
        let key = FlowKey(segment.source, segment.destination)
        let flags = segment.flags

        var connection = lastFlow?.key == key ? lastFlow?.connection : connections[key]
        if let existing = connection, flags.contains(.syn), existing.state.isReusedBy(segment) {
            if !applyPendingReset(existing) {
                flush(&existing.state, reason: .portReuse, time: segment.timestamp)
            }
            evict(key, existing)
            connection = nil
        }
        if connection == nil {
            guard segment.payloadLength > 0 || flags.contains(.syn), !flags.contains(.rst) else {
                strayControlPackets += 1
                return
            }
            connection = open(key, segment)
        }
        let current = connection!
        lastFlow = (key, current)
        // One access to the connection's state for the whole segment (see `Connection`).
        handle(segment, in: &current.state)
    }

    /// End of capture: flushes every open connection, in order of their numbers.
    public func finish() {
        let remaining = connections.sorted { $0.value.info.number < $1.value.info.number }
        for (key, connection) in remaining {
            if !applyPendingReset(connection), !connection.state.isFinished {
                flush(&connection.state, reason: .endOfCapture, time: connection.state.accounting.lastPacketTime)
            }
            evict(key, connection)
        }
    }

    /// Ends `connection` by its pending RST, at the RST's time; false when none is pending.
    private func applyPendingReset(_ connection: Connection) -> Bool {
        guard let reset = connection.state.pendingReset else { return false }
        connection.state.pendingReset = nil
        flush(&connection.state, reason: .reset, time: reset.time)
        return true
    }

    // MARK: - Connections

    private func open(_ key: FlowKey, _ segment: TCPSegment) -> Connection {
        let flags = segment.flags
        // A SYN-ACK without its SYN still tells who the client is.
        let synAck = flags.contains(.syn) && flags.contains(.ack)
        let info = ConnectionInfo(
            number: nextConnectionNumber,
            initiator: synAck ? segment.destination : segment.source,
            responder: synAck ? segment.source : segment.destination,
            sawHandshake: flags.contains(.syn),
            firstPacketTime: segment.timestamp)
        nextConnectionNumber += 1
        let connection = Connection(info: info, handler: factory.makeHandler(for: info))
        connections[key] = connection
        return connection
    }

    private func evict(_ key: FlowKey, _ connection: Connection) {
        connections[key] = nil
        if lastFlow?.key == key { lastFlow = nil }
        for side in [Direction.up, .down] {
            bufferedBytesTotal -= connection.state.halves[side.rawValue].bufferedBytes
            connection.state.halves[side.rawValue].buffered = []
            connection.state.halves[side.rawValue].bufferedBytes = 0
        }
        connection.state.handler.close(connection.state.accounting)
    }

    private func sweepIdleConnections(now: Int64) {
        guard now >= saturatingSum(lastSweep, 1_000_000_000) || now < lastSweep else { return }
        lastSweep = now
        var expired: [(FlowKey, Connection)] = []
        for (key, connection) in connections {
            // Timestamps come from the input: a jump across the Int64 range saturates.
            let idle = Self.saturatingDifference(now, connection.state.accounting.lastPacketTime)
            let closing = connection.state.isFinished || connection.state.pendingReset != nil
            if idle > limits.idleTimeout || (closing && idle > limits.closedLinger) {
                expired.append((key, connection))
            }
        }
        guard !expired.isEmpty else { return }
        expired.sort { $0.1.info.number < $1.1.info.number }
        for (key, connection) in expired {
            if !applyPendingReset(connection), !connection.state.isFinished {
                flush(&connection.state, reason: .idle, time: now)
            }
            evict(key, connection)
        }
    }

    /// `a - b`, saturated at the ends of Int64 instead of trapping.
    static func saturatingDifference(_ a: Int64, _ b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        // a - b overflows upwards only when a >= 0 > b, downwards only when a < 0 <= b.
        return overflow ? (a >= 0 ? .max : .min) : difference
    }

    // MARK: - Segments

    /// Places the segment, then tells the handler what the packet cost: its stream offset, its
    /// layers, the payload bytes that repeated bytes already seen and what it acknowledged.
    private func handle(_ segment: TCPSegment, in connection: inout ConnectionState) {
        let side = connection.side(sentBy: segment.source)
        let s = side.rawValue
        packetRepeated = 0
        let dataSequence = segment.flags.contains(.syn) ? segment.sequence &+ 1 : segment.sequence
        // Taken before placing: offsets are read relative to the delivery point, which moves.
        var offset = connection.halves[s].started ? connection.halves[s].offset(of: dataSequence) : nil
        let repeatsControl = segment.payloadLength <= 0 && repeatsControl(segment, offset, connection, side)
        place(segment, in: &connection, from: side)
        if offset == nil, connection.halves[s].started { offset = connection.halves[s].offset(of: dataSequence) }
        let p = side.peer.rawValue
        let acknowledged =
            segment.flags.contains(.ack) && connection.halves[p].started
            ? connection.halves[p].offset(of: segment.acknowledgment) : nil
        let payload = max(0, segment.payloadLength)
        let ip = max(segment.ipLength, payload)
        let cost = PacketCost(
            time: segment.timestamp, offset: offset ?? 0, payloadLength: payload, headerBytes: ip - payload,
            linkBytes: max(0, segment.frameLength - ip),
            repeatedBytes: min(payload, packetRepeated), repeatsControl: repeatsControl,
            acknowledged: acknowledged)
        connection.handler.packet(cost, from: side)
    }

    /// A SYN or FIN without payload that its sender already sent: the kernel counts it as a
    /// retransmitted segment, so the costs do too.
    private func repeatsControl(
        _ segment: TCPSegment, _ offset: Int64?, _ connection: ConnectionState, _ side: Direction
    ) -> Bool {
        if segment.flags.contains(.syn) { return connection.halves[side.rawValue].sawSYN }
        guard segment.flags.contains(.fin), let offset, let fin = connection.halves[side.rawValue].finOffset else {
            return false
        }
        return offset == fin
    }

    private func place(_ segment: TCPSegment, in connection: inout ConnectionState, from side: Direction) {
        let flags = segment.flags
        let time = segment.timestamp
        connection.account(segment, from: side)
        if connection.isFinished {
            countLateCopy(segment, in: &connection, from: side)
            return
        }

        let s = side.rawValue
        let p = side.peer.rawValue
        let dataSequence = flags.contains(.syn) ? segment.sequence &+ 1 : segment.sequence
        if flags.contains(.rst) {
            // Held back (see the type's comment); what the sender had sent and acknowledged
            // so far is what "going on" is measured against. A second RST changes nothing.
            if connection.pendingReset == nil {
                connection.pendingReset = PendingReset(
                    side: side, time: time, sentEnd: connection.halves[s].sentEnd,
                    acknowledgedPeer: connection.halves[s].acknowledgedPeer)
            }
            return
        }
        if let reset = connection.pendingReset, reset.side == side,
            goesOn(segment, dataSequence: dataSequence, in: connection, after: reset)
        {
            connection.pendingReset = nil
            connection.accounting.ignoredResets += 1
            ignoredResets += 1
        }

        if flags.contains(.syn) {
            connection.halves[s].sawSYN = true
            if !connection.halves[s].started || connection.halves[s].nextOffset == 0 {
                connection.halves[s].start(at: dataSequence)
            }
        } else if !connection.halves[s].started {
            connection.halves[s].start(at: dataSequence)
        }

        // The sender's ACK tells how much of the peer's stream really arrived.
        var peerAcknowledged: Int64?
        if flags.contains(.ack), connection.halves[p].started {
            let acknowledged = connection.halves[p].offset(of: segment.acknowledgment)
            peerAcknowledged = acknowledged
            connection.halves[s].acknowledgedPeer = max(
                connection.halves[s].acknowledgedPeer ?? acknowledged, acknowledged)
            var limit = acknowledged
            if let fin = connection.halves[p].finOffset { limit = min(limit, fin) }
            if limit > connection.halves[p].nextOffset, !connection.halves[p].ended {
                skipHoles(&connection, side.peer, upTo: limit, time: time)
            }
        }

        guard !connection.halves[s].ended else {
            countLateCopy(segment, in: &connection, from: side)
            return
        }
        let offset = connection.halves[s].offset(of: dataSequence)
        if segment.payloadLength > 0 {
            let end = offset + Int64(segment.payloadLength)
            connection.halves[s].sentEnd = max(connection.halves[s].sentEnd ?? end, end)
        }
        // Sequence space advances by payloadLength; captured bytes beyond it are not TCP data.
        let bytes =
            segment.payload.count > segment.payloadLength
            ? UnsafeRawBufferPointer(rebasing: segment.payload[..<max(0, segment.payloadLength)]) : segment.payload
        let incoming = Incoming(
            offset: offset, bytes: bytes, missingTail: max(0, segment.payloadLength - bytes.count),
            fin: flags.contains(.fin), time: time, peerAcknowledged: peerAcknowledged)
        accept(incoming, in: &connection, from: side)
    }

    /// Whether `segment`, from the side that sent the pending RST, shows that side going on:
    /// payload past all it had sent before the RST, or an ACK of more of the peer's stream
    /// than it had acknowledged. A genuine RST's sender sends neither; a retransmission or a
    /// repeated ACK (in flight when the RST left) shows nothing.
    private func goesOn(
        _ segment: TCPSegment, dataSequence: UInt32, in connection: ConnectionState,
        after reset: PendingReset
    ) -> Bool {
        let half = connection.halves[reset.side.rawValue]
        let peer = connection.halves[reset.side.peer.rawValue]
        if segment.payloadLength > 0, half.started {
            let end = half.offset(of: dataSequence) + Int64(segment.payloadLength)
            if end > reset.sentEnd ?? half.nextOffset { return true }
        }
        if segment.flags.contains(.ack), peer.started {
            let acknowledged = peer.offset(of: segment.acknowledgment)
            if let before = reset.acknowledgedPeer { return acknowledged > before }
            return true
        }
        return false
    }

    /// Payload from a side that has ended: the part before its end repeats bytes already
    /// seen (a retransmission the receiver did not need); anything past the end is dropped.
    private func countLateCopy(_ segment: TCPSegment, in connection: inout ConnectionState, from side: Direction) {
        let half = connection.halves[side.rawValue]
        guard segment.payloadLength > 0, half.started else { return }
        let sequence = segment.flags.contains(.syn) ? segment.sequence &+ 1 : segment.sequence
        let offset = half.offset(of: sequence)
        let repeated = min(Int64(segment.payloadLength), half.nextOffset - offset)
        if repeated > 0 {
            connection.accounting[side].retransmittedBytes += Int(repeated)
            packetRepeated += Int(repeated)
        }
    }

    /// One run of stream bytes about to be placed: borrowed from a packet or from the buffer.
    private struct Incoming {
        var offset: Int64
        var bytes: UnsafeRawBufferPointer
        var missingTail: Int
        var fin: Bool
        var time: Int64
        var peerAcknowledged: Int64?
        /// False for a buffered segment let through later: its packet's cost was told already.
        var direct = true

        var length: Int { bytes.count + missingTail }
        var end: Int64 { offset + Int64(length) }
    }

    private func accept(_ incoming: Incoming, in connection: inout ConnectionState, from side: Direction) {
        let s = side.rawValue
        if incoming.offset > connection.halves[s].nextOffset {
            if incoming.length > 0 || incoming.fin {
                buffer(incoming, in: &connection, from: side)
            }
            return
        }
        deliver(incoming, in: &connection, from: side)
        drainBuffered(&connection, side)
        endIfFinished(&connection, side, time: incoming.time)
    }

    /// Delivers the part of `incoming` past the delivery point; `incoming` starts at or before it.
    private func deliver(_ incoming: Incoming, in connection: inout ConnectionState, from side: Direction) {
        let s = side.rawValue
        let next = connection.halves[s].nextOffset
        if incoming.fin, connection.halves[s].finOffset == nil {
            connection.halves[s].finOffset = incoming.end
        }
        guard incoming.end > next else {
            connection.accounting[side].retransmittedBytes += incoming.length
            if incoming.direct { packetRepeated += incoming.length }
            return
        }
        let overlap = Int(next - incoming.offset)
        connection.accounting[side].retransmittedBytes += overlap
        if incoming.direct { packetRepeated += overlap }
        let position = StreamPosition(time: incoming.time, offset: next, peerAcknowledged: incoming.peerAcknowledged)
        if overlap < incoming.bytes.count {
            let fresh = UnsafeRawBufferPointer(rebasing: incoming.bytes[overlap...])
            connection.handler.receive(fresh, from: side, at: position)
        }
        let missing = min(incoming.missingTail, incoming.length - overlap)
        connection.halves[s].nextOffset = incoming.end
        if missing > 0 {
            connection.accounting[side].truncatedBytes += missing
            var gapPosition = position
            gapPosition.offset = incoming.end - Int64(missing)
            connection.handler.gap(missing, from: side, at: gapPosition)
        }
    }

    private func buffer(_ incoming: Incoming, in connection: inout ConnectionState, from side: Direction) {
        let s = side.rawValue
        let size = incoming.bytes.count
        if connection.halves[s].bufferedBytes + size > limits.maxBufferedBytesPerSide
            || bufferedBytesTotal + size > limits.maxBufferedBytesTotal
        {
            // Over a limit: give up the hole in front of this segment.
            skipHoles(&connection, side, upTo: incoming.offset, time: incoming.time)
            if !connection.halves[s].ended { accept(incoming, in: &connection, from: side) }
            return
        }
        let segment = BufferedSegment(
            offset: incoming.offset, bytes: Array(incoming.bytes),
            missingTail: incoming.missingTail, fin: incoming.fin,
            time: incoming.time, peerAcknowledged: incoming.peerAcknowledged)
        if connection.halves[s].insert(segment) {
            bufferedBytesTotal += size
            connection.accounting[side].outOfOrderSegments += 1
        } else {
            connection.accounting[side].retransmittedBytes += incoming.length
            packetRepeated += incoming.length
        }
    }

    /// Delivers buffered segments that the delivery point has reached, up to the FIN: bytes
    /// past it are not part of the stream.
    private func drainBuffered(_ connection: inout ConnectionState, _ side: Direction) {
        let s = side.rawValue
        while let first = connection.halves[s].buffered.first, first.offset <= connection.halves[s].nextOffset,
            first.offset < connection.halves[s].finOffset ?? .max
        {
            let segment = connection.halves[s].removeFirstBuffered()
            bufferedBytesTotal -= segment.bytes.count
            segment.bytes.withUnsafeBytes { bytes in
                deliver(
                    Incoming(
                        offset: segment.offset, bytes: bytes, missingTail: segment.missingTail,
                        fin: segment.fin, time: segment.time, peerAcknowledged: segment.peerAcknowledged,
                        direct: false),
                    in: &connection, from: side)
            }
        }
    }

    /// Gives up every hole before `limit`: buffered data is delivered with gaps in between,
    /// and a hole that reaches `limit` becomes a gap of its own.
    private func skipHoles(_ connection: inout ConnectionState, _ side: Direction, upTo limit: Int64, time: Int64) {
        let s = side.rawValue
        // The FIN takes a sequence number but no stream byte, and may only become known while
        // draining: an ACK of it must not leave a 1-byte gap behind it.
        while connection.halves[s].nextOffset < min(limit, connection.halves[s].finOffset ?? limit) {
            let next = connection.halves[s].nextOffset
            let holeEnd = min(limit, connection.halves[s].buffered.first?.offset ?? limit)
            if holeEnd > next {
                reportGap(Int(holeEnd - next), in: &connection, side, at: next, time: time)
                connection.halves[s].nextOffset = holeEnd
            }
            drainBuffered(&connection, side)
        }
        endIfFinished(&connection, side, time: time)
    }

    private func reportGap(
        _ length: Int, in connection: inout ConnectionState, _ side: Direction, at offset: Int64, time: Int64
    ) {
        connection.accounting[side].gaps += 1
        connection.accounting[side].gapBytes += length
        connection.handler.gap(
            length, from: side, at: StreamPosition(time: time, offset: offset, peerAcknowledged: nil))
    }

    private func endIfFinished(_ connection: inout ConnectionState, _ side: Direction, time: Int64) {
        let s = side.rawValue
        guard !connection.halves[s].ended, let fin = connection.halves[s].finOffset,
            connection.halves[s].nextOffset >= fin
        else { return }
        end(&connection, side, reason: .fin, time: time)
    }

    private func end(_ connection: inout ConnectionState, _ side: Direction, reason: StreamEndReason, time: Int64) {
        connection.halves[side.rawValue].ended = true
        if side == .up {
            connection.accounting.initiatorEnd = reason
        } else {
            connection.accounting.responderEnd = reason
        }
        connection.handler.end(of: side, reason: reason, time: time)
    }

    /// Ends both sides now: what waits behind holes is delivered, the holes become gaps.
    private func flush(_ connection: inout ConnectionState, reason: StreamEndReason, time: Int64) {
        for side in [Direction.up, .down] where !connection.halves[side.rawValue].ended {
            if let last = connection.halves[side.rawValue].buffered.last {
                skipHoles(&connection, side, upTo: last.end, time: time)
            }
            if !connection.halves[side.rawValue].ended {
                end(&connection, side, reason: reason, time: time)
            }
        }
    }
}

/// A connection's 4-tuple, the same whichever side sent the packet.
struct FlowKey: Hashable {
    var low: TransportEndpoint
    var high: TransportEndpoint

    init(_ a: TransportEndpoint, _ b: TransportEndpoint) {
        if a < b {
            low = a
            high = b
        } else {
            low = b
            high = a
        }
    }
}

/// A RST waiting to see whether its sender goes on (see `TCPAssembler`).
struct PendingReset {
    var side: Direction
    var time: Int64
    /// The sender's `HalfStream.sentEnd` and `acknowledgedPeer` when the RST came.
    var sentEnd: Int64?
    var acknowledgedPeer: Int64?
}

/// One connection as the assembler keeps it (in its table, shared by reference). All its
/// mutable state is one struct: a segment is handled with one access to it, passed `inout`,
/// instead of one dynamically checked access per field read or written. The handler it calls
/// meanwhile cannot reach back into it (it only ever sees copies of the accounting), and the
/// assembler runs on one thread: so that one access is not checked at run time either
/// (`@exclusivity(unchecked)`; the reassembly tests run every path in debug builds).
final class Connection {
    let info: ConnectionInfo
    @exclusivity(unchecked) var state: ConnectionState

    init(info: ConnectionInfo, handler: ByteStreamHandler) {
        self.info = info
        self.state = ConnectionState(info: info, handler: handler)
    }
}

/// The assembler's state for one connection.
struct ConnectionState {
    let handler: ByteStreamHandler
    var halves = [HalfStream(), HalfStream()]
    var accounting: ConnectionAccounting
    /// A RST not yet taken as the end (see `TCPAssembler`).
    var pendingReset: PendingReset?

    init(info: ConnectionInfo, handler: ByteStreamHandler) {
        self.handler = handler
        self.accounting = ConnectionAccounting(info: info)
    }

    private var info: ConnectionInfo { accounting.info }

    var isFinished: Bool { halves[0].ended && halves[1].ended }

    func side(sentBy source: TransportEndpoint) -> Direction {
        source == info.initiator ? .up : .down
    }

    /// A SYN on this 4-tuple opens a new connection unless it repeats the one we know. So
    /// does a SYN-ACK with a new ISN once both sides have ended: the reuse's SYN was not
    /// captured, and the new connection's data must not vanish into the lingering one.
    func isReusedBy(_ syn: TCPSegment) -> Bool {
        let side = side(sentBy: syn.source)
        let half = halves[side.rawValue]
        // A RST (even one still pending) ends the connection as far as a new SYN is concerned.
        let over = isFinished || pendingReset != nil
        if syn.flags.contains(.ack) {
            return over && (side == .up || !half.started || half.baseSequence != syn.sequence &+ 1)
        }
        if over { return true }
        // Opened by a SYN-ACK that the capture put before its SYN: this is that SYN.
        if side == .up, !half.started, info.sawHandshake { return false }
        return side == .down || !half.started || half.baseSequence != syn.sequence &+ 1
    }

    mutating func account(_ segment: TCPSegment, from side: Direction) {
        accounting.lastPacketTime = segment.timestamp
        Self.count(segment, in: &accounting[side])
    }

    private static func count(_ segment: TCPSegment, in figures: inout SideAccounting) {
        figures.packets += 1
        figures.frameBytes += segment.frameLength
        figures.ipBytes += segment.ipLength
        figures.payloadBytes += segment.payloadLength
        if segment.payloadLength == 0 { figures.controlPackets += 1 }
    }
}
