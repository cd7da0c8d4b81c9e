import Analysis
import ContentCoding
import Estimation
import HTTP1
import PacketLayers
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

    /// The texts of the last connection's addresses: a connection's records mostly come in a row.
    private var addressTexts = AddressTexts()

    public func write(_ record: MessageRecord) {
        writer.writeRow(Self.row(for: record, addresses: &addressTexts))
    }

    /// Puts the file in place; throws, naming it, when a write failed (nothing is left).
    public func close() throws { try writer.close() }

    /// Abandons the file (the run ended early): nothing is left.
    public func discard() { writer.discard() }

    static func row(for record: MessageRecord) -> [String] {
        var addresses = AddressTexts()
        return row(for: record, addresses: &addresses)
    }

    /// The row's cells appended one by one into an array of the row's size: built from array
    /// literals joined together, the row cost a third more (temporary arrays, regrowth).
    static func row(for record: MessageRecord, addresses: inout AddressTexts) -> [String] {
        let message = record.message
        let request = record.requestSummary
        let target = request.map { RequestTarget($0.target) }
        let source = record.source
        let wire = record.wire
        let estimates = record.estimates.map { try? $0.get() }
        var row: [String] = []
        row.reserveCapacity(measuredColumns.count + extraColumns.count + layerColumns.count + 4 * estimates.count)
        func number(_ value: Int?) -> String { value.map { String($0) } ?? "" }
        row.append(record.input)
        row.append(message.kind.rawValue)
        row.append(source.connectionLabel)
        row.append(String(message.index))
        row.append(source.time.map(formatTime) ?? "")
        switch source {
        case let .capture(flow):
            row.append(addresses.client(flow.client))
            row.append(addresses.server(flow.server))
        case .har:
            row.append(source.client)
            row.append(source.server)
        }
        row.append(request?.method ?? "")
        row.append(request?.host ?? "")
        row.append(target.map { String(httpBytes: $0.path) } ?? "")
        row.append(target?.query.map { String(httpBytes: $0) } ?? "")
        row.append(number(message.status))
        row.append(record.endpoint)
        row.append(number(message.pair))
        row.append(String(message.complete))
        row.append(String(record.measured))
        row.append(number(wire.line))
        row.append(number(wire.headers))
        row.append(number(wire.body))
        row.append(number(wire.total))
        row.append(number(record.bodyDecoded))
        row.append(message.joinedValue(of: "content-encoding") ?? "")
        row.append(message.joinedValue(of: "transfer-encoding") ?? "")
        for estimate in estimates { row.append(number(estimate?.total)) }
        row.append(wire.source.rawValue)
        row.append(String(message.missingBytes))
        row.append(decodingName(record))
        row.append((message.anomalies.names + record.notes.map(\.description)).joined(separator: " "))
        row.append(source.transport?.rawValue ?? "")
        row.append(record.wireProtocol.csvValue)
        row.append(number(wire.tls))
        row.append(source.tunnelHost ?? "")
        row.append(message.http2.map { String($0.stream) } ?? "")
        row.append(message.http2.map { String($0.frames) } ?? "")
        row.append(number(message.http2?.headerListSize))
        for estimate in estimates {
            row.append(number(estimate?.line))
            row.append(number(estimate?.headers))
            row.append(number(estimate?.body))
        }
        let lower = wire.lower
        row.append(number(lower?.tcp))
        row.append(number(lower?.ip))
        row.append(number(lower?.frame))
        row.append(number(lower?.retransmitted))
        return row
    }

    /// An address's text (`TransportEndpoint.description`), kept for the last client and the
    /// last server asked.
    struct AddressTexts {
        private var lastClient: (address: TransportEndpoint, text: String)?
        private var lastServer: (address: TransportEndpoint, text: String)?

        mutating func client(_ address: TransportEndpoint) -> String {
            if let last = lastClient, last.address == address { return last.text }
            let text = address.description
            lastClient = (address, text)
            return text
        }

        mutating func server(_ address: TransportEndpoint) -> String {
            if let last = lastServer, last.address == address { return last.text }
            let text = address.description
            lastServer = (address, text)
            return text
        }
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
