import Analysis
import CaptureIO
import DequeModule
import Flows
import HTTP1
import HTTP2
import MessageModel
import PacketLayers
import Records
import TCPReassembly
import TLS

/// The keys a capture's TLS connections are decrypted with: the `--keylog` files, then the
/// secrets of the capture's own Decryption Secrets Blocks as they are read.
final class KeyStore {
    private(set) var keyLog: KeyLog

    init(_ keyLog: KeyLog) { self.keyLog = keyLog }

    func merge(_ other: KeyLog) { keyLog.merge(other) }
}

/// Makes the handler of each TCP connection: a `ConnectionRouter` that reads the first bytes
/// and sends the connection to HTTP/1.x as it is, or through TLS first.
final class ConnectionRouterFactory: ByteStreamHandlerFactory {
    private let sink: RecordSink
    private let limits: HTTPLimits
    private let keys: KeyStore
    private let input: String
    private let costLimits: Limits
    private let closed: (ConnectionRow, HTTPConnectionSummary) -> Void

    init(
        sink: RecordSink, limits: HTTPLimits, keys: KeyStore, input: String, costLimits: Limits = Limits(),
        closed: @escaping (ConnectionRow, HTTPConnectionSummary) -> Void
    ) {
        self.sink = sink
        self.limits = limits
        self.costLimits = costLimits
        self.keys = keys
        self.input = input
        self.closed = closed
    }

    func makeHandler(for connection: ConnectionInfo) -> ByteStreamHandler {
        ConnectionRouter(
            info: connection,
            context: ConnectionContext(
                sink: sink, limits: limits, keys: keys, input: input, costLimits: costLimits, closed: closed))
    }
}

/// What every connection's handler shares within one input.
struct ConnectionContext {
    let sink: RecordSink
    let limits: HTTPLimits
    let keys: KeyStore
    let input: String
    /// Bounds of the cost ledgers (docs/METERING.md §2c).
    let costLimits: Limits
    /// A tunnel's link to the ledger of the connection whose packets carry it.
    var tunnelCosts: TunnelCostLink? = nil
    var closed: (ConnectionRow, HTTPConnectionSummary) -> Void
    /// The host a proxy was asked to CONNECT to, for the handler of that tunnel, and the
    /// indexes its messages start from (those before it on the TCP connection came first).
    var tunnelHost: String? = nil
    var firstIndexes = [0, 0]

    /// Reads a CONNECT tunnel as a connection of its own (TLS or cleartext HTTP).
    func tunnelHandler(
        authority: String, connection: ConnectionInfo, firstIndexes: [Int], costs: TunnelCostLink? = nil
    ) -> ByteStreamHandler {
        var context = self
        context.tunnelHost = authority
        context.firstIndexes = firstIndexes
        context.tunnelCosts = costs
        return ConnectionRouter(info: connection, context: context)
    }
}

/// One TCP connection, until its first bytes tell what it is: a TLS record header sends it
/// through `TLSRelay` (decrypted HTTP inside), the HTTP/2 connection preface to
/// `HTTP2Connection` (h2c with prior knowledge), anything else to `HTTPConnection` as cleartext.
/// Bytes that came before the protocol could be told (a TLS header takes 3 bytes) are kept
/// and replayed. After the choice every call goes straight on.
final class ConnectionRouter: ByteStreamHandler {
    /// `h2Midstream`: HTTP/2 frames without a preface (docs/METERING.md §2a, mid-connection start).
    enum Route { case tls, h2, h2Midstream, http1 }

    private let info: ConnectionInfo
    private var context: ConnectionContext
    private var next: ByteStreamHandler?
    private var undecided: [(side: Direction, bytes: [UInt8], position: StreamPosition)] = []
    /// Stream bytes per side, gaps included: a tunnel's own TCP payload (counted for tunnels
    /// only, the one row that shows them, to spare every other connection a write per packet).
    private var streamBytes = [0, 0]
    private let countsStreamBytes: Bool
    /// What every packet cost, shared out by the handler's claims (docs/METERING.md §2c).
    private let costs: ConnectionCostLedger

