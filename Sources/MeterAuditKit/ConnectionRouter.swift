import Analysis
import CaptureIO
import CostAccounting
import Flows
import MessageModel

/// Makes the handler of each TCP connection: a `ConnectionRouter` that reads the first bytes
/// and sends the connection to the protocol whose probe claims them.
final class ConnectionRouterFactory: ByteStreamHandlerFactory {
    private let context: ConnectionContext

    init(
        sink: RecordSink, keys: KeyStore, input: String, limits: Limits = Limits(),
        protocols: ProtocolRegistry = .standard, closed: @escaping (ConnectionRow, HTTPConnectionSummary) -> Void
    ) {
        context = ConnectionContext(
            sink: sink, keys: keys, input: input, limits: limits, protocols: protocols, closed: closed)
    }

    func makeHandler(for connection: ConnectionInfo) -> ByteStreamHandler {
        ConnectionRouter(info: connection, context: context)
    }
}

/// One TCP connection, until its first bytes tell what it is: each registered protocol's probe
/// is asked in order (`ProtocolRegistry`: HTTP/2's preface and frames, a TLS record header,
/// HTTP/1.x for anything else). Bytes that came before the protocol could be told are kept and
/// replayed. After the choice every byte goes straight to the protocol's reader.
final class ConnectionRouter: ByteStreamHandler {
    private let info: ConnectionInfo
    private var context: ConnectionContext
    /// The decided protocol's reader (every byte) and what closes it (writes its row).
    private var reader: ByteStreamHandler?
    private var ending: ConnectionEnding?
    private var undecided: [(side: Direction, bytes: [UInt8], position: StreamPosition)] = []
    /// Enough bytes of one side for every probe.
    private let probeLength: Int
    /// Stream bytes per side, gaps included: a tunnel's own TCP payload (counted for tunnels
    /// only, the one row that shows them, to spare every other connection a write per packet).
    private var streamBytes = [0, 0]
    private let countsStreamBytes: Bool
    /// What every packet cost, shared out by the handler's claims (docs/METERING.md §2c).
    private let costs: ConnectionCostLedger

    init(info: ConnectionInfo, context: ConnectionContext) {
        self.info = info
        self.context = context
        probeLength = context.protocols.probeLength
        costs = ConnectionCostLedger(limits: context.limits.costs, tunnel: context.tunnelCosts)
        countsStreamBytes = context.tunnelHost != nil
        if let host = context.tunnelHost {
            // A tunnel's row names its CONNECT host and counts the tunnel's bytes, not the
            // whole TCP connection's (the tunnel's initiator is the client).
            let closed = context.closed
            self.context.closed = { [unowned self] row, summary in
                var row = row
                row.tunnelHost = host
                let clientIsInitiator = row.client == info.initiator.description
                row.clientTCPBytes = streamBytes[clientIsInitiator ? 0 : 1]
                row.serverTCPBytes = streamBytes[clientIsInitiator ? 1 : 0]
                closed(row, summary)
            }
        }
    }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        if countsStreamBytes {
            streamBytes[side.rawValue] = saturatingSum(streamBytes[side.rawValue], bytes.count)
        }
        if let reader { return reader.receive(bytes, from: side, at: position) }
        if undecided.isEmpty, let decided = context.protocols.stream(for: bytes, from: side, on: info) {
            settle(decided, decidingSide: side).receive(bytes, from: side, at: position)
            return
        }
        undecided.append((side, Array(bytes), position))
        var prefix: [UInt8] = []
        for run in undecided where run.side == side {
            prefix += run.bytes.prefix(probeLength - prefix.count)
        }
        if let decided = prefix.withUnsafeBytes({ context.protocols.stream(for: $0, from: side, on: info) }) {
            settle(decided, decidingSide: side)
        } else if prefix.count >= probeLength {
            settle(context.protocols.fallbackStream)
        }
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        if countsStreamBytes {
            streamBytes[side.rawValue] = saturatingSum(streamBytes[side.rawValue], max(0, length))
        }
        (reader ?? settle(context.protocols.fallbackStream)).gap(length, from: side, at: position)
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        (reader ?? settle(context.protocols.fallbackStream)).end(of: side, reason: reason, time: time)
    }

    func close(_ accounting: ConnectionAccounting) {
        if ending == nil { settle(context.protocols.fallbackStream) }
        ending?.close(accounting)
        reader = nil
        ending = nil
    }

    func packet(_ cost: PacketCost, from side: Direction) { costs.add(cost, from: side) }

    /// Makes the reader of the protocol the first bytes showed, and replays them to it.
    @discardableResult
    private func settle(_ decided: (StreamRoute) -> Route, decidingSide: Direction = .up) -> ByteStreamHandler {
        let route = decided(
            StreamRoute(
                info: info, context: context, costs: costs, decidingSide: decidingSide,
                firstBytes: undecided.first.map { ($0.side, $0.bytes) }))
        reader = route.reader
        ending = route.ending
        let runs = undecided
        undecided = []
        for run in runs { run.bytes.withUnsafeBytes { route.reader.receive($0, from: run.side, at: run.position) } }
        return route.reader
    }
}
