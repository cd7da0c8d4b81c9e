import Analysis
import CostAccounting
import Flows
import MessageModel

/// What every connection's handler shares within one input.
struct ConnectionContext {
    let sink: RecordSink
    let keys: KeyStore
    let input: String
    /// Every bound of the run: the readers' (`http`) and the cost ledgers'.
    let limits: Limits
    /// The protocols the router chooses from.
    let protocols: ProtocolRegistry
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

    /// Whether captured packets reach this connection's ledger: a tunnel's are its outer
    /// connection's, counted there only when that connection's ledger could be linked.
    var packetsReachLedger: Bool { tunnelHost == nil || tunnelCosts != nil }
}