    init(info: ConnectionInfo, context: ConnectionContext) {
        self.info = info
        self.context = context
        costs = ConnectionCostLedger(limits: context.costLimits, tunnel: context.tunnelCosts)
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
        if let next { return next.receive(bytes, from: side, at: position) }
        if undecided.isEmpty, let decided = Self.classify(bytes) {
            settle(decided, prefaceSide: side).receive(bytes, from: side, at: position)
            return
        }
        undecided.append((side, Array(bytes), position))
        var prefix: [UInt8] = []
        for run in undecided where run.side == side {
            prefix += run.bytes.prefix(Self.classifyLength - prefix.count)
        }
        if let decided = Self.classify(prefix) {
            settle(decided, prefaceSide: side)
        } else if prefix.count >= Self.classifyLength {
            settle(.http1)
        }
    }

    /// Enough bytes of one side to tell: the preface, or a chain of three frame headers.
    private static let classifyLength = HTTP2Connection<ConnectionRecordSink>.chainBytes

    /// TLS from a record header, HTTP/2 from the client's connection preface (h2c with prior
    /// knowledge), HTTP/1.x otherwise; nil while the bytes could still be either.
    static func classify<Bytes: Collection>(_ bytes: Bytes) -> Route? where Bytes.Element == UInt8 {
        let preface = HTTP2Connection<ConnectionRecordSink>.prefaceBytes
        let shown = bytes.prefix(preface.count)
        if !shown.isEmpty, shown.elementsEqual(preface.prefix(shown.count)) {
            return shown.count == preface.count ? .h2 : nil
        }
        switch HTTP2Connection<ConnectionRecordSink>.beginsWithFrames(bytes) {
        case true?: return .h2Midstream
        case nil: return nil
        case false?: break
        }
        switch TLSHelloSniffer.classify(Array(bytes.prefix(3))) {
        case .tls: return .tls
        case nil: return nil
        default: return .http1
        }
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        if countsStreamBytes {
            streamBytes[side.rawValue] = saturatingSum(streamBytes[side.rawValue], max(0, length))
        }
        (next ?? settle(.http1)).gap(length, from: side, at: position)
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        (next ?? settle(.http1)).end(of: side, reason: reason, time: time)
    }

    func close(_ accounting: ConnectionAccounting) {
        (next ?? settle(.http1)).close(accounting)
        next = nil
    }

    func packet(_ cost: PacketCost, from side: Direction) { costs.add(cost, from: side) }

    /// Makes the handler for what the first bytes showed, and replays them to it.
    @discardableResult
    private func settle(_ decided: Route, prefaceSide: Direction = .up) -> ByteStreamHandler {
        let handler: ByteStreamHandler
        switch decided {
        case .tls:
            handler = TLSRelay(
                info: info, context: context, firstBytes: undecided.first.map { ($0.side, $0.bytes) }, costs: costs)
        case .h2:
            handler = CleartextHTTP2Connection(info: info, context: context, clientSide: prefaceSide, costs: costs)
        case .h2Midstream:
            // No preface tells the client: the initiator (or the assembler's guess of it) is.
            handler = CleartextHTTP2Connection(
                info: info, context: context, clientSide: .up, startsAtBeginning: false, costs: costs)
        case .http1:
            handler = CleartextConnection(info: info, context: context, costs: costs)
        }
        next = handler
        let runs = undecided
        undecided = []
        for run in runs { run.bytes.withUnsafeBytes { handler.receive($0, from: run.side, at: run.position) } }
        return handler
    }
}

/// The per-connection sink the HTTP layer feeds: records go on to the input's `RecordSink`
/// with what carried them (TCP or TLS, and the TLS overhead each owns); the connection's
/// summary goes to whoever closes the connection.
final class ConnectionRecordSink: MessageSink {
    typealias Observer = BodyMeter

