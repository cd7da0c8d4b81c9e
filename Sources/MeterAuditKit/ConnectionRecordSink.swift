import CostAccounting
import Flows
import MessageModel
import PacketLayers
import Records

/// The per-connection sink a protocol's reader feeds: records go on to the input's
/// `RecordSink` with what carried them (TCP or TLS) and the slot their cost layers were counted
/// in; the connection's summary goes to whoever closes the connection.
public final class ConnectionRecordSink: MessageSink {
    public typealias Observer = BodyMeter

    private let sink: RecordSink
    private let transport: Transport
    private let context: ConnectionContext
    /// Records handed on.
    public private(set) var records = 0
    private(set) var summary: HTTPConnectionSummary?
    /// Where the reader's claims go, and the endpoint its `up` side is.
    /// Strong (a weak load per packet costs).
    var claims: MessageClaims?
    var claimsInitiator: TransportEndpoint?
    /// The claims of the reader an Upgrade started (h2c), shifted into this connection's.
    private var tunnelClaims: TunnelClaims?

    init(context: ConnectionContext, transport: Transport) {
        self.sink = context.sink
        self.context = context
        self.transport = transport
    }

    public func tunnelHandler(authority: String, connection: ConnectionInfo, firstIndexes: [Int]) -> ByteStreamHandler?
    {
        // The tunnel's messages are charged the packets that carried them, on this connection.
        if let ledger = costLedger, let initiator = claimsInitiator {
            tunnelCosts = TunnelCostLink(
                outer: ledger, initiatorSide: connection.initiator == initiator ? .up : .down)
        }
        return context.tunnelHandler(
            authority: authority, connection: connection, firstIndexes: firstIndexes, costs: tunnelCosts)
    }

    /// The ledger of the TCP connection this sink's reader reads, when its offsets are that
    /// connection's (a cleartext reader): a CONNECT tunnel inside is charged there.
    var costLedger: ConnectionCostLedger?
    private var tunnelCosts: TunnelCostLink?

    /// The reader an Upgrade (h2c) started on this connection, and its sink: its records and
    /// its own overhead count in this connection's row.
    private(set) var upgraded: (reader: ConnectionReader, sink: ConnectionRecordSink)?

    public func h2cUpgradeHandler(request: RequestSummary, connection: ConnectionInfo, firstIndexes: [Int])
        -> ByteStreamHandler?
    {
        guard transport == .tcp, let makeReader = context.protocols.upgrade("h2c") else { return nil }
        var inner = context
        inner.firstIndexes = firstIndexes
        if let claims, let initiator = claimsInitiator {
            tunnelClaims = TunnelClaims(
                outer: claims, initiatorSide: connection.initiator == initiator ? .up : .down)
        }
        let innerSink = ConnectionRecordSink(context: inner, transport: .tcp)
        innerSink.claims = context.packetsReachLedger ? tunnelClaims : nil
        innerSink.claimsInitiator = connection.initiator
        let reader = makeReader(
            ReaderRoute(
                info: connection, sink: innerSink, clientSide: .up, startsAtBeginning: true, upgradedRequest: request,
                limits: inner.limits, firstIndexes: firstIndexes))
        upgraded = (reader, innerSink)
        return reader
    }

    public func bodyObserver(for message: HTTPMessage) -> BodyMeter? { sink.bodyObserver(for: message) }

    public func claim(_ range: Range<Int64>, of side: Direction, stream: UInt64, by owner: StreamOwner) {
        claims?.claim(range, of: side, stream: stream, by: owner)
    }

    public func settle(_ side: Direction, stream: UInt64, upTo offset: Int64) {
        claims?.settle(side, stream: stream, upTo: offset)
    }

    public func tunnelBegins(on side: Direction, at offset: Int64) {
        tunnelClaims?.begins(onOuter: side, at: offset)
        tunnelCosts?.begins(onOuter: side, at: offset)
    }

    public var tunnelPlacesItsBytes: Bool { tunnelClaims != nil || tunnelCosts != nil }

    /// The slot the message's packets were counted in: found by its sender's side and first byte
    /// (a pushed request's bytes are the server's).
    private func slot(of message: CapturedMessage) -> LayerSlot? {
        guard let claims, let initiator = claimsInitiator else { return nil }
        let pushed = message.kind == .request && message.anomalies.contains(.pushed)
        let sender = message.kind == .request && !pushed ? message.client : message.server
        // HTTP/1.x and HTTP/2 read one byte stream per side (stream 0); HTTP/3 claims on each
        // QUIC stream by its id (a pushed request on the request stream its PUSH_PROMISE took).
        let facts = message.message.protocolFacts
        let stream = facts.wireProtocol == .h3 ? facts.stream ?? 0 : 0
        return claims.takeSlot(of: sender == initiator ? .up : .down, stream: stream, startingAt: message.streamOffset)
    }

    public func record(_ message: CapturedMessage, body: BodyMeter?) {
        records += 1
        let slot = slot(of: message)
        sink.record(message, body: body, transport: transport, tunnelHost: context.tunnelHost, lower: slot)
    }

    public func connectionClosed(_ summary: HTTPConnectionSummary) { self.summary = summary }
}
