import Analysis
import CostAccounting
import Flows
import MessageModel

/// A protocol read straight from the TCP stream (HTTP/1.x, h2c, a registered one): its reader's
/// sink and claims over the connection's ledger, and its row when it closes. The router hands
/// every byte to the reader itself; this closes it.
final class CleartextConnection: ConnectionEnding {
    private let info: ConnectionInfo
    private let context: ConnectionContext
    private let recordSink: ConnectionRecordSink
    private let reader: ConnectionReader
    private let costs: ConnectionCostLedger
    private let claims: CleartextClaims

    /// The route of a connection `makeReader` reads from its first byte (or, `startsAtBeginning`
    /// false, from the middle); `clientSide`: the side that sends requests, as far as known.
    static func route(
        _ route: StreamRoute, clientSide: Direction, startsAtBeginning: Bool = true,
        reader makeReader: (ReaderRoute) -> ConnectionReader
    ) -> Route {
        let connection = CleartextConnection(
            route, clientSide: clientSide, startsAtBeginning: startsAtBeginning, makeReader)
        return Route(reader: connection.reader, ending: connection)
    }

    private init(
        _ route: StreamRoute, clientSide: Direction, startsAtBeginning: Bool,
        _ makeReader: (ReaderRoute) -> ConnectionReader
    ) {
        info = route.info
        context = route.context
        costs = route.costs
        claims = CleartextClaims(ledger: costs)
        recordSink = ConnectionRecordSink(context: context, transport: .tcp)
        // A tunnel whose outer connection could not link its ledger has no packets to share.
        if context.packetsReachLedger {
            recordSink.claims = claims
            recordSink.claimsInitiator = info.initiator
            if context.tunnelHost == nil { recordSink.costLedger = costs }
        }
        reader = makeReader(
            ReaderRoute(
                info: info, sink: recordSink, clientSide: clientSide, startsAtBeginning: startsAtBeginning,
                upgradedRequest: nil, limits: context.limits, firstIndexes: context.firstIndexes))
    }

    func close(_ accounting: ConnectionAccounting) {
        reader.close(accounting)
        costs.close()
        claims.close()
        guard var summary = recordSink.summary else { return }
        var row = ConnectionRow(
            info, input: context.input, clientSide: summary.clientIsInitiator(info) ? .up : .down,
            protocolKind: summary.protocolKind == .http ? .http1 : .other, records: recordSink.records,
            accounting: accounting, costs: costs)
        reader.describe(&row)
        if let (upgraded, sink) = recordSink.upgraded {
            // After an Upgrade and its 101 the connection spoke the new protocol.
            upgraded.describe(&row)
            row.records += sink.records
            // Read by the new protocol, the bytes after the 101 are no tunnel's that no one read.
            summary.clientTally.tunnelBytes = 0
            summary.serverTally.tunnelBytes = 0
        }
        context.closed(row, summary)
    }
}
