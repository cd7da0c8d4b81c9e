import CaptureIO
import MessageModel
import Records

extension ExporterRule {
    /// mitmproxy's `headersSize` is a Python repr's length; every other exporter's sizes are read as given.
    public init(creatorName: String?) {
        self = creatorName?.lowercased().contains("mitmproxy") == true ? .reconstructedHead : .reportedSizes
    }
}

/// One HAR message made ready for measuring: the HTTP view the estimators read, and what the
/// HAR tells of its size, entry and body.
public struct HARMessage: Sendable {
    public var message: HTTPMessage
    public var wire: WireSize
    public var source: HAREntrySource
    /// Request: the body as the app passed it (content coding still on). Response: the decoded
    /// body (HAR text is decoded). Nil when the HAR does not tell.
    public var body: [UInt8]?
    public var notes: [RecordNote]
    /// Where the record says it came from: the HAR entry, or a Charles transaction.
    public var recordSource: RecordSource
    /// Content codings still applied to `body` when the source says so (Charles's `decoded`).
    var codingsStillOn: [String]?

    public init(
        message: HTTPMessage, wire: WireSize, source: HAREntrySource, body: [UInt8]?, notes: [RecordNote],
        recordSource: RecordSource? = nil, codingsStillOn: [String]? = nil
    ) {
        self.message = message
        self.wire = wire
        self.source = source
        self.body = body
        self.notes = notes
        self.recordSource = recordSource ?? .har(source)
        self.codingsStillOn = codingsStillOn
    }

    /// Content codings still applied to `body`: a request's own; none on a HAR response, whose
    /// text is decoded; a Charles body's own unless Charles decoded it.
    public var bodyCodings: [String] {
        codingsStillOn ?? (message.kind == .request ? message.contentCodings : [])
    }
}

/// Turns HAR entries into messages, one request and at most one response per entry.
public struct HARMessageBuilder: Sendable {
    public let rule: ExporterRule

    public init(rule: ExporterRule) {
        self.rule = rule
    }

    public func messages(for entry: HAREntry) -> (request: HARMessage, response: HARMessage?) {
        let url = HARURL(entry.request.url)
        let started = entry.startedDateTime.flatMap(ISO8601Time.parse)
        let source = HAREntrySource(
            entry: entry.index, rule: rule, connection: entry.connection,
            time: started?.nanoseconds, server: url.server(address: entry.serverIPAddress))
        var entryNotes: [RecordNote] = []
        if entry.fromCache { entryNotes.append(.fromCache) }
        if entry.webSocketMessageCount > 0 { entryNotes.append(.webSocketMessages(entry.webSocketMessageCount)) }
        if started?.clamped == true { entryNotes.append(.timeClamped) }

        let request = self.request(entry, url: url, source: source, notes: entryNotes)
        var response: HARMessage?
        if let har = entry.response {
            response = self.response(har, entry: entry, request: request.message, source: source, notes: entryNotes)
        }
        return (request, response)
    }

    private func request(_ entry: HAREntry, url: HARURL, source: HAREntrySource, notes entryNotes: [RecordNote])
        -> HARMessage
    {
        let har = entry.request
        var message = HTTPMessage(kind: .request, index: entry.index)
        message.method = har.method
        message.target = url.target
        message.version = har.httpVersion
        message.fields = Self.fields(har.headers)
        message.startLine = url.requestLine(method: har.method)
        message.complete = true
        // A pattern, not `!= nil`: that compared the whole response by Equatable, copying it.
        if case .some = entry.response { message.pair = entry.index } else { message.anomalies.insert(.unpaired) }

        var notes = entryNotes + har.unexpectedTypes.map(RecordNote.unexpectedType)
        var body: [UInt8]?
        if let postData = har.postData {
            if let text = postData.text {
                body = text
            } else if !postData.params.isEmpty,
                postData.mimeType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
            {
                body = FormURLEncoding.body(postData.params)
                notes.append(.bodyFromParams)
            }
        } else {
            let lengths = message.values(of: "content-length").map { String(httpBytes: $0).trimmingSpaces }
            let announced =
                !message.values(of: "transfer-encoding").isEmpty
                || lengths.contains { $0 != "0" } || (har.bodySize ?? 0) > 0
            body = announced ? nil : []
        }
        if body == nil { notes.append(.bodyUnknown) }
        return finish(
            message, headersSize: har.headersSize, bodySize: har.bodySize, transferSize: nil,
            requestMethod: nil, body: body, source: source, notes: notes)
    }

