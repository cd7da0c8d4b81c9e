import Analysis

/// `connections.csv`: one row per connection (docs/METERING.md §6), streamed as connections
/// close, in the order they closed within each input.
public final class ConnectionsCSV {
    /// The `--format` name and the file it writes.
    public static let formatName = "connections"
    public static let fileName = "connections.csv"

    public static let columns = [
        "source", "conn", "client", "server", "protocol", "tunnel_host", "sni", "alpn", "tls_version", "suite",
        "decrypted", "records", "client_tcp_bytes", "server_tcp_bytes", "client_tls_bytes", "server_tls_bytes",
        "client_tls_control_bytes", "server_tls_control_bytes",
    ]

    private let writer: CSVWriter

    public init(path: String) throws {
        writer = try CSVWriter(path: path)
        writer.writeRow(Self.columns)
    }

    public func write(_ row: ConnectionRow) { writer.writeRow(Self.row(for: row)) }

    /// Puts the file in place; throws, naming it, when a write failed (nothing is left).
    public func close() throws { try writer.close() }

    /// Abandons the file (the run ended early): nothing is left.
    public func discard() { writer.discard() }

    static func row(for row: ConnectionRow) -> [String] {
        [
            row.input, String(row.connection), row.client, row.server, row.protocolKind.rawValue, row.tunnelHost,
            row.serverName, row.alpn, row.tlsVersion, row.cipherSuite, row.decrypted, String(row.records),
            String(row.clientTCPBytes), String(row.serverTCPBytes), String(row.clientTLSBytes),
            String(row.serverTLSBytes), String(row.clientTLSControlBytes), String(row.serverTLSControlBytes),
        ]
    }
}
