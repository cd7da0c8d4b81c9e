import Analysis
import CostAccounting
import Flows
import MessageModel
import PacketLayers
import QUIC
import TLS

/// QUIC (docs/METERING.md §2d): a UDP flow whose first datagram is a version 1 or 2 long header,
/// or whose connection ID belongs to a connection already seen (a port change). One
/// `QUICEndpoint` per input follows connections across flows by their IDs. The streams go to the
/// `MultiplexedStreamHandler` of the application registered for the connection's ALPN
/// (`ProtocolRegistration.quic(_:alpn:handler:)`; HTTP/3 registers "h3"); without one, the
/// stream bytes are counted and no record is made.
extension ProtocolRegistration {
    static let quic = ProtocolRegistration(
        name: "quic", entries: [.datagrams(reader: { QUICEndpoint($0) })],
        overheadKinds: [.quicHandshake, .quicAck, .quicControl, .quicPadding])
}

extension QUICCostLayer.PacketKind {
    init(_ packetClass: QUICPacketClass) {
        switch packetClass {
        case .handshake: self = .handshake
        case .stream: self = .stream
        case .ackOnly: self = .ackOnly
        case .control: self = .control
        case .unread: self = .unread
        }
    }
}

/// Every QUIC connection of one input, found by connection ID.
final class QUICEndpoint: UDPFlowReader {
    private let context: UDPReaderContext
    private var byID: [QUICConnectionID: QUICConnectionState] = [:]
    private var open: [QUICConnectionState] = []

    init(_ context: UDPReaderContext) { self.context = context }

    func take(_ flow: ConnectionInfo, first payload: UnsafeRawBufferPointer) -> DatagramHandler? {
        // A known connection on a new flow: by the destination ID of a long or a short header.
        if let state = known(payload) {
            let clientInitiated = state.isClientSide(payload)
            return QUICFlowHandler(state, clientInitiated: clientInitiated)
        }
        if QUICPacketHeader.beginsLongHeader(payload) {
            return QUICFlowHandler(newConnection(flow), clientInitiated: true)
        }
        // Maybe a connection begun before the capture: tried against the key log's 1-RTT secrets.
        guard QUICShortHeaderTrial.looksLikeShortHeader(payload), !candidates().isEmpty else { return nil }
        guard trialsLeft > 0 else {
            trialCounts.untriedFlows += 1
            return nil
        }
        trialCounts.flows += 1
        return QUICMidwayTrial(flow, endpoint: self, limits: context.limits.midConnectionQUIC)
    }

    /// A new connection on `flow` (whose initiator is the client), its hooks set.
    private func newConnection(_ flow: ConnectionInfo) -> QUICConnectionState {
        let keys = context.keys
        let connection = QUICConnection(
            secrets: { [weak self] random in
                guard let entry = keys.keyLog.secrets(forClientRandom: random) else { return nil }
                // A captured handshake's entry is no candidate for a trial.
                if self?.claimed.insert(random).inserted == true { self?.candidatesStale = true }
                return entry
            }, maxHeldBytes: context.limits.maxQUICBufferedBytes)
        let state = QUICConnectionState(connection, info: flow, context: context)
        let costs = state.costs
        connection.packetRead = { side, carried, bytes, first in
            costs.packet(from: side, QUICCostLayer.PacketKind(carried), bytes: bytes, firstInDatagram: first)
        }
        connection.streamFrameRead = { stream, side, offset, dataBytes, frameBytes, repeated in
            costs.streamFrame(
                stream, from: side, offset: offset, dataBytes: dataBytes, frameBytes: frameBytes, repeated: repeated)
        }
        connection.learnedConnectionID = { [weak self, unowned state] id in self?.byID[id] = state }
        let context = self.context
        connection.chooseHandler = { [unowned state] alpn in
            guard let alpn, let make = context.protocols.quicApplication(alpn) else { return nil }
            let sink = ConnectionRecordSink(
                context: ConnectionContext(
                    sink: context.sink, keys: context.keys, input: context.input, limits: context.limits,
                    protocols: context.protocols, closed: context.closed),
                transport: .quic)
            sink.claims = state.costs
            sink.claimsInitiator = flow.initiator
            state.recordSink = sink
            let application = make(QUICApplicationRoute(info: flow, sink: sink, limits: context.limits))
            state.application = application
            return application
        }
        state.onClose = { [weak self] closed in self?.forget(closed) }
        open.append(state)
        return state
    }

    // MARK: - Connections begun before the capture