    private func response(
        _ har: HARResponse, entry: HAREntry, request: HTTPMessage, source: HAREntrySource,
        notes: [RecordNote]
    ) -> HARMessage {
        var message = HTTPMessage(kind: .response, index: entry.index)
        message.status = har.status
        message.reason = Self.bytes(of: har.statusText)
        message.version = har.httpVersion
        message.fields = Self.fields(har.headers)
        // docs/METERING.md §3: the documented estimator's status line for a HAR record.
        message.startLine = Self.statusLine(har.httpVersion, har.status, har.statusText)
        message.pair = entry.index
        message.request = RequestSummary(
            index: entry.index, method: request.method ?? "", target: request.target,
            host: request.requestHost)
        // Chrome's `_error` on a response with a status: the transfer was cut.
        message.complete = har.error?.isEmpty ?? true

        // The framing rule of a captured response says when there is no body (HEAD, 1xx, 204, 304).
        let framing = message.bodyFraming(requestMethod: request.method)
        let body: [UInt8]? = har.content.text ?? (framing == .none || har.bodySize == 0 ? [] : nil)
        return finish(
            message, headersSize: har.headersSize, bodySize: har.bodySize, transferSize: har.transferSize,
            requestMethod: request.method, framing: framing, body: body, source: source,
            notes: Self.notes(notes, har.unexpectedTypes, bodyUnknown: body == nil))
    }

    /// Sizes and framing per the exporter rule (docs/HAR.md, "Wire size").
    /// `framing`: the message's body framing when the caller has it already.
    private func finish(
        _ message: consuming HTTPMessage, headersSize: Int?, bodySize: Int?, transferSize: Int?,
        requestMethod: String?, framing: BodyFraming? = nil, body: [UInt8]?, source: HAREntrySource,
        notes: [RecordNote]
    ) -> HARMessage {
        var notes = notes
        // Out-of-range sizes are unknown, so every sum below stays far inside Int.
        let used = rule == .reconstructedHead ? [bodySize] : [headersSize, bodySize, transferSize]
        let outOfRange = used.contains { ($0 ?? 0) > Self.maximumSize }
        if outOfRange { notes.append(.sizeOutOfRange) }
        let headersSize = headersSize.flatMap { $0 <= Self.maximumSize ? $0 : nil }
        let bodySize = bodySize.flatMap { $0 <= Self.maximumSize ? $0 : nil }
        let transferSize = transferSize.flatMap { $0 <= Self.maximumSize ? $0 : nil }
        // Not `framing ?? message.bodyFraming(…)`: the autoclosure copied the message.
        if let framing {
            message.framing = framing
        } else {
            message.framing = message.bodyFraming(requestMethod: requestMethod)
        }
        let chunked = message.framing == .chunked
        let lineLength = Self.startLineLength(message)
        var wire: WireSize
        switch rule {
        case .reconstructedHead:
            let headers = message.fields.reduce(2) { $0 + $1.name.count + $1.value.count + 4 }
            let wireBody = bodySize.map { chunked ? $0 + Self.oneChunkFraming($0) : $0 }
            let total = wireBody.map { lineLength + headers + $0 }
            wire = WireSize(
                line: lineLength, headers: headers, body: wireBody, total: total,
                source: total == nil ? .unknown : .reconstructed)
        case .reportedSizes:
            let split = headersSize.flatMap { $0 >= lineLength ? (lineLength, $0 - lineLength) : nil }
            wire = WireSize(line: split?.0, headers: split?.1, body: bodySize, total: nil, source: .unknown)
            if let headersSize, let bodySize {
                wire.total = headersSize + bodySize
                wire.source = .har
            } else if headersSize == nil, let transferSize {
                wire.total = transferSize
                wire.source = .harTransferSize
            }
        }
        message.bodyLength = bodySize ?? 0
        return HARMessage(message: message, wire: wire, source: source, body: body, notes: notes)
    }