    private let sink: RecordSink
    private let transport: Transport
    private let overheads: TLSOverheadLedger?
    private let context: ConnectionContext
    private(set) var records = 0
    private(set) var summary: HTTPConnectionSummary?
    /// Where the HTTP layer's claims go, and the endpoint its `initiator` side is.
    /// Strong (a weak load per packet costs): `TLSRelay`, which is its own claims, breaks the
    /// cycle when it closes.
    var claims: MessageClaims?
    var claimsInitiator: TransportEndpoint?
    /// The claims of the HTTP/2 an h2c Upgrade started, shifted into this connection's.
    private var tunnelClaims: TunnelClaims?

    init(context: ConnectionContext, transport: Transport, overheads: TLSOverheadLedger?) {
        self.sink = context.sink
        self.context = context
        self.transport = transport
        self.overheads = overheads
    }

    func tunnelHandler(authority: String, connection: ConnectionInfo, firstIndexes: [Int]) -> ByteStreamHandler? {
        // The tunnel's messages are charged the packets that carried them, on this connection.
        if let ledger = costLedger, let initiator = claimsInitiator {
            tunnelCosts = TunnelCostLink(
                outer: ledger, initiatorSide: connection.initiator == initiator ? .up : .down)
        }
        return context.tunnelHandler(
            authority: authority, connection: connection, firstIndexes: firstIndexes, costs: tunnelCosts)
    }

    /// The ledger of the TCP connection this sink's HTTP layer reads, when its offsets are
    /// that connection's (cleartext HTTP/1.x): a CONNECT tunnel inside is charged there.
    var costLedger: ConnectionCostLedger?
    private var tunnelCosts: TunnelCostLink?

    /// The HTTP/2 reader an h2c Upgrade started on this connection: its records and frames
    /// count in this connection's row.
    private(set) var upgraded: CleartextHTTP2Connection?

    func h2cUpgradeHandler(request: RequestSummary, connection: ConnectionInfo, firstIndexes: [Int])
        -> ByteStreamHandler?
    {
        guard transport == .tcp else { return nil }
        var inner = context
        inner.firstIndexes = firstIndexes
        if let claims, let initiator = claimsInitiator {
            tunnelClaims = TunnelClaims(
                outer: claims, initiatorSide: connection.initiator == initiator ? .up : .down)
        }
        let handler = CleartextHTTP2Connection(
            info: connection, context: inner, clientSide: .up, upgradedRequest: request, ownRow: false,
            tunnelClaims: tunnelClaims)
        upgraded = handler
        return handler
    }

    func bodyObserver(for message: HTTPMessage) -> BodyMeter? { sink.bodyObserver(for: message) }

    func claim(_ range: Range<Int64>, of side: Direction, by owner: StreamOwner) {
        claims?.claim(range, of: side, by: owner)
    }

    func settle(_ side: Direction, upTo offset: Int64) { claims?.settle(side, upTo: offset) }

    func tunnelBegins(on side: Direction, at offset: Int64) {
        tunnelClaims?.begins(onOuter: side, at: offset)
        tunnelCosts?.begins(onOuter: side, at: offset)
    }

    var tunnelPlacesItsBytes: Bool { tunnelClaims != nil || tunnelCosts != nil }

    /// The slot the message's packets were counted in: found by its sender's side and first byte
    /// (a pushed request's bytes are the server's).
    private func slot(of message: CapturedMessage) -> LayerSlot? {
        guard let claims, let initiator = claimsInitiator else { return nil }
        let pushed = message.kind == .request && message.anomalies.contains(.pushed)
        let sender = message.kind == .request && !pushed ? message.client : message.server
        return claims.takeSlot(of: sender == initiator ? .up : .down, startingAt: message.streamOffset)
    }

    func record(_ message: CapturedMessage, body: BodyMeter?) {
        records += 1
        let slot = slot(of: message)
        sink.record(
            message, body: body, transport: transport,
            // HTTP/2 frames of many streams share TLS records: no message owns a record's
            // overhead, so wire_tls stays unknown (docs/METERING.md §2a).
            tlsOverhead: message.protocolFacts.wireProtocol == .h2 && overheads != nil ? nil : (overheads?.overhead(of: message) ?? 0),
            tunnelHost: context.tunnelHost, lower: slot)
    }

