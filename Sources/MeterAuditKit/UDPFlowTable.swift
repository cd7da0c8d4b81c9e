import Analysis
import Flows
import PacketLayers

/// A protocol over UDP for one input (QUIC): it sees each new UDP flow's first datagram and
/// takes the flow (a handler for its datagrams) or leaves it to the per-port count. One object
/// per input, so that it can follow a connection across flows (QUIC's connection IDs).
public protocol UDPFlowReader: AnyObject {
    /// A handler for `flow`, whose first captured datagram is `payload` from its initiator,
    /// or nil when this protocol does not read it.
    func take(_ flow: ConnectionInfo, first payload: UnsafeRawBufferPointer) -> DatagramHandler?
    /// The input is over; every handler it gave was closed.
    func finish()
}

/// A handler that may give its flow back (QUIC's trial of a flow that may be a connection begun
/// before the capture): once `declined`, after a datagram or at its close, the table counts the
/// flow as other UDP, every datagram it had; once `settled`, the flow is the reader's for good.
protocol TentativeDatagramHandler: DatagramHandler {
    var declined: Bool { get }
    var settled: Bool { get }
}

/// The UDP flow table (docs/METERING.md §2d): datagrams by 4-tuple, each new flow offered to the
/// run's UDP readers (`ProtocolRegistry`), the rest counted per port at every layer. Bounded by
/// `Limits.maxUDPFlows` (past it the flow idle longest is closed) and expired by capture time
/// (`Limits.udpIdleTimeout`). A flow's numbers come from the same sequence as TCP's connections.
final class UDPFlowTable {
    private struct Key: Hashable {
        var low: TransportEndpoint
        var high: TransportEndpoint
        init(_ a: TransportEndpoint, _ b: TransportEndpoint) {
            (low, high) = a < b ? (a, b) : (b, a)
        }

        /// Three words hashed rather than eight fields: looked up for every datagram.
        func hash(into hasher: inout Hasher) {
            hasher.combine(low.address.high ^ high.address.high.byteSwapped)
            hasher.combine(low.address.low ^ high.address.low.byteSwapped)
            hasher.combine(UInt64(low.port) << 32 | UInt64(high.port) << 16 | (high.address.isIPv6 ? 1 : 0))
        }
    }

    /// Touched for every datagram, so not checked for overlapping access at run time
    /// (`@exclusivity(unchecked)`): the table lives on the parsing thread alone, and each change
    /// is a plain read-modify-write that calls nothing.
    private final class Flow {
        @exclusivity(unchecked) var accounting: ConnectionAccounting
        var handler: DatagramHandler?
        /// The handler while it may still decline the flow.
        var tentative: TentativeDatagramHandler?
        let port: String
        @exclusivity(unchecked) var lastSeen: Int64
        init(info: ConnectionInfo, handler: DatagramHandler?, port: String) {
            accounting = ConnectionAccounting(info: info)
            self.handler = handler
            tentative = handler as? TentativeDatagramHandler
            self.port = port
            lastSeen = info.firstPacketTime
        }
    }

    private let readers: [UDPFlowReader]
    private let maxFlows: Int
    private let idleTimeout: Int64
    private let nextNumber: () -> Int
    @exclusivity(unchecked) private var flows: [Key: Flow] = [:]
    /// The flow of the last datagram: a peer sends several in a row.
    @exclusivity(unchecked) private var lastFlow: (key: Key, flow: Flow)?
    @exclusivity(unchecked) private var lastSweep: Int64?
    @exclusivity(unchecked) private(set) var counts = InputDiagnostics.UDPCounts()

    init(readers: [UDPFlowReader], maxFlows: Int, idleTimeout: Int64, nextNumber: @escaping () -> Int) {
        self.readers = readers
        self.maxFlows = max(1, maxFlows)
        self.idleTimeout = idleTimeout
        self.nextNumber = nextNumber
    }

    /// Whether any datagram was seen (diagnostics.json's `udp` is written only then).
    var sawDatagrams: Bool { counts.datagrams > 0 }

