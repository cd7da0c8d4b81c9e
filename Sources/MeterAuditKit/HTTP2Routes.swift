import Analysis
import Flows
import HTTP2
import MessageModel
import PacketLayers
import TCPReassembly

/// A cleartext HTTP/2 connection (h2c): frames straight from TCP, its records through the
/// same per-connection sink as HTTP/1.x (docs/METERING.md §2a).
final class CleartextHTTP2Connection: ByteStreamHandler {
    private let info: ConnectionInfo
    private let context: ConnectionContext
    private let recordSink: ConnectionRecordSink
    private let http2: HTTP2Connection<ConnectionRecordSink>
    private let clientSide: Direction
    /// False after an h2c Upgrade: the HTTP/1.1 connection's row counts this one's too.
    private let ownRow: Bool
    private(set) var overhead: HTTP2Overhead?
    var records: Int { recordSink.records }
    /// Nil after an h2c Upgrade: the HTTP/1.1 connection's ledger counts the packets.
    private let costs: ConnectionCostLedger?
    private let claims: CleartextClaims?

    /// `clientSide`: the side that sent the preface; `upgradedRequest`: the HTTP/1.1 request
    /// an `Upgrade: h2c` turned into stream 1's, when the connection turned HTTP/2 after a 101;
    /// `startsAtBeginning` false: a capture begun mid-connection, frame boundaries searched for.
    init(
        info: ConnectionInfo, context: ConnectionContext, clientSide: Direction,
        upgradedRequest: RequestSummary? = nil, ownRow: Bool = true, startsAtBeginning: Bool = true,
        costs: ConnectionCostLedger? = nil, tunnelClaims: TunnelClaims? = nil
    ) {
        self.costs = costs
        claims = costs.map(CleartextClaims.init(ledger:))
        self.ownRow = ownRow
        self.info = info
        self.context = context
        self.clientSide = clientSide
        recordSink = ConnectionRecordSink(context: context, transport: .tcp, overheads: nil)
        let ownClaims: MessageClaims? = claims ?? tunnelClaims
        recordSink.claims = context.tunnelHost == nil || context.tunnelCosts != nil ? ownClaims : nil
        recordSink.claimsInitiator = info.initiator
        let indexes = context.firstIndexes
        http2 = HTTP2Connection(
            info: info, sink: recordSink, clientSide: clientSide, firstIndexes: indexes,
            upgradedRequest: upgradedRequest, startsAtBeginning: startsAtBeginning)
    }

    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition) {
        http2.receive(bytes, from: side, at: position)
    }

    func gap(_ length: Int, from side: Direction, at position: StreamPosition) {
        http2.gap(length, from: side, at: position)
    }

    func end(of side: Direction, reason: StreamEndReason, time: Int64) {
        http2.end(of: side, reason: reason, time: time)
    }

    func close(_ accounting: ConnectionAccounting) {
        http2.close(accounting)
        costs?.close()
        claims?.close()
        overhead = HTTP2Overhead(http2.summary)
        guard ownRow, let summary = recordSink.summary else { return }
        let clientIsInitiator = clientSide == .up
        var row = ConnectionRow(
            input: context.input, connection: info.number,
            client: info.endpoint(clientSide).description, server: info.endpoint(clientSide.peer).description,
            protocolKind: .h2)
        row.records = recordSink.records
        row.clientTCPBytes = (clientIsInitiator ? accounting.initiator : accounting.responder).payloadBytes
        row.serverTCPBytes = (clientIsInitiator ? accounting.responder : accounting.initiator).payloadBytes
        row.http2 = overhead
        costs?.fill(&row, clientSide: clientSide)
        context.closed(row, summary)
    }
}

extension HTTP2Overhead {
    /// What an HTTP/2 connection's frames no message owns cost, per direction and type.
    init(_ summary: HTTP2ConnectionSummary) {
        func bytesByType(_ tally: HTTP2DirectionTally) -> [String: FrameTypeCount] {
            var result: [String: FrameTypeCount] = [:]
            if tally.prefaceBytes > 0 { result["preface"] = FrameTypeCount(frames: 1, bytes: tally.prefaceBytes) }
            for type in FrameType.allCases where ![.data, .headers, .continuation, .pushPromise].contains(type) {
                let count = tally[type]
                if count.frames > 0 { result[type.name] = FrameTypeCount(frames: count.frames, bytes: count.bytes) }
            }
            if tally.unknown.frames > 0 {
                result["unknown"] = FrameTypeCount(frames: tally.unknown.frames, bytes: tally.unknown.bytes)
            }
            if tally.unowned.frames > 0 {
                result["unowned"] = FrameTypeCount(frames: tally.unowned.frames, bytes: tally.unowned.bytes)
            }
            return result
        }
        self.init(
            client: bytesByType(summary.client), server: bytesByType(summary.server),
            clientErrors: summary.client.frameSizeErrors + summary.client.protocolErrors + summary.client.hpackErrors,
            serverErrors: summary.server.frameSizeErrors + summary.server.protocolErrors + summary.server.hpackErrors,
            streams: summary.streams)
    }
}