    func connectionClosed(_ summary: HTTPConnectionSummary) { self.summary = summary }
}

/// A cleartext connection: HTTP/1.x straight from TCP.
final class CleartextConnection: ByteStreamHandler {
    private let info: ConnectionInfo
    private let context: ConnectionContext
    private let recordSink: ConnectionRecordSink
    private let http: HTTPConnection<ConnectionRecordSink>
    private let costs: ConnectionCostLedger
    private let claims: CleartextClaims

    init(info: ConnectionInfo, context: ConnectionContext, costs: ConnectionCostLedger) {
        self.info = info
        self.context = context
        self.costs = costs
        claims = CleartextClaims(ledger: costs)
        recordSink = ConnectionRecordSink(context: context, transport: .tcp, overheads: nil)
        // A tunnel whose outer connection could not link its ledger has no packets to share.
        if context.tunnelHost == nil || context.tunnelCosts != nil {
            recordSink.claims = claims
            recordSink.claimsInitiator = info.initiator
            if context.tunnelHost == nil { recordSink.costLedger = costs }
        }
        http = HTTPConnection(info: info, sink: recordSink, limits: context.limits, firstIndexes: context.firstIndexes)
    }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        http.receive(bytes, from: side, at: position)
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        http.gap(length, from: side, at: position)
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        http.end(of: side, reason: reason, time: time)
    }

    func close(_ accounting: ConnectionAccounting) {
        http.close(accounting)
        costs.close()
        claims.close()
        guard var summary = recordSink.summary else { return }
        let clientIsInitiator = summary.clientIsInitiator(info)
        var row = ConnectionRow(
            input: context.input, connection: info.number,
            client: info.endpoint(clientIsInitiator ? .up : .down).description,
            server: info.endpoint(clientIsInitiator ? .down : .up).description,
            protocolKind: summary.protocolKind == .http
                ? .http1 : (summary.protocolKind == .tls ? .tlsUndecrypted : .other))
        row.records = recordSink.records
        row.clientTCPBytes = (clientIsInitiator ? accounting.initiator : accounting.responder).payloadBytes
        row.serverTCPBytes = (clientIsInitiator ? accounting.responder : accounting.initiator).payloadBytes
        costs.fill(&row, clientSide: clientIsInitiator ? .up : .down)
        if let upgraded = recordSink.upgraded {
            // After `Upgrade: h2c` and its 101 the connection spoke HTTP/2.
            row.protocolKind = .h2
            row.records += upgraded.records
            row.http2 = upgraded.overhead
            // Read as HTTP/2, the bytes after the 101 are no tunnel's that no one read.
            summary.clientTally.tunnelBytes = 0
            summary.serverTally.tunnelBytes = 0
        }
        context.closed(row, summary)
    }
}

extension HTTPConnectionSummary {
    /// Whether the client the HTTP layer settled on is the TCP initiator (the summary's
    /// tallies are the client's and the server's).
    func clientIsInitiator(_ info: ConnectionInfo) -> Bool {
        clientEndpoint.map { $0 == info.initiator } ?? true
    }
}

/// Which TLS records' overhead each message owns: per direction, the plaintext offset at
/// which each decrypted application_data record began and the bytes it added on the wire. A
/// message owns the records whose first plaintext byte lies inside it (docs/METERING.md §2b).
final class TLSOverheadLedger {
    private var starts: [Deque<(offset: Int64, overhead: Int)>] = [[], []]
    /// The endpoint that sent direction 0 (the TLS client).
    private let clientEndpoint: TransportEndpoint

    init(clientEndpoint: TransportEndpoint) { self.clientEndpoint = clientEndpoint }

