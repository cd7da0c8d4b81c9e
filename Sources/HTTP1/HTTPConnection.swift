import DequeModule
import Flows
import MessageModel
import PacketLayers
import TCPReassembly

/// Makes an `HTTPConnection` for each TCP connection.
public final class HTTPConnectionFactory<Sink: MessageSink>: ByteStreamHandlerFactory {
    private let sink: Sink
    private let limits: HTTPLimits

    public init(sink: Sink, limits: HTTPLimits = HTTPLimits()) {
        self.sink = sink
        self.limits = limits
    }

    public func makeHandler(for connection: ConnectionInfo) -> ByteStreamHandler {
        HTTPConnection(info: connection, sink: sink, limits: limits)
    }
}

/// One TCP connection seen as HTTP/1.x: a parser per side, FIFO pairing of responses with
/// requests, and tunnel and TLS detection. HTTP is recognized by content, whatever the port.
public final class HTTPConnection<Sink: MessageSink>: ByteStreamHandler {
    let info: ConnectionInfo
    private let sink: Sink
    private let limits: HTTPLimits
    private var parsers: [SideParser<Sink>] = []
    private var kind: ConnectionProtocol?
    /// One per side: only the client's first bytes hold a ClientHello.
    private var tlsHello = [TLSHelloSniffer(), TLSHelloSniffer()]
    /// Bytes that came before the protocol could be told (a TLS record header takes 3 bytes),
    /// in arrival order; replayed once it is known.
    private var undecided: [(side: Direction, bytes: [UInt8], position: StreamPosition)] = []
    /// The side that sends requests: a guess from the handshake or a ClientHello until a
    /// message shows it (`rolesShown`). A SOCKS reverse connection's requests come from the
    /// side that accepted the TCP connection.
    private var clientSide: Direction?
    private var rolesShown = false
    private var messageCounts = [0, 0]

    /// Requests whose head was parsed and whose final response has not come yet.
    private var awaitingResponse: Deque<PendingRequest> = []
    /// Finished requests not yet handed to the sink, by index: waiting for their pairing.
    private var heldRequests: [Int: (message: CapturedMessage, observer: Sink.Observer?, side: Direction)] = [:]
    /// Response index for each request index paired so far (until the request is emitted).
    private var pairs: [Int: Int] = [:]
    /// Who reads the bytes of an accepted CONNECT tunnel, the side that sent the CONNECT, and
    /// each side's stream offset where the tunnel began.
    private var tunnel: ByteStreamHandler?
    private var tunnelClient = Direction.up
    private var tunnelStart: [Int64?] = [nil, nil]
    /// Per side, how far the sink was told who owns the bytes (docs/METERING.md §2c).
    private var placed: [Int64] = [.min, .min]

    struct PendingRequest {
        var summary: RequestSummary
        var streamOffset: Int64
        var expectsContinue: Bool
    }

    /// `firstIndexes`: the index of each side's first message (initiator, responder); not 0
    /// for a tunnel read inside a connection whose messages came before.
    public init(info: ConnectionInfo, sink: Sink, limits: HTTPLimits, firstIndexes: [Int] = [0, 0]) {
        self.info = info
        if firstIndexes.count == 2 { messageCounts = firstIndexes }
        self.sink = sink
        self.limits = limits
        if info.sawHandshake { clientSide = .up }
        parsers = [Direction.up, .down].map {
            SideParser(side: $0, connection: self, limits: limits, startsAtMessage: info.sawHandshake)
        }
    }

    // MARK: - ByteStreamHandler

