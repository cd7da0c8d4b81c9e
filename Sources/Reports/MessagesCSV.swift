import Analysis
import ContentCoding
import Estimation
import MessageModel
import PacketLayers
import Records

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// The cost layers under the message (docs/METERING.md §2c), after every other column;
    /// QUIC's two (§2d) last, empty for a message TCP carried.
    public static let layerColumns = ["wire_tcp", "wire_ip", "wire_frame", "retransmitted", "wire_quic", "wire_udp"]

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
    /// The row being written, its buffer kept from one record to the next (freed by `deinit`).
    @exclusivity(unchecked) private var row = CSVRowWriter()

    public init(path: String, estimators: [String]) throws {
        writer = try CSVWriter(path: path)
        writer.writeRow(Self.columns(estimators: estimators))
    }

    /// Columns known only at the end of the run (an app meter's, joined once every record is
    /// in: docs/METER-LOG.md), after every other. The rows go to a scratch file beside `path`
    /// as they come, with 4 bytes per row kept (its length); `complete` writes the file, each
    /// row with its late cells, in one streaming pass.
    public init(path: String, estimators: [String], lateColumns: [String]) throws {
        writer = try CSVWriter(path: path)
        writer.writeRow(Self.columns(estimators: estimators) + lateColumns)
        guard !lateColumns.isEmpty else { return }
        scratch = try Self.scratch(beside: path)
    }

    /// Late columns named only at the end of the run (an app meter's, once its log is read
    /// on another core): the header row waits for `complete(lateColumns:_:)`.
    public init(path: String, estimators: [String], lateColumnsNamedAtTheEnd: Void) throws {
        writer = try CSVWriter(path: path)
        pendingHeader = Self.columns(estimators: estimators)
        scratch = try Self.scratch(beside: path)
    }

    private static func scratch(beside path: String) throws -> RowScratch {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return try RowScratch(path: directory + "." + name + ".rows-\(getpid())")
    }

    /// The header row without its late columns, written by `complete(lateColumns:_:)`.
    private var pendingHeader: [String]?

    /// The rows without their late cells, and each one's length (CRLF included).
    private var scratch: RowScratch?
    private var rowLengths: [UInt32] = []

    /// The texts of the last connection's addresses: a connection's records mostly come in a row.
    @exclusivity(unchecked) private var addressTexts = AddressTexts()

    deinit { row.deallocate() }

    public func write(_ record: MessageRecord) {
        Self.appendRow(for: record, addresses: &addressTexts, to: &row)
        row.endRow()
        if let scratch {
            rowLengths.append(UInt32(clamping: row.count))
            scratch.write(row.bytes)
        } else {
            writer.write(raw: row.bytes)
        }
        row.removeAll()
    }

    /// With late columns: writes every row with its late cells (`cells(row, &cells)` appends
    /// them for the row at that place, rows asked in order), then puts the file in place.
    public func complete(_ cells: (Int, inout CSVRowBytes) -> Void) throws {
        try complete(lateColumns: [], cells)
    }

    /// `complete`, the header row (when it waited) written first with `lateColumns`; no late
    /// column: the rows as they came.
    public func complete(lateColumns: [String], _ cells: (Int, inout CSVRowBytes) -> Void) throws {
        guard let scratch else { return try close() }
        if let header = pendingHeader {
            pendingHeader = nil
            writer.writeRow(header + lateColumns)
            guard !lateColumns.isEmpty else { return try completeWithoutLateCells(scratch) }
        }
        self.scratch = nil
        defer { scratch.remove() }
        var late = CSVRowBytes()
        var failure: String?
        scratch.read(lengths: rowLengths, failure: &failure) { index, bytes in
            // The row without its CRLF, then a comma and the late cells with the row's end.
            writer.write(raw: UnsafeRawBufferPointer(rebasing: bytes.prefix(max(bytes.count - 2, 0))))
            cells(index, &late)
            late.endRow()
            withUnsafeBytes(of: UInt8(ascii: ",")) { writer.write(raw: $0) }
            late.withBytes { writer.write(raw: $0) }
            late.removeAll()
        }
        if let failure {
            writer.discard()
            throw CSVWriter.Error.cannotWrite(path: writer.path, reason: "scratch file: \(failure)")
        }
        try writer.close()
    }

    /// The rows from the scratch file as they were written.
    private func completeWithoutLateCells(_ scratch: RowScratch) throws {
        self.scratch = nil
        defer { scratch.remove() }
        var failure: String?
        scratch.read(lengths: rowLengths, failure: &failure) { _, bytes in
            writer.write(raw: UnsafeRawBufferPointer(rebasing: bytes))
        }
        if let failure {
            writer.discard()
            throw CSVWriter.Error.cannotWrite(path: writer.path, reason: "scratch file: \(failure)")
        }
        try writer.close()
    }

    /// Puts the file in place; throws, naming it, when a write failed (nothing is left).
    public func close() throws {
        if scratch != nil { return try complete { _, _ in } }
        try writer.close()
    }

    /// Abandons the file (the run ended early): nothing is left.
    public func discard() {
        scratch?.remove()
        writer.discard()
    }

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
        row.append(name: message.kind.rawValue)
        switch source {
        case let .capture(flow): row.append(flow.connection)
        case .har, .charles: row.append(source.connectionLabel)
        }
        row.append(message.index)
        appendTime(source.time, to: &row)
        switch source {
        case let .capture(flow):
            row.append(addresses.client(flow.client))
            row.append(addresses.server(flow.server))
        case .har, .charles:
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
        appendCodings(of: message, to: &row)
        for estimate in record.estimates { row.append(try? estimate.get().total) }
        row.append(name: wire.source.rawValue)
        row.append(message.missingBytes)
        row.append(decodingName(record))
        if message.anomalies.isEmpty && record.notes.isEmpty {
            row.append("")
        } else if message.anomalies.isEmpty && record.notes.count == 1 && message.unknownFieldNames.isEmpty {
            // One note alone (a HAR's usual case): its text is the cell.
            row.append(record.notes[0].description)
        } else {
            row.append(anomalies(of: record))
        }
        row.append(name: source.transport?.rawValue ?? "")
        row.append(name: record.wireProtocol.csvValue)
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
        // Over QUIC, `tcp` holds the QUIC layer's bytes (LowerLayers.udp says which).
        let overQUIC = lower?.udp != nil
        row.append(overQUIC ? nil : lower?.tcp)
        row.append(lower?.ip)
        row.append(lower?.frame)
        row.append(lower?.retransmitted)
        row.append(overQUIC ? lower?.tcp : nil)
        row.append(lower?.udp)
    }

    /// Header bytes as `String(httpBytes:)` reads them: ASCII (nearly always) as it is;
    /// an empty cell for nil.
    private static func appendHTTPText<Cells: CSVCells>(_ bytes: ArraySlice<UInt8>?, to row: inout Cells) {
        guard let bytes else { return row.append("") }
        bytes.withUnsafeBufferPointer { text in
            if isASCII(text) { return row.append(utf8: text) }
            row.append(String(httpBytes: bytes))
        }
    }

    /// Whether every byte is below 0x80, eight at a time.
    @inline(__always)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard var position = bytes.baseAddress.map(UnsafeRawPointer.init) else { return true }
        var left = bytes.count
        while left >= 8 {
            if position.loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            position += 8
            left -= 8
        }
        while left > 0 {
            if position.load(as: UInt8.self) >= 0x80 { return false }
            position += 1
            left -= 1
        }
        return true
    }

    /// The `content_encoding` and `transfer_encoding` cells (`HTTPMessage.joinedValue(of:)`),
    /// found in one pass over the fields, their lengths compared first, without Strings for
    /// the one ASCII value most messages have.
    private static func appendCodings<Cells: CSVCells>(of message: HTTPMessage, to row: inout Cells) {
        let contentName = "content-encoding"
        let transferName = "transfer-encoding"
        // The first field of each name, and how many there are.
        var content: (first: Int, count: Int) = (0, 0)
        var transfer: (first: Int, count: Int) = (0, 0)
        message.fields.withUnsafeBufferPointer { fields in
            for index in fields.indices {
                let length = fields[index].name.count
                if length == 16, fields[index].hasName(contentName) {
                    if content.count == 0 { content.first = index }
                    content.count += 1
                } else if length == 17, fields[index].hasName(transferName) {
                    if transfer.count == 0 { transfer.first = index }
                    transfer.count += 1
                }
            }
        }
        appendValues(of: contentName, found: content, in: message, to: &row)
        appendValues(of: transferName, found: transfer, in: message, to: &row)
    }

    /// The cell of the `found.count` fields named `lowercasedName`, the first at `found.first`.
    @inline(__always)
    private static func appendValues<Cells: CSVCells>(
        of lowercasedName: String, found: (first: Int, count: Int), in message: HTTPMessage, to row: inout Cells
    ) {
        switch found.count {
        case 0: row.append("")
        case 1: appendHTTPText(message.fields[found.first].value[...], to: &row)
        default: row.append(message.joinedValue(of: lowercasedName) ?? "")
        }
    }

    /// The `anomalies` cell: the message's anomalies, then a head known in part names what it
    /// lacks (docs/METERING.md §2a: the fields whose absence leaves an estimate
    /// `fields-unknown`), then the record's notes; one String, no array of the pieces.
    private static func anomalies(of record: MessageRecord) -> String {
        let message = record.message
        var text = ""
        text.reserveCapacity(64)
        var first = true
        for (anomaly, name) in MessageAnomalies.names where message.anomalies.contains(anomaly) {
            if !first { text += " " }
            first = false
            text += name
        }
        let unknown = message.unknownFieldNames
        if !unknown.isEmpty {
            if !first { text += " " }
            first = false
            text += "fields-unknown(" + unknown.joined(separator: ",") + ")"
        }
        for note in record.notes {
            if !first { text += " " }
            first = false
            text += note.description
        }
        return text
    }

    /// `formatTime`'s text, or an empty cell for nil.
    private static func appendTime<Cells: CSVCells>(_ nanoseconds: Int64?, to row: inout Cells) {
        guard let nanoseconds else { return row.append("") }
        // As `withTimeText`, in place.
        row.append(scaled: UInt64((nanoseconds / 1000).magnitude), decimals: 6, negative: nanoseconds <= -1000)
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

/// The rows of messages.csv waiting for their late cells: written as they come, read back once.
final class RowScratch {
    /// The write buffer's and the read-back chunk's size: as OutputFile's, a few dozen system
    /// calls for the bench capture's 1.8 MB, where 1 MB buffers were 2 MB of the run's peak RSS.
    static let chunkSize = OutputFile.bufferSize
    private let path: String
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private var failure: String?

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CSVWriter.Error.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        buffer.reserveCapacity(Self.chunkSize)
    }

    deinit { remove() }

    func write(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.chunkSize { flush() }
    }

    private func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil else { return }
        buffer.withUnsafeBytes { bytes in
            var rest = bytes
            while !rest.isEmpty {
                let written = Glibc.write(descriptor, rest.baseAddress, rest.count)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(written))
            }
        }
    }

    /// Reads the rows back from the start, `lengths` giving each one's bytes.
    func read(
        lengths: [UInt32], failure: inout String?, _ row: (Int, UnsafeRawBufferPointer.SubSequence) -> Void
    ) {
        flush()
        buffer = []
        if let own = self.failure { return failure = own }
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { return failure = String(cString: strerror(errno)) }
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        var start = 0 // first byte of the next row in `chunk`
        var end = 0 // bytes read into `chunk`
        for (index, length) in lengths.enumerated() {
            let length = Int(length)
            if end - start < length {
                // Move the rest to the front, grow for a long row, read more.
                chunk.withUnsafeMutableBytes { bytes in
                    _ = memmove(bytes.baseAddress!, bytes.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
                if chunk.count < length { chunk += [UInt8](repeating: 0, count: length - chunk.count) }
                while end < length {
                    let count = chunk.withUnsafeMutableBytes { bytes in
                        Glibc.read(descriptor, bytes.baseAddress! + end, bytes.count - end)
                    }
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else {
                        return failure = count == 0 ? "cut short" : String(cString: strerror(errno))
                    }
                    end += count
                }
            }
            chunk.withUnsafeBytes { bytes in row(index, bytes[start..<start + length]) }
            start += length
        }
    }

    func remove() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
            unlink(path)
        }
    }
}