    private var claimed: Set<[UInt8]> = []
    private var candidatesStale = true
    private var candidateList: [QUICTrialKeys] = []
    private var candidatesFromRandoms = 0
    /// Keys derived for an entry, kept while the input lasts (at most the key log's entries).
    private var trialKeys: [[UInt8]: QUICTrialKeys] = [:]
    fileprivate private(set) lazy var trialsLeft = context.limits.midConnectionQUIC.maxTrialsPerInput
    private var trialCounts = InputDiagnostics.UDPCounts.MidConnectionTrials()

    /// The newest key log entries with both 1-RTT secrets that nothing claimed, up to the bound.
    private func candidates() -> [QUICTrialKeys] {
        let log = context.keys.keyLog
        guard candidatesStale || log.clientRandoms.count != candidatesFromRandoms else { return candidateList }
        candidatesStale = false
        candidatesFromRandoms = log.clientRandoms.count
        candidateList.removeAll(keepingCapacity: true)
        let bound = context.limits.midConnectionQUIC.maxKeyLogEntries
        for random in log.clientRandoms.reversed() where !claimed.contains(random) {
            guard candidateList.count < bound else { break }
            if let known = trialKeys[random] {
                candidateList.append(known)
            } else if let entry = log.secrets(forClientRandom: random), let client = entry.clientTrafficSecret0,
                let server = entry.serverTrafficSecret0,
                let keys = QUICTrialKeys(clientRandom: random, client: client, server: server)
            {
                trialKeys[random] = keys
                candidateList.append(keys)
            }
        }
        return candidateList
    }

    /// Tries the candidates on one datagram of a flow under trial (`direction` the flow's);
    /// on a match, the connection it starts and its flow handler.
    fileprivate func tryMidway(
        _ payload: UnsafeRawBufferPointer, from direction: Direction, flow: ConnectionInfo, confirmed: UInt32,
        trials: inout Int
    ) -> QUICFlowHandler? {
        let limits = context.limits.midConnectionQUIC
        trialCounts.datagrams += 1
        var budget = min(trials, trialsLeft)
        let before = budget
        let bounds = QUICTrialBounds(
            packetNumberWindows: limits.packetNumberWindows, keyGenerations: limits.keyGenerations)
        // Length 0 and the lengths an earlier datagram confirms in the cheap pass; the confirmed
        // ones at every reach.
        let match = QUICShortHeaderTrial.search(
            payload, candidates: candidates(), sides: [.up, .down], lengths: confirmed | 1, fullReach: confirmed,
            bounds: bounds, trials: &budget)
        let used = before - budget
        trials -= used
        trialsLeft -= used
        trialCounts.trials += used
        guard let match else { return nil }
        trialCounts.connections += 1
        claimed.insert(match.keys.clientRandom)
        candidatesStale = true
        // The client sent this datagram when the client's secret opened it.
        let clientInitiated = (direction == .up) == (match.sender == .up)
        var info = flow
        if !clientInitiated { swap(&info.initiator, &info.responder) }
        let state = newConnection(info)
        state.connection.beginMidway(
            match, datagram: payload, bounds: bounds, peerTrials: limits.maxPeerTrials,
            peerDatagrams: limits.maxPeerDatagramsTried)
        // The ALPN was in the handshake the capture lacks: HTTP/3 is assumed.
        state.assumedALPN = "h3"
        state.connection.setHandler(state.connection.chooseHandler?("h3"))
        return QUICFlowHandler(state, clientInitiated: clientInitiated)
    }

    private func known(_ payload: UnsafeRawBufferPointer) -> QUICConnectionState? {
        guard let first = payload.first else { return nil }
        if first & 0x80 != 0 {
            guard let header = QUICPacketHeader.read(payload, at: 0, shortDestinationLength: 0) else { return nil }
            return byID[header.destination]
        }
        for length in Set(byID.keys.map(\.length)) where payload.count > length {
            if let id = QUICConnectionID(UnsafeRawBufferPointer(rebasing: payload[1..<(1 + length)])), let state = byID[id] {
                return state
            }
        }
        return nil
    }

    private func forget(_ state: QUICConnectionState) {
        open.removeAll { $0 === state }
        byID = byID.filter { $0.value !== state }
    }

    func finish() {
        for state in open { state.finish() }
        open.removeAll()
        if trialCounts.flows > 0 || trialCounts.untriedFlows > 0 { context.diagnostics.setMidConnectionTrials(trialCounts) }
    }
}

/// One QUIC connection's flows and figures until its row is written.
final class QUICConnectionState {
    let connection: QUICConnection
    let info: ConnectionInfo
    let context: UDPReaderContext
    /// Summed over the connection's flows, by the connection's directions (`up` from the client).
    var accounting: ConnectionAccounting
    /// Where every byte of its datagrams lands (docs/METERING.md §2d); `up` is the client.
    let costs: QUICCostLayer
    var openFlows = 0
    /// Read for every datagram (`QUICFlowHandler`), on the parsing thread alone.
    @exclusivity(unchecked) var closed = false
    /// The application's sink, once the ALPN chose one: its records count in the row.
    var recordSink: ConnectionRecordSink?
    /// The application's reader, once the ALPN chose one: it adds its own columns to the row.
    var application: MultiplexedStreamHandler?
    var onClose: ((QUICConnectionState) -> Void)?
    /// The application protocol assumed for a connection found mid-way (its ALPN unseen).
    var assumedALPN: String?