    func add(direction: Direction, plaintextOffset: Int64, overhead: Int) {
        starts[direction.rawValue].append((plaintextOffset, overhead))
    }

    /// The overhead of the records that began inside `message`. Messages of a direction come
    /// in stream order, so records before this one's start belong to no later message.
    func overhead(of message: CapturedMessage) -> Int {
        let sender = message.kind == .request ? message.client : message.server
        let d = sender == clientEndpoint ? 0 : 1
        let start = message.streamOffset
        let (end, overflow) = start.addingReportingOverflow(Int64(message.wireTotal))
        let limit = overflow ? Int64.max : end
        while let first = starts[d].first, first.offset < start { starts[d].removeFirst() }
        var total = 0
        while let first = starts[d].first, first.offset < limit {
            total = saturatingSum(total, first.overhead)
            starts[d].removeFirst()
        }
        return total
    }
}

/// A TLS connection: its two TCP streams go through `TLSConnection`; the decrypted
/// application data of each direction goes to an `HTTPConnection` as that direction's
/// ordered stream (offsets in plaintext bytes), or to an `HTTP2Connection` when ALPN or the
/// connection preface says HTTP/2. A TCP gap stops that direction's decryption.
final class TLSRelay: ByteStreamHandler, MessageClaims {
    private enum Content { case undecided, http1, h2 }

    /// A TLS record on its way to the cost ledger: it waits until the HTTP layer has placed its
    /// plaintext, then its TCP bytes are claimed (docs/METERING.md §2c).
    private struct RecordCost {
        enum Kind { case application, control, opaque }
        var tcpStart: Int64
        var wireLength: Int
        var plaintextOffset: Int64
        var plaintextLength: Int
        var kind: Kind
    }

    private let costs: ConnectionCostLedger
    /// Per TLS direction: the plaintext by owner, the slots of its messages, and the records
    /// waiting for their plaintext's owners.
    private var plaintextClaims: [ClaimMap]
    private var plaintextSlots: [[Int64: LayerSlot]] = [[:], [:]]
    private var recordCosts: [Deque<RecordCost>] = [[], []]

    private let info: ConnectionInfo
    private let context: ConnectionContext
    /// The TCP side that sent the ClientHello.
    private let clientSide: Direction
    private var tls: TLSConnection!
    private let ledger: TLSOverheadLedger
    private let recordSink: ConnectionRecordSink
    private var http: HTTPConnection<ConnectionRecordSink>?
    private var http2: HTTP2Connection<ConnectionRecordSink>?
    private var content = Content.undecided
    /// Per TLS direction: plaintext bytes handed on so far (the next record's offset).
    private var plaintextOffset: [Int64] = [0, 0]
    /// Per TLS direction: where the next record starts in the TCP stream, and the time of the
    /// packet it started in when that was an earlier piece.
    private var recordStart: [Int64?] = [nil, nil]
    private var recordStartTime: [Int64?] = [nil, nil]
    /// Per TLS direction: the piece being fed.
    private var piece: [StreamPosition?] = [nil, nil]

    init(
        info: ConnectionInfo, context: ConnectionContext, firstBytes: (Direction, [UInt8])?, costs: ConnectionCostLedger
    ) {
        self.info = info
        self.context = context
        self.costs = costs
        let history = ClaimMap(maxRuns: context.costLimits.maxCostHistoryRuns)
        plaintextClaims = [history, history]
        // Without the TCP handshake, the side whose first record is a ClientHello is the client
        // (one that sent a ServerHello is the server).
        var client = Direction.up
        if !info.sawHandshake, let (side, bytes) = firstBytes, bytes.count >= 6, bytes[0] == 22 {
            if bytes[5] == 1 { client = side } else if bytes[5] == 2 { client = side.peer }
        }
        clientSide = client
        ledger = TLSOverheadLedger(clientEndpoint: info.endpoint(client))
        recordSink = ConnectionRecordSink(context: context, transport: .tls, overheads: ledger)
        tls = TLSConnection(keyLog: context.keys.keyLog) { [unowned self] record, plaintext in
            self.tlsRecord(record, plaintext)
        }
        // A tunnel's packets are its outer connection's: without a link to that connection's
        // ledger, its records have no lower layers.
        if context.tunnelHost == nil || context.tunnelCosts != nil {
            recordSink.claims = self
            recordSink.claimsInitiator = info.endpoint(client)
        }
    }