    /// The entry's notes, then one per unexpected type, then `bodyUnknown`: appended to one
    /// array, without the temporary arrays of a sum.
    static func notes(_ entryNotes: [RecordNote], _ unexpectedTypes: [String], bodyUnknown: Bool) -> [RecordNote] {
        var notes = entryNotes
        for path in unexpectedTypes { notes.append(.unexpectedType(path)) }
        if bodyUnknown { notes.append(.bodyUnknown) }
        return notes
    }

    /// "first second third" as bytes, built in place: a start line per message, without the
    /// interpolated String it was made from before.
    static func line(_ first: String, _ second: String, _ third: String) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(first.utf8.count + second.utf8.count + third.utf8.count + 2)
        append(first, to: &line)
        line.append(UInt8(ascii: " "))
        append(second, to: &line)
        line.append(UInt8(ascii: " "))
        append(third, to: &line)
        return line
    }

    /// `line(version, String(status), reason)`, the status's digits written in place.
    static func statusLine(_ version: String, _ status: Int, _ reason: String) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(version.utf8.count + decimalLength(status) + reason.utf8.count + 2)
        append(version, to: &line)
        line.append(UInt8(ascii: " "))
        if status < 0 { line.append(UInt8(ascii: "-")) }
        // The digits written from the last, in place.
        let digits = decimalLength(status) - (status < 0 ? 1 : 0)
        line.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var rest = status.magnitude
        var index = line.count - 1
        repeat {
            line[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            index -= 1
        } while rest > 0
        line.append(UInt8(ascii: " "))
        append(reason, to: &line)
        return line
    }

    /// A String's UTF-8 appended in one block when the String is contiguous (native ones are,
    /// small ones included), not byte by byte through its view.
    @inline(__always)
    static func append(_ text: String, to bytes: inout [UInt8]) {
        let appended: Void? = text.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if appended == nil { bytes.append(contentsOf: text.utf8) }
    }

    /// A String's UTF-8 as an array, copied in one block when contiguous.
    @inline(__always)
    static func bytes(of text: String) -> [UInt8] {
        text.utf8.withContiguousStorageIfAvailable { Array($0) } ?? Array(text.utf8)
    }

    /// HAR fields without HTTP/2-3 pseudo-header fields, which are no header fields for estimators.
    /// The fields share the headers' byte arrays.
    static func fields(_ headers: [HARHeader]) -> [HeaderField] {
        var fields: [HeaderField] = []
        fields.reserveCapacity(headers.count)
        for header in headers where !header.isPseudoHeader {
            fields.append(HeaderField(name: header.nameBytes, value: header.valueBytes))
        }
        return fields
    }

    /// The start line as HTTP/1.1 sends it, CRLF included (docs/HAR.md, "Start line").
    static func startLineLength(_ message: HTTPMessage) -> Int {
        switch message.kind {
        case .request:
            return message.startLine.count + 2
        case .response:
            // "HTTP/1.1 ", the status's decimal digits (and sign), " ".
            return 9 + decimalLength(message.status ?? 0) + 1 + message.reason.count + 2
        }
    }

    /// How many characters `String(value)` has.
    static func decimalLength(_ value: Int) -> Int {
        var length = value < 0 ? 2 : 1
        var rest = value.magnitude / 10
        while rest > 0 {
            length += 1
            rest /= 10
        }
        return length
    }

    /// One chunk of `length` bytes, the last-chunk and the final CRLF: the least framing an
    /// HTTP/1.1 sender adds.
    static func oneChunkFraming(_ length: Int) -> Int {
        length == 0 ? 5 : String(length, radix: 16).count + 2 + 2 + 5
    }

    /// The largest size a HAR may give (1 TiB): no real message comes near it, and records
    /// of this size can be summed by the million without overflow. Larger ones are unknown.
    static let maximumSize = 1 << 40
}

extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
