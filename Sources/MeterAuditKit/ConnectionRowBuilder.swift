import Analysis
import CostAccounting
import Flows
import MessageModel

extension ConnectionRow {
    /// The one builder of a connection's row (connections.csv, diagnostics): its endpoints by
    /// the client's side, its protocol, records, TCP payload per side and cost layers. A
    /// protocol's reader adds its own columns after (`ConnectionReader.describe`), TLS its own.
    init(
        _ info: ConnectionInfo, input: String, clientSide: Direction, protocolKind: Content, records: Int,
        accounting: ConnectionAccounting, costs: ConnectionCostLedger
    ) {
        self.init(
            input: input, connection: info.number, client: info.endpoint(clientSide).description,
            server: info.endpoint(clientSide.peer).description, protocolKind: protocolKind)
        self.records = records
        clientTCPBytes = (clientSide == .up ? accounting.initiator : accounting.responder).payloadBytes
        serverTCPBytes = (clientSide == .up ? accounting.responder : accounting.initiator).payloadBytes
        (clientCost, serverCost) = costs.costs(clientSide: clientSide)
    }
}

extension HTTPConnectionSummary {
    /// Whether the client the reader settled on is the TCP initiator (the summary's tallies are
    /// the client's and the server's).
    func clientIsInitiator(_ info: ConnectionInfo) -> Bool {
        clientEndpoint.map { $0 == info.initiator } ?? true
    }
}
