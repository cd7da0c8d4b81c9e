import Analysis
import MessageModel

/// `connections.csv`: one row per connection (docs/METERING.md §6), streamed as connections
/// close, in the order they closed within each input.
public final class ConnectionsCSV {
    /// The `--format` name and the file it writes.
    public static let formatName = "connections"
    public static let fileName = "connections.csv"

    public static let columns =
        [
            "source", "conn", "client", "server", "protocol", "tunnel_host", "sni", "alpn", "tls_version", "suite",
            "decrypted", "records", "client_tcp_bytes", "server_tcp_bytes", "client_h2_overhead_bytes",
            "server_h2_overhead_bytes", "client_h2_frames", "server_h2_frames", "h2_streams", "h2_errors",
        ] + costColumns

    /// Per direction (`up`: client to server, `down`: server to client), docs/METERING.md §2c:
    /// each layer's total, the part no message owns, that part by kind, and what was sent again.
    public static let costColumns: [String] = ["up", "down"].flatMap { direction in
        ["tls", "tcp", "ip", "frame"].map { "\(direction)_\($0)" }
            + ["tls", "tcp", "ip", "frame"].map { "\(direction)_\($0)_overhead" }
            + OverheadKind.allKinds.flatMap { kind in
                ["\(direction)_\(kind.name)_ip", "\(direction)_\(kind.name)_frame"]
            }
            + [
                "\(direction)_tls_control_tls", "\(direction)_empty_packet_count",
                "\(direction)_retransmitted_segments", "\(direction)_retransmitted_bytes",
            ]
    }

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
            String(row.clientTCPBytes), String(row.serverTCPBytes),
            row.http2.map { String($0.clientBytes) } ?? "", row.http2.map { String($0.serverBytes) } ?? "",
            row.http2.map { frameList($0.client) } ?? "", row.http2.map { frameList($0.server) } ?? "",
            row.http2.map { String($0.streams) } ?? "",
            row.http2.map { String($0.clientErrors + $0.serverErrors) } ?? "",
        ] + costCells(row.clientCost, tls: !row.tlsVersion.isEmpty || !row.decrypted.isEmpty)
            + costCells(row.serverCost, tls: !row.tlsVersion.isEmpty || !row.decrypted.isEmpty)
    }

    /// One direction's `costColumns`; the TLS layer is empty on a connection without TLS.
    static func costCells(_ cost: DirectionCost, tls: Bool) -> [String] {
        let overhead = cost.overhead
        var cells = [tls ? String(cost.total.tls) : "", String(cost.total.tcp), String(cost.total.ip)]
        cells += [String(cost.total.frame), tls ? String(overhead.tls) : "", String(overhead.tcp)]
        cells += [String(overhead.ip), String(overhead.frame)]
        for kind in OverheadKind.allKinds {
            let bytes = cost[kind]
            cells += [String(bytes.ip), String(bytes.frame)]
        }
        cells += [tls ? String(cost.tlsControl.tls) : "", String(cost.emptyPacketCount)]
        cells += [String(cost.retransmittedSegments), String(cost.retransmittedBytes)]
        return cells
    }

    /// `TYPE:frames/bytes` per frame type, by name, space-separated (e.g. `SETTINGS:2/33`).
    static func frameList(_ counts: [String: FrameTypeCount]) -> String {
        counts.keys.sorted().map { "\($0):\(counts[$0]!.frames)/\(counts[$0]!.bytes)" }.joined(separator: " ")
    }
}
