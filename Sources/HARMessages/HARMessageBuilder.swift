import CaptureIO
import HTTP1
import PacketLayers

/// How an exporter's sizes are read (docs/HAR.md, "Per exporter").
public enum ExporterRule: Sendable, Equatable {
    /// `headersSize + bodySize`, else Chrome's `_transferSize`.
    case reportedSizes
    /// The exporter's `headersSize` is known to be wrong (mitmproxy: the length of a Python
    /// repr): the head is serialized from the listed fields as HTTP/1.1.
    case reconstructedHead

    public init(creatorName: String?) {
        self = creatorName?.lowercased().contains("mitmproxy") == true ? .reconstructedHead : .reportedSizes
    }
}

/// One HAR message made ready for measuring: the HTTP view the estimators read, and what the
/// HAR tells of its size, origin and body.
public struct HARMessage: Sendable {
    public var message: HTTPMessage
    public var wire: WireSize
    public var origin: MessageOrigin
    /// Request: the body as the app passed it (content coding still on). Response: the decoded
    /// body (HAR text is decoded). Nil when the HAR does not tell.
    public var body: [UInt8]?
    /// `from-cache`, `websocket-messages:N`, `body-from-params`, `body-unknown`, `time-clamped`,
    /// `size-out-of-range`, `unexpected-type:PATH`.
    public var notes: [String]

    /// Content codings still applied to `body`: a request's own; none on a response, whose
    /// HAR text is decoded.
    public var bodyCodings: [String] { message.kind == .request ? message.contentCodings : [] }
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
        let origin = MessageOrigin(connection: entry.connection ?? "",
                                   time: started?.nanoseconds,
                                   client: "", server: url.server(address: entry.serverIPAddress))
        var entryNotes: [String] = []
        if entry.fromCache { entryNotes.append("from-cache") }
        if entry.webSocketMessageCount > 0 { entryNotes.append("websocket-messages:\(entry.webSocketMessageCount)") }
        if started?.clamped == true { entryNotes.append("time-clamped") }

