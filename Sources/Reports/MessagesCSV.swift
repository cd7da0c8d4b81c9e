import Analysis
import ContentCoding
import Estimation
import MessageModel
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
    // The row and the address texts change for every record: not checked for overlapping
    // access at run time (`@exclusivity(unchecked)`), as the file is written from the parsing
    // thread alone and no code but the row's own runs while they are changed. The run tests
    // write messages.csv in debug builds.
    /// The row being written, its buffer kept from one record to the next.
    @exclusivity(unchecked) private var row = CSVRowBytes()

    public init(path: String, estimators: [String]) throws {
        writer = try CSVWriter(path: path)
        writer.writeRow(Self.columns(estimators: estimators))
    }

    /// The texts of the last connection's addresses: a connection's records mostly come in a row.
    @exclusivity(unchecked) private var addressTexts = AddressTexts()

    public func write(_ record: MessageRecord) {
        Self.appendRow(for: record, addresses: &addressTexts, to: &row)
        writer.writeRow(&row)
    }

    /// Puts the file in place; throws, naming it, when a write failed (nothing is left).
    public func close() throws { try writer.close() }

    /// Abandons the file (the run ended early): nothing is left.
    public func discard() { writer.discard() }

    /// The row's cells as texts.
    static func row(for record: MessageRecord) -> [String] {
        var addresses = AddressTexts()
        var cells = CSVTextCells()
        appendRow(for: record, addresses: &addresses, to: &cells)
        return cells.cells
    }

    /// The row's cells, one by one: written into the file's bytes, numbers formatted in
    /// place, so that no String is made per cell (once per record).
    static func appendRow<Cells: CSVCells>(
        for record: MessageRecord, addresses: inout AddressTexts, to row: inout Cells
    ) {
        let message = record.message
        let request = record.requestSummary
        let target = record.requestTarget
        let source = record.source
        let wire = record.wire
        row.append(record.input)
        row.append(message.kind.rawValue)
        switch source {
        case let .capture(flow): row.append(flow.connection)
        case .har: row.append(source.connectionLabel)
        }
        row.append(message.index)
        appendTime(source.time, to: &row)
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
        appendHTTPText(target?.path, to: &row)
        appendHTTPText(target?.query, to: &row)
        row.append(message.status)
        row.append(record.endpoint)
        row.append(message.pair)
        row.append(message.complete)
        row.append(record.measured)
        row.append(wire.line)
        row.append(wire.headers)
        row.append(wire.body)
        row.append(wire.total)
        row.append(record.bodyDecoded)
        appendJoinedValue(of: "content-encoding", in: message, to: &row)
        appendJoinedValue(of: "transfer-encoding", in: message, to: &row)
        for estimate in record.estimates { row.append(try? estimate.get().total) }
        row.append(wire.source.rawValue)
        row.append(message.missingBytes)
        row.append(decodingName(record))
        if message.anomalies.isEmpty && record.notes.isEmpty {
            row.append("")
        } else {
            // A head known in part names what it lacks (docs/METERING.md §2a): the fields whose
            // absence leaves an estimate `fields-unknown`.
            let unknown = message.unknownFieldNames
            let missing = unknown.isEmpty ? [] : ["fields-unknown(" + unknown.joined(separator: ",") + ")"]
            row.append((message.anomalies.names + missing + record.notes.map(\.description)).joined(separator: " "))
        }
        row.append(source.transport?.rawValue ?? "")
        row.append(record.wireProtocol.csvValue)
        row.append(wire.tls)
        row.append(source.tunnelHost ?? "")
        row.append(message.protocolFacts.stream.map { Int($0) })
        row.append(message.protocolFacts.frames)
        row.append(message.protocolFacts.headerListSize)
        for estimate in record.estimates {
            let estimate = try? estimate.get()
            row.append(estimate?.line)
            row.append(estimate?.headers)
            row.append(estimate?.body)
        }
        let lower = wire.lower
        row.append(lower?.tcp)
        row.append(lower?.ip)
        row.append(lower?.frame)
        row.append(lower?.retransmitted)
    }

    /// Header bytes as `String(httpBytes:)` reads them: ASCII (nearly always) as it is;
    /// an empty cell for nil.
    private static func appendHTTPText<Cells: CSVCells>(_ bytes: ArraySlice<UInt8>?, to row: inout Cells) {
        guard let bytes else { return row.append("") }
        if bytes.contains(where: { $0 >= 0x80 }) { return row.append(String(httpBytes: bytes)) }
        bytes.withUnsafeBufferPointer { row.append(utf8: $0) }
    }

    /// `HTTPMessage.joinedValue(of:)`, without its Strings for the one ASCII value most
    /// messages have.
    private static func appendJoinedValue<Cells: CSVCells>(
        of lowercasedName: String, in message: HTTPMessage, to row: inout Cells
    ) {
        let values = message.values(of: lowercasedName)
        // Absent (the usual case) or one value: no second look-up through `joinedValue`.
        if values.isEmpty { return row.append("") }
        if values.count == 1 { return appendHTTPText(values[0][...], to: &row) }
        row.append(message.joinedValue(of: lowercasedName) ?? "")
    }

    /// `formatTime`'s text, or an empty cell for nil.
    private static func appendTime<Cells: CSVCells>(_ nanoseconds: Int64?, to row: inout Cells) {
        guard let nanoseconds else { return row.append("") }
        withTimeText(nanoseconds) { row.append(utf8: $0) }
    }

    /// An address's text (`TransportEndpoint.description`), kept for the last client and the
    /// last server asked.
    struct AddressTexts {
        private var lastClient = LastText()
        private var lastServer = LastText()

        mutating func client(_ address: TransportEndpoint) -> String { lastClient.text(of: address) }
        mutating func server(_ address: TransportEndpoint) -> String { lastServer.text(of: address) }

        /// The text of the last address asked.
        private struct LastText {
            private var last: (address: TransportEndpoint, text: String)?

            mutating func text(of address: TransportEndpoint) -> String {
                if let last, last.address == address { return last.text }
                let text = address.description
                last = (address, text)
                return text
            }
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
        withTimeText(nanoseconds) { String(decoding: $0, as: UTF8.self) }
    }

    /// `body` of `formatTime`'s text.
    private static func withTimeText<Result>(
        _ nanoseconds: Int64, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        // On the magnitude, so that no Int64 (readers clamp to 0...Int64.max, but this is
        // public) gives a negative remainder; truncated toward zero like the division was.
        let micros = (nanoseconds / 1000).magnitude
        return FixedDecimal.withDigits(UInt64(micros), decimals: 6, negative: nanoseconds <= -1000, body)
    }
}