    func process(_ datagram: UDPDatagram) {
        let time = datagram.timestamp
        expire(now: time)
        counts.datagrams += 1
        let key = Key(datagram.source, datagram.destination)
        let flow: Flow
        if let last = lastFlow, last.key == key {
            flow = last.flow
        } else if let existing = flows[key] {
            flow = existing
            lastFlow = (key, existing)
        } else {
            flow = open(key, datagram)
            lastFlow = (key, flow)
        }
        flow.lastSeen = max(flow.lastSeen, time)
        let direction: Direction = datagram.source == flow.accounting.info.initiator ? .up : .down
        let ipBytes = datagram.ipLength
        flow.accounting[direction].packets += 1
        flow.accounting[direction].frameBytes += datagram.frameLength
        flow.accounting[direction].ipBytes += ipBytes
        flow.accounting[direction].payloadBytes += datagram.payloadLength
        flow.accounting[direction].truncatedBytes += datagram.payloadLength &- datagram.payload.count
        flow.accounting.lastPacketTime = max(flow.accounting.lastPacketTime, time)
        if let handler = flow.handler {
            counts.readDatagrams += 1
            handler.datagram(
                datagram.payload, from: direction, time: time,
                cost: PacketCost(
                    time: time, offset: 0, payloadLength: datagram.payloadLength,
                    headerBytes: datagram.headerBytes, linkBytes: datagram.linkBytes))
            if let tentative = flow.tentative {
                if tentative.declined {
                    decline(flow)
                } else if tentative.settled {
                    flow.tentative = nil
                }
            }
        } else {
            var port = counts.other[flow.port] ?? .init()
            port.datagrams += 1
            port.payloadBytes += datagram.payloadLength
            port.udpBytes += datagram.payloadLength &+ 8 // the UDP header
            port.ipBytes += ipBytes
            port.frameBytes += datagram.frameLength
            counts.other[flow.port] = port
            var side = direction == .up ? counts.otherUp : counts.otherDown
            side.datagrams += 1
            side.payloadBytes += datagram.payloadLength
            side.udpBytes += datagram.payloadLength &+ 8
            side.ipBytes += ipBytes
            side.frameBytes += datagram.frameLength
            if direction == .up { counts.otherUp = side } else { counts.otherDown = side }
        }
    }

    /// End of input: every open flow is closed in the order of its number.
    func finish() {
        for (key, flow) in flows.sorted(by: { $0.value.accounting.info.number < $1.value.accounting.info.number }) {
            close(key, flow)
        }
        for reader in readers { reader.finish() }
    }

    private func open(_ key: Key, _ datagram: UDPDatagram) -> Flow {
        if flows.count >= maxFlows, let oldest = flows.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            close(oldest.key, oldest.value)
            counts.evictedFlows += 1
        }
        let info = ConnectionInfo(
            number: nextNumber(), initiator: datagram.source, responder: datagram.destination, sawHandshake: false,
            firstPacketTime: datagram.timestamp, transport: .udp)
        var handler: DatagramHandler?
        for reader in readers {
            handler = reader.take(info, first: datagram.payload)
            if handler != nil { break }
        }
        counts.flows += 1
        let (source, destination) = (datagram.source.port, datagram.destination.port)
        let port = source < 1024 && destination >= 1024 ? source : destination
        let flow = Flow(info: info, handler: handler, port: String(port))
        if handler != nil {
            counts.readFlows += 1
        } else {
            counts.other[flow.port, default: .init()].flows += 1
        }
        flows[key] = flow
        return flow
    }

    private func close(_ key: Key, _ flow: Flow) {
        flows[key] = nil
        if lastFlow?.key == key { lastFlow = nil }
        flow.handler?.close(flow.accounting)
        if let tentative = flow.tentative, tentative.declined { decline(flow) }
    }

    /// A flow its reader gave back: every datagram it had is other UDP, as if no reader took it.
    private func decline(_ flow: Flow) {
        flow.handler = nil
        flow.tentative = nil
        counts.readFlows -= 1
        var port = counts.other[flow.port] ?? .init()
        port.flows += 1
        for direction in Direction.allCases {
            let sent = flow.accounting[direction]
            counts.readDatagrams -= sent.packets
            let add = { (counts: inout InputDiagnostics.UDPCounts.PortCounts) in
                counts.datagrams += sent.packets
                counts.payloadBytes += sent.payloadBytes
                counts.udpBytes += sent.payloadBytes &+ 8 &* sent.packets
                counts.ipBytes += sent.ipBytes
                counts.frameBytes += sent.frameBytes
            }
            add(&port)
            if direction == .up { add(&counts.otherUp) } else { add(&counts.otherDown) }
        }
        counts.other[flow.port] = port
    }

    /// Closes flows idle past the timeout; a full pass at most once per second of capture time.
    private func expire(now: Int64) {
        if let last = lastSweep, now >= last, now &- last < 1_000_000_000 { return }
        lastSweep = now
        let idle = flows.filter { now &- $0.value.lastSeen > idleTimeout }
        for (key, flow) in idle.sorted(by: { $0.value.accounting.info.number < $1.value.accounting.info.number }) {
            flow.accounting.initiatorEnd = .idle
            flow.accounting.responderEnd = .idle
            close(key, flow)
        }
    }
}