    // MARK: - Costs (the HTTP layer's sides are TLS directions: initiator = client)

    private func tcpSide(_ direction: Int) -> Direction { direction == 0 ? clientSide : clientSide.peer }

    func claim(_ range: Range<Int64>, of side: Direction, by owner: StreamOwner) {
        let d = side.rawValue
        let costOwner = costOwner(owner, d)
        if case let .message(slot) = costOwner { slot.plaintextEnd = max(slot.plaintextEnd, range.upperBound) }
        plaintextClaims[d].claim(range.lowerBound, range.upperBound, costOwner)
        drainRecordCosts(d)
    }

    func settle(_ side: Direction, upTo offset: Int64) {
        plaintextClaims[side.rawValue].settle(upTo: offset)
        drainRecordCosts(side.rawValue)
    }

    func takeSlot(of side: Direction, startingAt offset: Int64) -> LayerSlot? {
        plaintextSlots[side.rawValue].removeValue(forKey: offset)
    }

    private func costOwner(_ owner: StreamOwner, _ d: Int) -> CostOwner {
        switch owner {
        case let .message(start):
            if let slot = plaintextSlots[d][start] { return .message(slot) }
            let slot = LayerSlot(ledger: costs[tcpSide(d)].counting)
            plaintextSlots[d][start] = slot
            return .message(slot)
        case .overhead: return .http2Control  // HTTP/2's control bytes: the one kind a protocol claims
        case .unclaimed: return .unclaimed
        }
    }

    /// Claims the TCP bytes of the records whose plaintext is placed, in stream order. A
    /// record's overhead goes with its first plaintext byte, so its TCP bytes are cut as:
    /// overhead and the first owner's plaintext, then each next owner's plaintext.
    private func drainRecordCosts(_ d: Int) {
        let ledger = costs[tcpSide(d)]
        while let record = recordCosts[d].first {
            let whole = record.tcpStart..<(record.tcpStart &+ Int64(record.wireLength))
            switch record.kind {
            case .control:
                ledger.claim(whole, by: .tlsControl)
                ledger.addTLS(record.wireLength, to: .tlsControl)
            case .opaque:
                ledger.claim(whole, by: .unclaimed)
                ledger.addTLS(record.wireLength, to: .unclaimed)
            case .application:
                let start = record.plaintextOffset
                let end = start &+ Int64(record.plaintextLength)
                let placed = plaintextClaims[d].end
                guard placed >= end, record.plaintextLength > 0 || placed > start else { return }
                var cursor = record.tcpStart
                var overhead = max(0, record.wireLength - record.plaintextLength)
                if record.plaintextLength == 0 {
                    let owner = plaintextClaims[d].owner(at: start) ?? .unclaimed
                    ledger.claim(whole, by: owner)
                    ledger.addTLS(record.wireLength, to: owner)
                }
                plaintextClaims[d].forEachPiece(in: start..<end) { piece, found in
                    let owner = found ?? .unclaimed
                    if case let .message(slot) = owner {
                        slot.plaintextClaimedBelow = max(slot.plaintextClaimedBelow, piece.upperBound)
                    }
                    let length = Int(clamping: piece.upperBound - piece.lowerBound) + overhead
                    overhead = 0
                    ledger.claim(cursor..<(cursor &+ Int64(length)), by: owner)
                    ledger.addTLS(length, to: owner)
                    cursor = cursor &+ Int64(length)
                }
            }
            recordCosts[d].removeFirst()
        }
    }