    public func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        if kind == nil {
            if undecided.isEmpty, let decided = TLSHelloSniffer.classify(bytes) {
                settle(decided)
            } else {
                undecided.append((side, Array(bytes), position))
                var prefix: [UInt8] = []
                for run in undecided where run.side == side { prefix += run.bytes.prefix(3 - prefix.count) }
                if let decided = TLSHelloSniffer.classify(prefix) { settle(decided) }
                return
            }
        }
        deliver(bytes, from: side, at: position)
    }

    public func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        if kind == nil { settle(.http) }
        parsers[side.rawValue].gap(length, at: position)
        reportPlacement(side, consumedTo: position.offset &+ Int64(max(0, length)))
    }

    public func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        if kind == nil { settle(.http) }
        parsers[side.rawValue].end(reason: reason)
        sink.settle(side, upTo: .max)
        tunnel?.end(of: tunnelSide(side), reason: reason, time: time)
    }

    public func close(_ accounting: ConnectionAccounting) {
        if kind == nil { settle(.http) }
        tunnel?.close(accounting)
        tunnel = nil
        // Both sides should have ended; a side that did not is cut by the end of the capture.
        for parser in parsers where parser.state != .ended { parser.end(reason: .endOfCapture) }
        for index in heldRequests.keys.sorted() { emitHeldRequest(index) }
        let client = clientSide ?? .up
        let protocolKind: ConnectionProtocol = kind == .tls ? .tls : (messageCounts != [0, 0] ? .http : .other)
        sink.connectionClosed(
            HTTPConnectionSummary(
                accounting: accounting, protocolKind: protocolKind,
                serverName: tlsHello[client.rawValue].serverName ?? tlsHello[client.peer.rawValue].serverName,
                clientTally: parsers[client.rawValue].tally, serverTally: parsers[client.peer.rawValue].tally,
                clientEndpoint: info.endpoint(client)))
        parsers = [] // break the parsers' references back to this connection
    }

    /// Fixes the protocol (TLS when the first bytes are a TLS record header; HTTP, with
    /// resynchronization, otherwise) and replays what waited for it.
    private func settle(_ decided: ConnectionProtocol) {
        kind = decided
        if decided == .tls { for parser in parsers { parser.startTLS() } }
        let runs = undecided
        undecided = []
        for run in runs { run.bytes.withUnsafeBytes { deliver($0, from: run.side, at: run.position) } }
    }

    private func deliver(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        if kind == .tls {
            tlsHello[side.rawValue].feed(bytes)
            // Without the handshake, the side that sent a ClientHello is the client.
            if clientSide == nil, tlsHello[side.rawValue].sawClientHello { clientSide = side }
        }
        parsers[side.rawValue].receive(bytes, at: position)
        reportPlacement(side, consumedTo: position.offset &+ Int64(bytes.count))
    }

    /// Tells the sink who owns the bytes `side` has read so far (docs/METERING.md §2c): the
    /// message being read owns its bytes up to here, and what the parser holds undecided (a
    /// partial head or line, bytes awaiting the omission verdict) stays unplaced.
    private func reportPlacement(_ side: Direction, consumedTo consumed: Int64) {
        let parser = parsers[side.rawValue]
        if parser.state == .tunnel, tunnel != nil, sink.tunnelPlacesItsBytes { return }
        // Only news is told: most packets extend the message being read, and nothing else.
        if let current = parser.current {
            let start = current.streamOffset
            let end = start &+ Int64(current.wireTotal &+ parser.lineBytes)
            if end > placed[side.rawValue] {
                sink.claim(start..<end, of: side, by: .message(startingAt: start))
                placed[side.rawValue] = end
            }
        }
        let settled = consumed &- Int64(parser.unplacedBytes)
        if settled > placed[side.rawValue] {
            sink.settle(side, upTo: settled)
            placed[side.rawValue] = settled
        }
    }

    // MARK: - Called by the side parsers

    /// Which kind of message `side` sends, once a message has shown the roles.
    func expectedKind(from side: Direction) -> MessageKind? {
        guard rolesShown, let clientSide else { return nil }
        return side == clientSide ? .request : .response
    }

    func newMessage(
        kind: MessageKind, from side: Direction, at position: StreamPosition,
        showsRoles: Bool = true
    ) -> CapturedMessage {
        // The client is who sends requests, whoever opened the TCP connection.
        let client = kind == .request ? side : side.peer
        if showsRoles && !rolesShown {
            clientSide = client
            rolesShown = true
        } else if clientSide == nil {
            clientSide = client
        }
        let message = CapturedMessage(
            HTTPMessage(kind: kind, index: messageCounts[side.rawValue]),
            connection: info.number, client: info.endpoint(client),
            server: info.endpoint(client.peer), time: position.time, streamOffset: position.offset)
        messageCounts[side.rawValue] += 1
        return message
    }

    /// A head is complete: pair a response with its request, decide the framing, and find
    /// who observes the body.
    func headParsed(
        _ message: inout CapturedMessage, startingAt start: StreamPosition,
        headComplete: Bool = true
    ) -> (Framing.Decision, Sink.Observer?) {
        var requestMethod: String?
        switch message.kind {
        case .request:
            awaitingResponse.append(
                PendingRequest(
                    summary: RequestSummary(
                        index: message.index, method: message.method ?? "",
                        target: message.target, host: message.requestHost),
                    streamOffset: message.streamOffset,
                    expectsContinue: message.message.values(of: "expect").contains { value in
                        // Expectation values are case-insensitive (RFC 9110 §10.1.1).
                        let expectation = trimmed(value[...])
                        return expectation.count == 12
                            && zip(expectation, "100-continue".utf8).allSatisfy { asciiLower($0) == $1 }
                    }))
        case .response:
            requestMethod = pairResponse(&message, position: start)
        }
        guard headComplete else { return (Framing.Decision(framing: .none), nil) }
        let decision = Framing.decide(for: message.message, requestMethod: requestMethod)
        var observed = message.message
        observed.framing = decision.framing
        let observer = decision.framing == .none ? nil : sink.bodyObserver(for: observed)
        return (decision, observer)
    }

    /// Pairs a response with the oldest request still waiting, when the server can have
    /// received that request (it starts before what the response's packet acknowledges).
    /// Returns the request's method, which decides the response's framing.
    private func pairResponse(_ response: inout CapturedMessage, position: StreamPosition) -> String? {
        guard let front = awaitingResponse.first else { return nil }
        if let acknowledged = position.peerAcknowledged, front.streamOffset >= acknowledged { return nil }
        response.request = front.summary
        if response.isInterim { return front.summary.method }
        awaitingResponse.removeFirst()
        response.pair = front.summary.index
        pairs[front.summary.index] = response.index
        if front.expectsContinue, let client = clientSide {
            let requestParser = parsers[client.rawValue]
            if requestParser.current?.index == front.summary.index { requestParser.bodyMayBeOmitted = true }
        }
        // Requests older than this one can no longer be answered.
        for index in heldRequests.keys.sorted() where index < front.summary.index { emitHeldRequest(index) }
        if heldRequests[front.summary.index] != nil { emitHeldRequest(front.summary.index) }
        return front.summary.method
    }

    func messageFinished(_ message: CapturedMessage, observer: Sink.Observer?, from side: Direction) {
        let start = message.streamOffset
        let end = max(start, start &+ Int64(message.wireTotal))
        sink.claim(start..<end, of: side, by: .message(startingAt: start))
        placed[side.rawValue] = max(placed[side.rawValue], end)
        switch message.kind {
        case .response:
            var response = message
            if response.pair == nil && !response.isInterim { response.anomalies.insert(.unpaired) }
            sink.record(response, body: observer)
        case .request:
            // Indexes count per side, and without the handshake both sides can send request
            // lines: a request held under the same index is handed on, never overwritten.
            if heldRequests[message.index] != nil { emitHeldRequest(message.index) }
            heldRequests[message.index] = (message, observer, side)
            if pairs[message.index] != nil { emitHeldRequest(message.index) }
        }
    }

    private func emitHeldRequest(_ index: Int) {
        guard let (held, observer, side) = heldRequests.removeValue(forKey: index) else { return }
        var request = held
        request.pair = pairs.removeValue(forKey: index)
        if request.pair == nil, request.anomalies.contains(.malformedStartLine) {
            // Nothing answered it: nothing shows these bytes were a request.
            parsers[side.rawValue].countSkipped(request.wireTotal)
            return
        }
        if request.pair == nil { request.anomalies.insert(.unpaired) }
        sink.record(request, body: observer)
    }

    /// The connection turned into a tunnel after `message` (a 2xx to CONNECT, or a 101).
    /// A CONNECT tunnel's bytes go to the sink's tunnel handler, when it gives one.
    func startTunnel(after message: CapturedMessage) {
        if tunnel == nil, let request = message.request {
            let client = clientSide ?? .up
            let inner = ConnectionInfo(
                number: info.number, initiator: info.endpoint(client), responder: info.endpoint(client.peer),
                sawHandshake: true, firstPacketTime: message.time)
            let firstIndexes = [messageCounts[client.rawValue], messageCounts[client.peer.rawValue]]
            if message.status == 101, message.message.values(of: "upgrade").contains(where: Self.namesH2C) {
                // h2c: the frames that follow are HTTP/2, the request stream 1's (RFC 7540 §3.2).
                tunnel = sink.h2cUpgradeHandler(request: request, connection: inner, firstIndexes: firstIndexes)
                tunnelClient = client
            } else if request.method == "CONNECT" {
                let authority = String(decoding: request.target, as: UTF8.self)
                tunnel = sink.tunnelHandler(authority: authority, connection: inner, firstIndexes: firstIndexes)
                tunnelClient = client
            }
        }
        for parser in parsers { parser.startTunnel() }
    }

    /// An Upgrade value naming h2c (protocol names are case-insensitive, RFC 9110 §7.8).
    static func namesH2C(_ value: [UInt8]) -> Bool {
        value.split(separator: UInt8(ascii: ",")).contains { item in
            let name = trimmed(item)
            return name.count == 3 && zip(name, "h2c".utf8).allSatisfy { asciiLower($0) == $1 }
        }
    }

    /// Tunnel bytes of `side`, at its stream position: handed on with offsets from the
    /// tunnel's first byte on that side.
    func tunnelReceive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        guard let tunnel, !bytes.isEmpty else { return }
        tunnel.receive(bytes, from: tunnelSide(side), at: tunnelPosition(side, position))
    }

    func tunnelGap(_ length: Int, from side: Direction, at position: StreamPosition) {
        guard let tunnel else { return }
        tunnel.gap(length, from: tunnelSide(side), at: tunnelPosition(side, position))
    }

    private func tunnelSide(_ side: Direction) -> Direction { side == tunnelClient ? .up : .down }

    private func tunnelPosition(_ side: Direction, _ position: StreamPosition) -> StreamPosition {
        let base = tunnelStart[side.rawValue] ?? position.offset
        if tunnelStart[side.rawValue] == nil { sink.tunnelBegins(on: side, at: base) }
        tunnelStart[side.rawValue] = base
        let peerBase = tunnelStart[side.peer.rawValue]
        return StreamPosition(
            time: position.time, offset: position.offset - base,
            peerAcknowledged: peerBase.flatMap { base in position.peerAcknowledged.map { max(0, $0 - base) } })
    }
}