    init(_ connection: QUICConnection, info: ConnectionInfo, context: UDPReaderContext) {
        self.connection = connection
        self.info = info
        self.context = context
        accounting = ConnectionAccounting(info: info)
        costs = QUICCostLayer(
            costs: ConnectionCostLedger(limits: context.limits.costs),
            kinds: QUICCostLayer.Kinds(
                handshake: .quicHandshake, ack: .quicAck, control: .quicControl, padding: .quicPadding),
            limits: context.limits.costs)
    }

    /// Whether a new flow's initiator is the client: unless its first packet goes to a connection
    /// ID the client chose (then the server sent it), it goes to the server's or to the
    /// client's original Destination Connection ID.
    func isClientSide(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let first = payload.first else { return true }
        let offset = first & 0x80 != 0 ? 6 : 1
        for id in connection.connectionIDs[Direction.up.rawValue] where payload.count >= offset + id.length {
            if QUICConnectionID(UnsafeRawBufferPointer(rebasing: payload[offset..<(offset + id.length)])) == id {
                return false
            }
        }
        return true
    }

    func flowClosed(_ flow: ConnectionAccounting, clientInitiated: Bool) {
        for side in Direction.allCases {
            let theirs = flow[clientInitiated ? side : side.peer]
            accounting[side].packets += theirs.packets
            accounting[side].frameBytes += theirs.frameBytes
            accounting[side].ipBytes += theirs.ipBytes
            accounting[side].payloadBytes += theirs.payloadBytes
        }
        accounting.lastPacketTime = max(accounting.lastPacketTime, flow.lastPacketTime)
        openFlows -= 1
        if openFlows == 0 { finish() }
    }

    /// Writes the connection's row: SNI, ALPN, version, suite, whether decrypted, bytes per layer.
    func finish() {
        guard !closed else { return }
        closed = true
        connection.close(accounting)
        costs.close()
        let hello = connection.clientHello
        let alpn = connection.selectedALPN
        let isH3 = (alpn ?? hello?.offeredALPN.first ?? assumedALPN).map { $0 == "h3" || $0.hasPrefix("h3-") } ?? false
        var row = ConnectionRow(
            input: context.input, connection: info.number, client: info.initiator.description,
            server: info.responder.description, protocolKind: isH3 ? .h3 : .quic)
        row.serverName = hello?.serverName ?? ""
        row.alpn = alpn ?? hello?.offeredALPN.joined(separator: ",") ?? ""
        row.tlsVersion = connection.version.map { "QUIC v\($0.name)" } ?? ""
        if let suite = connection.serverHello?.cipherSuite {
            row.cipherSuite = TLSHello.suiteName(suite)
        } else if connection.startedMidway, let cipher = connection.cipher {
            // The AEAD whose tag verified tells the suite (a 32-byte secret: SHA-256's).
            row.cipherSuite = TLSHello.suiteName(cipher.tlsSuite)
        }
        row.decrypted = connection.notDecrypted?.rawValue ?? (connection.startedMidway ? "mid-connection" : "yes")
        row.records = recordSink?.records ?? 0
        for (side, cost) in [(Direction.up, \ConnectionRow.clientCost), (.down, \ConnectionRow.serverCost)] {
            // Every datagram went through the cost layer: its totals are the flows' own.
            row[keyPath: cost] = costs.cost[side.rawValue]
        }
        row.clientTCPBytes = accounting.initiator.payloadBytes
        row.serverTCPBytes = accounting.responder.payloadBytes
        (application as? MultiplexedConnectionReader)?.describe(&row)
        let summary = HTTPConnectionSummary(
            accounting: accounting, protocolKind: .other, serverName: hello?.serverName, clientTally: StreamTally(),
            serverTally: StreamTally(), clientEndpoint: info.initiator)
        context.closed(row, summary)
        let notDecrypted = connection.notDecrypted
        context.diagnostics.addQUIC(decrypted: notDecrypted == nil) { counts in
            if let reason = notDecrypted {
                counts.notDecrypted[reason.rawValue, default: 0] += 1
                counts.undecryptedBytes[row.serverName, default: 0] += accounting.initiator.payloadBytes
                    + accounting.responder.payloadBytes
            }
            if connection.startedMidway, notDecrypted == nil { counts.midConnection = (counts.midConnection ?? 0) + 1 }
            for (side, figures) in zip([Direction.up, .down], connection.figures) {
                var out = side == .up ? counts.up : counts.down
                out.packets += figures.packets.reduce(0, +)
                out.decrypted += figures.decrypted
                out.withoutKey += figures.withoutKey
                out.badTag += figures.badTag
                out.streamFrames += figures.streamFrames
                out.streamBytes += figures.streamBytes
                out.repeatedStreamBytes += figures.repeatedStreamBytes
                out.cryptoBytes += figures.cryptoBytes
                out.paddingBytes += figures.paddingBytes
                out.ackFrames += figures.ackFrames
                out.unknownFrames += figures.unknownFrames
                out.keyUpdates += figures.keyUpdates
                out.gapBytes += figures.gapBytes
                for kind in QUICPacketClass.allCases {
                    out.packetBytes[kind.name, default: 0] += figures.packetBytes[kind.rawValue]
                }
                out.datagramPadding += figures.datagramPadding
                out.unreadableBytes += figures.unreadableBytes
                out.streamFrameHeaderBytes += figures.streamFrameHeaderBytes
                if side == .up { counts.up = out } else { counts.down = out }
            }
        }
        onClose?(self)
    }
}

