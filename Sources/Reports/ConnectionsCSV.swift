import Analysis
import CostAccounting
import MessageModel

/// `connections.csv`: one row per connection (docs/METERING.md §6), streamed as connections
/// close, in the order they closed within each input.
public final class ConnectionsCSV {
    /// The `--format` name and the file it writes.
    public static let formatName = "connections"
    public static let fileName = "connections.csv"

    /// The header: the overhead kinds registered when it is first read (`OverheadKind.all`).
    public static var columns: [String] {
        [
            "source", "conn", "client", "server", "protocol", "tunnel_host", "sni", "alpn", "tls_version", "suite",
            "decrypted", "records", "client_tcp_bytes", "server_tcp_bytes", "client_h2_overhead_bytes",
            "server_h2_overhead_bytes", "client_h2_frames", "server_h2_frames", "h2_streams", "h2_errors",
        ] + costColumns
    }

    /// Per direction (`up`: client to server, `down`: server to client), docs/METERING.md §2c:
    /// each layer's total, the part no message owns, that part by kind, and what was sent again.
    /// A kind of the TLS part has its TLS bytes too (`{direction}_tls_control_tls`).
    public static var costColumns: [String] {
        let kinds = OverheadKind.all
        var columns: [String] = []
        for direction in ["up", "down"] {
            let layers = ["tls", "tcp", "ip", "frame"]
            columns += layers.map { "\(direction)_\($0)" }
            columns += layers.map { "\(direction)_\($0)_overhead" }
            for kind in kinds { columns += ["\(direction)_\(kind.name)_ip", "\(direction)_\(kind.name)_frame"] }
            for kind in kinds where kind.part == .tls { columns.append("\(direction)_\(kind.name)_tls") }
            columns += [
                "\(direction)_empty_packet_count", "\(direction)_retransmitted_segments",
                "\(direction)_retransmitted_bytes",
            ]
        }
        return columns
    }

    private let writer: CSVWriter

    public init(path: String) throws {
        writer = try CSVWriter(path: path)
        writer.writeRow(Self.columns)
    }

    public func write(_ row: ConnectionRow) { writer.writeRow(Self.row(for: row, kinds: kinds)) }

    /// Puts the file in place; throws, naming it, when a write failed (nothing is left).
    public func close() throws { try writer.close() }

    /// Abandons the file (the run ended early): nothing is left.
    public func discard() { writer.discard() }

    static func row(for row: ConnectionRow, kinds: [OverheadKind] = OverheadKind.all) -> [String] {
        [
            row.input, String(row.connection), row.client, row.server, row.protocolKind.rawValue, row.tunnelHost,
            row.serverName, row.alpn, row.tlsVersion, row.cipherSuite, row.decrypted, String(row.records),
            String(row.clientTCPBytes), String(row.serverTCPBytes),
            row.http2.map { String($0.clientBytes) } ?? "", row.http2.map { String($0.serverBytes) } ?? "",
            row.http2.map { frameList($0.client) } ?? "", row.http2.map { frameList($0.server) } ?? "",
            row.http2.map { String($0.streams) } ?? "",
            row.http2.map { String($0.clientErrors + $0.serverErrors) } ?? "",
        ] + costCells(row.clientCost, tls: !row.tlsVersion.isEmpty || !row.decrypted.isEmpty, kinds: kinds)
            + costCells(row.serverCost, tls: !row.tlsVersion.isEmpty || !row.decrypted.isEmpty, kinds: kinds)
    }

    /// The kinds in column order, read once per file, not per row.
    private let kinds = OverheadKind.all

    /// One direction's `costColumns`; the TLS layer is empty on a connection without TLS.
    static func costCells(_ cost: DirectionCost, tls: Bool, kinds: [OverheadKind] = OverheadKind.all) -> [String] {
        let overhead = cost.overhead
        var cells = [tls ? String(cost.total.tls) : "", String(cost.total.tcp), String(cost.total.ip)]
        cells += [String(cost.total.frame), tls ? String(overhead.tls) : "", String(overhead.tcp)]
        cells += [String(overhead.ip), String(overhead.frame)]
        for kind in kinds {
            let bytes = cost[kind]
            cells += [String(bytes.ip), String(bytes.frame)]
        }
        for kind in kinds where kind.part == .tls { cells.append(tls ? String(cost[kind].tls) : "") }
        cells.append(String(cost.emptyPacketCount))
        cells += [String(cost.retransmittedSegments), String(cost.retransmittedBytes)]
        return cells
    }

    /// `TYPE:frames/bytes` per frame type, by name, space-separated (e.g. `SETTINGS:2/33`).
    static func frameList(_ counts: [String: FrameTypeCount]) -> String {
        counts.keys.sorted().map { "\($0):\(counts[$0]!.frames)/\(counts[$0]!.bytes)" }.joined(separator: " ")
    }
}
