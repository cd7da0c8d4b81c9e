import Analysis
import ContentCoding
import Estimation
import HTTP1
import Records

/// `messages.csv`: one row per record, columns of docs/METERING.md §6, then extra
/// columns of our own after the listed ones.
public final class MessagesCSV {
    /// The `--format` name and the file it writes.
    public static let formatName = "messages"
    public static let fileName = "messages.csv"

    /// The columns docs/METERING.md §6 lists, before the estimator totals.
    public static let measuredColumns = [
        "source", "kind", "conn", "index", "time", "client", "server", "method", "host", "path", "query",
        "status", "endpoint", "pair", "complete", "measured", "wire_line", "wire_headers", "wire_body",
        "wire_total", "body_decoded", "content_encoding", "transfer_encoding",
    ]
    /// Ours, after the estimator totals and before their components.
    public static let extraColumns = [
        "wire_source", "missing_bytes", "decoding", "anomalies", "transport", "protocol", "wire_tls", "tunnel_host",
        "stream", "frames", "header_list",
    ]

    /// The cost layers under the message (docs/METERING.md §2c), after every other column.
    public static let layerColumns = ["wire_tcp", "wire_ip", "wire_frame", "retransmitted"]

    /// Every column for estimators named `estimators` (in the run's order).
    public static func columns(estimators: [String]) -> [String] {
        measuredColumns + estimators.map { "est_\($0)" } + extraColumns
            + estimators.flatMap { ["est_\($0)_line", "est_\($0)_headers", "est_\($0)_body"] } + layerColumns
    }

    private let writer: CSVWriter

    public init(path: String, estimators: [String]) throws {
        writer = try CSVWriter(path: path)
        writer.writeRow(Self.columns(estimators: estimators))
    }

    public func write(_ record: MessageRecord) {
        writer.writeRow(Self.row(for: record))
    }

    /// Puts the file in place; throws, naming it, when a write failed (nothing is left).
    public func close() throws { try writer.close() }

    /// Abandons the file (the run ended early): nothing is left.
    public func discard() { writer.discard() }

    static func row(for record: MessageRecord) -> [String] {
        let message = record.message
        let request = record.requestSummary
        let target = request.map { RequestTarget($0.target) }
        let source = record.source
        let wire = record.wire
        var row: [String] = [
            record.input,
            message.kind.rawValue,
            source.connectionLabel,
            String(message.index),
            source.time.map(formatTime) ?? "",
            source.client,
            source.server,
            request?.method ?? "",
            request?.host ?? "",
            target.map { String(httpBytes: $0.path) } ?? "",
            target?.query.map { String(httpBytes: $0) } ?? "",
            message.status.map(String.init) ?? "",
            record.endpoint,
            message.pair.map(String.init) ?? "",
            String(message.complete),
            String(record.measured),
        ]
        row += [wire.line, wire.headers, wire.body, wire.total, record.bodyDecoded].map { $0.map(String.init) ?? "" }
        row += [
            message.joinedValue(of: "content-encoding") ?? "",
            message.joinedValue(of: "transfer-encoding") ?? "",
        ]
        let estimates = record.estimates.map { try? $0.get() }
        row += estimates.map { $0.map { String($0.total) } ?? "" }
        row += [
            wire.source.rawValue, String(message.missingBytes), decodingName(record),
            (message.anomalies.names + record.notes.map(\.description)).joined(separator: " "),
            source.transport?.rawValue ?? "",
            record.wireProtocol.csvValue,
            wire.tls.map(String.init) ?? "",
            source.tunnelHost ?? "",
            message.http2.map { String($0.stream) } ?? "",
            message.http2.map { String($0.frames) } ?? "",
            message.http2?.headerListSize.map(String.init) ?? "",
        ]
        for estimate in estimates {
            row += estimate.map { [String($0.line), String($0.headers), String($0.body)] } ?? ["", "", ""]
        }
        let lower = wire.lower
        row += [lower?.tcp, lower?.ip, lower?.frame, lower?.retransmitted].map { $0.map(String.init) ?? "" }
        return row
    }

    /// How the body's content coding came off; `har-text` for a HAR response, whose text
    /// is already decoded; empty when the body is unknown.
    private static func decodingName(_ record: MessageRecord) -> String {
        guard record.bodyDecoded != nil else { return "" }
        return record.source.isHAR && record.message.kind == .response ? "har-text" : record.decoding.name
    }

    /// Epoch seconds with microseconds, e.g. `1700000000.123456`.
    public static func formatTime(_ nanoseconds: Int64) -> String {
        // On the magnitude, so that no Int64 (readers clamp to 0...Int64.max, but this is
        // public) gives a negative remainder; truncated toward zero like the division was.
        let micros = (nanoseconds / 1000).magnitude
        let fraction = String(micros % 1_000_000)
        let sign = nanoseconds <= -1000 ? "-" : ""
        return sign + "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}