/// One UDP flow of a QUIC connection: datagrams turned to the connection's directions.
final class QUICFlowHandler: DatagramHandler {
    private let state: QUICConnectionState
    private let clientInitiated: Bool

    init(_ state: QUICConnectionState, clientInitiated: Bool) {
        self.state = state
        self.clientInitiated = clientInitiated
        state.openFlows += 1
    }

    func datagram(_ payload: UnsafeRawBufferPointer, from direction: Direction, time: Int64, cost: PacketCost) {
        guard !state.closed else { return }
        let side = clientInitiated ? direction : direction.peer
        state.costs.beginDatagram(from: side, cost)
        let padding = state.connection.datagram(payload, from: side, time: time)
        state.costs.endDatagram(from: side, padding: padding)
    }

    func close(_ accounting: ConnectionAccounting) {
        state.flowClosed(accounting, clientInitiated: clientInitiated)
    }
}

/// A flow whose first datagram looked like a short header that no known connection ID matched:
/// its datagrams are held (copies, at most `maxDatagramsTried`) and each is tried against the key
/// log's 1-RTT secrets (`QUICShortHeaderTrial`) until one opens, which starts a connection found
/// mid-way that reads them all; else, once the bounds are reached, a datagram that cannot be a
/// short header comes, or the flow closes, the flow is declined: other UDP.
final class QUICMidwayTrial: TentativeDatagramHandler {
    private let flow: ConnectionInfo
    private unowned let endpoint: QUICEndpoint
    private let limits: Limits.MidConnectionQUIC
    private var held: [(payload: [UInt8], direction: Direction, time: Int64, cost: PacketCost)] = []
    private var trials: Int
    private var found: QUICFlowHandler?
    private(set) var declined = false
    var settled: Bool { found != nil }

    init(_ flow: ConnectionInfo, endpoint: QUICEndpoint, limits: Limits.MidConnectionQUIC) {
        self.flow = flow
        self.endpoint = endpoint
        self.limits = limits
        trials = limits.maxTrialsPerFlow
    }

    func datagram(_ payload: UnsafeRawBufferPointer, from direction: Direction, time: Int64, cost: PacketCost) {
        if let found {
            found.datagram(payload, from: direction, time: time, cost: cost)
            return
        }
        guard !declined else { return }
        guard QUICShortHeaderTrial.looksLikeShortHeader(payload) else {
            decline()
            return
        }
        // Destination ID lengths an earlier datagram from the same sender confirms.
        var confirmed: UInt32 = 0
        for earlier in held where earlier.direction == direction {
            earlier.payload.withUnsafeBytes { confirmed |= QUICShortHeaderTrial.confirmedLengths(payload, $0) }
        }
        held.append(([UInt8](payload), direction, time, cost))
        if let handler = endpoint.tryMidway(payload, from: direction, flow: flow, confirmed: confirmed, trials: &trials) {
            found = handler
            for datagram in held {
                datagram.payload.withUnsafeBytes {
                    handler.datagram($0, from: datagram.direction, time: datagram.time, cost: datagram.cost)
                }
            }
            held = []
        } else if held.count >= limits.maxDatagramsTried || trials <= 0 || endpoint.trialsLeft <= 0 {
            decline()
        }
    }

    private func decline() {
        declined = true
        held = []
    }

    func close(_ accounting: ConnectionAccounting) {
        if let found {
            found.close(accounting)
        } else {
            decline()
        }
    }
}