    /// The end: plaintext nobody placed belongs to no message, every record is claimed, and
    /// slots no record took give their bytes to the connection's overhead.
    private func closeCosts() {
        for d in 0..<2 {
            plaintextClaims[d].settle(upTo: .max)
            drainRecordCosts(d)
        }
        costs.close()
        for d in 0..<2 {
            for slot in plaintextSlots[d].values { costs[tcpSide(d)].counting.release(slot) }
            plaintextSlots[d] = [:]
        }
    }

    private func direction(_ side: Direction) -> Direction { side == clientSide ? .up : .down }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        let d = direction(side)
        piece[d.rawValue] = position
        if recordStart[d.rawValue] == nil { recordStart[d.rawValue] = position.offset }
        tls.receive(bytes, from: d)
        // A record left open at the end of this piece started in it (or earlier).
        if let start = recordStart[d.rawValue], start >= position.offset,
            start < position.offset + Int64(bytes.count)
        {
            recordStartTime[d.rawValue] = position.time
        }
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        tls.gap(length, in: direction(side))
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        http?.end(of: side == clientSide ? .up : .down, reason: reason, time: time)
    }

    func close(_ accounting: ConnectionAccounting) {
        tls.finish()
        http?.close(accounting)
        http2?.close(accounting)
        closeCosts()
        recordSink.claims = nil
        let summary = tls.summary
        let client = info.endpoint(clientSide)
        let server = info.endpoint(clientSide.peer)
        let httpSummary = recordSink.summary
        let protocolKind: ConnectionRow.Content
        if summary.client.plaintextBytes == 0 && summary.server.plaintextBytes == 0 && !summary.isDecrypted {
            protocolKind = .tlsUndecrypted
        } else if content == .h2 {
            protocolKind = .h2
        } else {
            protocolKind = httpSummary?.protocolKind == .http ? .http1 : .other
        }
        var row = ConnectionRow(
            input: context.input, connection: info.number, client: client.description, server: server.description,
            protocolKind: protocolKind)
        Self.describeTLS(summary, in: &row)
        row.records = recordSink.records
        let clientAccounting = clientSide == .up ? accounting.initiator : accounting.responder
        let serverAccounting = clientSide == .up ? accounting.responder : accounting.initiator
        row.clientTCPBytes = clientAccounting.payloadBytes
        row.serverTCPBytes = serverAccounting.payloadBytes
        row.clientTLSBytes = summary.client.recordBytes
        row.serverTLSBytes = summary.server.recordBytes
        row.clientTLSControlBytes = summary.client.controlBytes
        row.serverTLSControlBytes = summary.server.controlBytes
        if let http2 { row.http2 = HTTP2Overhead(http2.summary) }
        costs.fill(&row, clientSide: clientSide)
        let initiatorIsClient = clientSide == .up
        var connectionSummary =
            httpSummary
            ?? HTTPConnectionSummary(
                accounting: accounting, protocolKind: .other, serverName: nil, clientTally: StreamTally(),
                serverTally: StreamTally())
        connectionSummary.accounting = accounting
        connectionSummary.serverName = summary.serverName
        connectionSummary.clientEndpoint = initiatorIsClient ? info.initiator : info.responder
        context.closed(row, connectionSummary)
        tls = nil
        http = nil
        http2 = nil
    }

    /// The TLS columns of a connection row. Kept out of close(_:): inlined there, Swift 6.3.1's
    /// optimizer (CopyPropagation) crashes on the release build.
    @inline(never)
    private static func describeTLS(_ summary: TLSSummary, in row: inout ConnectionRow) {
        row.serverName = summary.serverName ?? ""
        row.alpn = summary.selectedALPN ?? ""
        row.tlsVersion = summary.version.map(TLSVersion.name) ?? ""
        row.cipherSuite = summary.cipherSuiteName ?? ""
        row.decrypted = summary.notDecrypted?.rawValue ?? "yes"
    }

    /// One TLS record, in stream order per direction.
    private func tlsRecord(_ record: TLSRecordInfo, _ plaintext: UnsafeRawBufferPointer) {
        let d = record.direction.rawValue
        // When the record began: in the piece being fed, or in an earlier one.
        let position = piece[d] ?? StreamPosition(time: info.firstPacketTime, offset: 0, peerAcknowledged: nil)
        var time = position.time
        let tcpStart = recordStart[d] ?? 0
        if let start = recordStart[d] {
            if start < position.offset, let earlier = recordStartTime[d] { time = earlier }
            recordStart[d] = start + Int64(record.wireLength)
        }
        costs[tcpSide(d)].addTLSTotal(record.wireLength)
        let isApplication = record.contentType == TLSContentType.applicationData.rawValue
        recordCosts[d].append(
            RecordCost(
                tcpStart: tcpStart, wireLength: record.wireLength, plaintextOffset: plaintextOffset[d],
                plaintextLength: record.readable && isApplication ? plaintext.count : 0,
                kind: !record.readable
                    ? (isApplication ? .opaque : .control) : (isApplication ? .application : .control)))
        defer { drainRecordCosts(d) }
        guard record.readable, record.contentType == TLSContentType.applicationData.rawValue else { return }
        let offset = plaintextOffset[d]
        plaintextOffset[d] = offset + Int64(plaintext.count)
        ledger.add(direction: record.direction, plaintextOffset: offset, overhead: record.wireLength - plaintext.count)
        if content == .undecided { content = decideContent(record.direction, plaintext) }
        switch content {
        case .h2:
            guard plaintext.count > 0 else { return }
            let side: Direction = record.direction == .up ? .up : .down
            http2Connection().receive(
                plaintext, from: side, at: StreamPosition(time: time, offset: offset, peerAcknowledged: nil))
        case .http1, .undecided:
            guard plaintext.count > 0 else { return }
            let side: Direction = record.direction == .up ? .up : .down
            httpConnection().receive(
                plaintext, from: side, at: StreamPosition(time: time, offset: offset, peerAcknowledged: nil))
        }
    }

    /// HTTP/2 when ALPN chose it or the client's first bytes are its preface; HTTP/1.x
    /// otherwise (the parser finds the messages, or reports none).
    private func decideContent(_ direction: Direction, _ plaintext: UnsafeRawBufferPointer) -> Content {
        if let alpn = tls.summary.selectedALPN { return alpn == "h2" ? .h2 : .http1 }
        let preface = Array("PRI * HTTP/2.0\r\n".utf8)
        if direction == .up, plaintext.count >= preface.count,
            plaintext.prefix(preface.count).elementsEqual(preface)
        {
            return .h2
        }
        return .http1
    }

    /// The HTTP/2 connection over the plaintext (ALPN h2): its client is the TLS client.
    private func http2Connection() -> HTTP2Connection<ConnectionRecordSink> {
        if let http2 { return http2 }
        let inner = ConnectionInfo(
            number: info.number, initiator: info.endpoint(clientSide), responder: info.endpoint(clientSide.peer),
            sawHandshake: true, firstPacketTime: info.firstPacketTime)
        let connection = HTTP2Connection(
            info: inner, sink: recordSink, clientSide: .up, firstIndexes: context.firstIndexes)
        http2 = connection
        return connection
    }

    /// The HTTP/1.x connection over the plaintext: its initiator is the TLS client.
    private func httpConnection() -> HTTPConnection<ConnectionRecordSink> {
        if let http { return http }
        let inner = ConnectionInfo(
            number: info.number, initiator: info.endpoint(clientSide), responder: info.endpoint(clientSide.peer),
            sawHandshake: true, firstPacketTime: info.firstPacketTime)
        // A tunnel's initiator is already its TLS client.
        let connection = HTTPConnection(
            info: inner, sink: recordSink, limits: context.limits, firstIndexes: context.firstIndexes)
        http = connection
        return connection
    }
}

extension TLSDirectionSummary {
    /// Bytes of the records that carry no application data: handshake, alert,
    /// change_cipher_spec and other types.
    var controlBytes: Int { recordBytes - applicationData.bytes }
}