        let request = self.request(entry, url: url, origin: origin, notes: entryNotes)
        return (request, entry.response.map { response($0, entry: entry, request: request.message, origin: origin, notes: entryNotes) })
    }

    private func request(_ entry: HAREntry, url: HARURL, origin: MessageOrigin, notes entryNotes: [String]) -> HARMessage {
        let har = entry.request
        var message = HTTPMessage(kind: .request, connection: 0, index: entry.index, time: 0, streamOffset: 0,
                                  client: Self.noEndpoint, server: Self.noEndpoint)
        message.method = har.method
        message.target = url.target
        message.version = har.httpVersion
        message.fields = Self.fields(har.headers)
        message.startLine = Array("\(har.method) \(url.requestLineTarget(method: har.method)) HTTP/1.1".utf8)
        message.complete = true
        if entry.response != nil { message.pair = entry.index } else { message.anomalies.insert(.unpaired) }

        var notes = entryNotes + har.notes
        var body: [UInt8]?
        if let postData = har.postData {
            if let text = postData.text {
                body = text
            } else if !postData.params.isEmpty,
                      postData.mimeType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
                body = FormURLEncoding.body(postData.params)
                notes.append("body-from-params")
            }
        } else {
            let lengths = message.values(of: "content-length").map { String(httpBytes: $0).trimmingSpaces }
            let announced = !message.values(of: "transfer-encoding").isEmpty
                || lengths.contains { $0 != "0" } || (har.bodySize ?? 0) > 0
            body = announced ? nil : []
        }
        if body == nil { notes.append("body-unknown") }
        return finish(message, headersSize: har.headersSize, bodySize: har.bodySize, transferSize: nil,
                      requestMethod: nil, body: body, origin: origin, notes: notes)
    }

    private func response(_ har: HARResponse, entry: HAREntry, request: HTTPMessage, origin: MessageOrigin,
                          notes: [String]) -> HARMessage {
        var message = HTTPMessage(kind: .response, connection: 0, index: entry.index, time: 0, streamOffset: 0,
                                  client: Self.noEndpoint, server: Self.noEndpoint)
        message.status = har.status
        message.reason = Array(har.statusText.utf8)
        message.version = har.httpVersion
        message.fields = Self.fields(har.headers)
        // METERING §3: the documented estimator's status line for a HAR record.
        message.startLine = Array("\(har.httpVersion) \(har.status) \(har.statusText)".utf8)
        message.pair = entry.index
        message.request = RequestSummary(index: entry.index, method: request.method ?? "", target: request.target,
                                         host: request.requestHost)
        // Chrome's `_error` on a response with a status: the transfer was cut.
        message.complete = har.error?.isEmpty ?? true

        let bodyless = request.method == "HEAD" || (100..<200).contains(har.status) || har.status == 204 || har.status == 304
        let body: [UInt8]? = har.content.text ?? (bodyless || har.bodySize == 0 ? [] : nil)
        return finish(message, headersSize: har.headersSize, bodySize: har.bodySize, transferSize: har.transferSize,
                      requestMethod: request.method, body: body, origin: origin,
                      notes: notes + har.notes + (body == nil ? ["body-unknown"] : []))
    }

    /// Sizes and framing per the exporter rule (docs/HAR.md, "Wire size").
    private func finish(_ message: HTTPMessage, headersSize: Int?, bodySize: Int?, transferSize: Int?,
                        requestMethod: String?, body: [UInt8]?, origin: MessageOrigin, notes: [String]) -> HARMessage {
        var message = message
        var notes = notes
        // Out-of-range sizes are unknown, so every sum below stays far inside Int.
        let used = rule == .reconstructedHead ? [bodySize] : [headersSize, bodySize, transferSize]
        let outOfRange = used.contains { ($0 ?? 0) > Self.maximumSize }
        if outOfRange { notes.append("size-out-of-range") }
        let headersSize = headersSize.flatMap { $0 <= Self.maximumSize ? $0 : nil }
        let bodySize = bodySize.flatMap { $0 <= Self.maximumSize ? $0 : nil }
        let transferSize = transferSize.flatMap { $0 <= Self.maximumSize ? $0 : nil }
        let chunked = Self.isChunked(message)
        let lineLength = Self.startLineLength(message)
        var wire: WireSize
        switch rule {
        case .reconstructedHead:
            let headers = message.fields.reduce(2) { $0 + $1.name.count + $1.value.count + 4 }
            let wireBody = bodySize.map { chunked ? $0 + Self.oneChunkFraming($0) : $0 }
            let total = wireBody.map { lineLength + headers + $0 }
            wire = WireSize(line: lineLength, headers: headers, body: wireBody, total: total,
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
        message.wireLine = wire.line ?? 0
        message.wireHeaders = wire.headers ?? 0
        message.wireBody = wire.body ?? 0
        message.bodyLength = bodySize ?? 0
        message.framing = message.bodyFraming(requestMethod: requestMethod)
        return HARMessage(message: message, wire: wire, origin: origin, body: body, notes: notes)
    }

    /// HAR fields without HTTP/2-3 pseudo-header fields, which are no header fields for estimators.
    static func fields(_ headers: [HARHeader]) -> [HeaderField] {
        headers.withoutPseudoHeaders.map { HeaderField($0.name, $0.value) }
    }

    /// The start line as HTTP/1.1 sends it, CRLF included (docs/HAR.md, "Start line").
    static func startLineLength(_ message: HTTPMessage) -> Int {
        switch message.kind {
        case .request:
            return message.startLine.count + 2
        case .response:
            return "HTTP/1.1 \(message.status ?? 0) ".utf8.count + message.reason.count + 2
        }
    }

    /// True when the last transfer coding listed is `chunked`.
    static func isChunked(_ message: HTTPMessage) -> Bool {
        guard let codings = message.joinedValue(of: "transfer-encoding", separator: ",") else { return false }
        return codings.split(separator: ",").last.map { String($0).trimmingSpaces.lowercased() == "chunked" } ?? false
    }

    /// One chunk of `length` bytes, the last-chunk and the final CRLF: the least framing an
    /// HTTP/1.1 sender adds.
    static func oneChunkFraming(_ length: Int) -> Int {
        length == 0 ? 5 : String(length, radix: 16).count + 2 + 2 + 5
    }

    /// The largest size a HAR may give (1 TiB): no real message comes near it, and records
    /// of this size can be summed by the million without overflow. Larger ones are unknown.
    static let maximumSize = 1 << 40

    private static let noEndpoint = TransportEndpoint(address: IPAddress(ipv4: 0), port: 0)
}

extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
