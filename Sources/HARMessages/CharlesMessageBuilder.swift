import CaptureIO
import MessageModel
import Records

/// Turns Charles transactions into messages, one request and at most one response each, under
/// HAR's rules where Charles tells the same things (docs/CHARLES.md). Tunnels (`tunnel: true`)
/// are connections, not messages: the caller reports them and does not build them.
public struct CharlesMessageBuilder: Sendable {
    public init() {}

    public func messages(for transaction: CharlesTransaction) -> (request: HARMessage, response: HARMessage?) {
        let url = HARURL(Self.url(transaction))
        let started = transaction.startTime.flatMap(ISO8601Time.parse)
        let answered = transaction.responseTime.flatMap(ISO8601Time.parse) ?? started
        let transport: Transport? =
            switch transaction.scheme?.lowercased() {
            case "https"?: .tls
            case "http"?: .tcp
            default: nil
            }
        let client = Self.endpoint(transaction.clientAddress, transaction.clientPort)
        let server = Self.endpoint(transaction.remoteAddress, transaction.actualPort)
        // HAR's source stands in where the shared types want one; the record carries `.charles`.
        let harSource = HAREntrySource(
            entry: transaction.index, rule: .reportedSizes, connection: nil, time: started?.nanoseconds, server: server)
        var entryNotes: [RecordNote] = []
        if started?.clamped == true { entryNotes.append(.timeClamped) }
        entryNotes += transaction.unexpectedTypes.map(RecordNote.unexpectedType)

        let facts =
            transaction.isHTTP2
            ? ProtocolFacts(.h2, startLineInHeaderBlock: true) : ProtocolFacts(.http1)
        let version = transaction.isHTTP2 ? "HTTP/2" : (transaction.protocolVersion ?? "HTTP/1.1")

        // Request.
        let part = transaction.request
        var request = HTTPMessage(kind: .request, index: transaction.index)
        request.method = transaction.method
        request.target = url.target
        request.version = version
        request.fields = HARMessageBuilder.fields(part.headers)
        request.protocolFacts = facts
        request.startLine = Array(
            (part.firstLine ?? "\(transaction.method) \(url.requestLineTarget(method: transaction.method)) \(version)").utf8)
        request.complete = true
        if case .some = transaction.response { request.pair = transaction.index } else { request.anomalies.insert(.unpaired) }
        var requestNotes = entryNotes + part.unexpectedTypes.map(RecordNote.unexpectedType)
        var requestBody: [UInt8]?
        var requestCodings: [String]?
        if let body = part.body {
            if part.bodyStillCoded || request.contentCodings.isEmpty {
                requestBody = body
            } else {
                // Charles removed the coding: the body the app passed (coded) is not held.
                requestCodings = []
            }
        } else {
            let lengths = request.values(of: "content-length").map { String(httpBytes: $0).trimmingSpaces }
            let announced =
                !request.values(of: "transfer-encoding").isEmpty || lengths.contains { $0 != "0" }
                || (part.bodySize ?? 0) > 0
            requestBody = announced ? nil : []
        }
        if requestBody == nil { requestNotes.append(.bodyUnknown) }
        let requestSource = CharlesTransactionSource(
            transaction: transaction.index, time: started?.nanoseconds, client: client, server: server,
            transport: transport)
        let requestMessage = finish(
            request, part: part, requestMethod: nil, body: requestBody, codings: requestCodings,
            harSource: harSource, source: requestSource, notes: requestNotes)

        guard let answer = transaction.response, let status = answer.status else { return (requestMessage, nil) }
        var response = HTTPMessage(kind: .response, index: transaction.index)
        response.status = status
        response.protocolFacts = facts
        response.version = version
        response.fields = HARMessageBuilder.fields(answer.headers)
        if let line = answer.firstLine {
            let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            if !transaction.isHTTP2, let first = words.first, !first.isEmpty { response.version = String(first) }
            response.reason = words.count > 2 ? Array(words[2].utf8) : []
            response.startLine = Array(line.utf8)
        } else {
            response.startLine = Array("\(response.version) \(status)".utf8)
        }
        response.pair = transaction.index
        response.request = RequestSummary(
            index: transaction.index, method: transaction.method, target: request.target, host: request.requestHost)
        response.complete = transaction.status.map { $0.uppercased() == "COMPLETE" } ?? true
        let framing = response.bodyFraming(requestMethod: transaction.method)
        let bodyless = framing == .none
        var responseNotes = entryNotes + answer.unexpectedTypes.map(RecordNote.unexpectedType)
        let responseBody: [UInt8]? = answer.body ?? (bodyless || answer.bodySize == 0 ? [] : nil)
        let responseCodings = answer.body != nil && answer.bodyStillCoded ? response.contentCodings : []
        if responseBody == nil { responseNotes.append(.bodyUnknown) }
        let responseSource = CharlesTransactionSource(
            transaction: transaction.index, time: answered?.nanoseconds, client: client, server: server,
            transport: transport)
        return (
            requestMessage,
            finish(
                response, part: answer, requestMethod: transaction.method, framing: framing, body: responseBody,
                codings: responseCodings, harSource: harSource, source: responseSource, notes: responseNotes)
        )
    }

    /// Sizes (docs/CHARLES.md, "Wire size"): `sizes.headers` is the head with its first line and
    /// blank line, `sizes.body` the body as sent; a size contradicting the recorded message is rebuilt.
    private func finish(
        _ message: consuming HTTPMessage, part: CharlesMessagePart, requestMethod: String?, framing: BodyFraming? = nil,
        body: [UInt8]?, codings: [String]?,
        harSource: HAREntrySource, source: CharlesTransactionSource, notes: [RecordNote]
    ) -> HARMessage {
        var notes = notes
        let limit = HARMessageBuilder.maximumSize
        if (part.headersSize ?? 0) > limit || (part.bodySize ?? 0) > limit { notes.append(.sizeOutOfRange) }
        let headersSize = part.headersSize.flatMap { $0 <= limit ? $0 : nil }
        var bodySize = part.bodySize.flatMap { $0 <= limit ? $0 : nil }
        message.framing = framing ?? message.bodyFraming(requestMethod: requestMethod)
        let http2 = message.protocolFacts.wireProtocol == .h2
        var rebuilt = false

        var line: Int?
        var headers: Int?
        let fieldBlock = message.fields.reduce(2) { $0 + $1.name.count + $1.value.count + 4 }
        if http2 {
            // No start line on the wire; a 0 beside listed fields says nothing true.
            line = 0
            if let headersSize, headersSize > 0 || message.fields.isEmpty { headers = headersSize }
        } else {
            let lineLength = message.startLine.count + 2
            line = lineLength
            if let headersSize {
                if (headersSize == 0 && !message.fields.isEmpty) || headersSize < lineLength {
                    headers = fieldBlock
                    rebuilt = true
                    notes.append(.sizeRebuilt("headers"))
                } else {
                    headers = headersSize - lineLength
                }
            } else {
                line = nil
            }
        }
        // The recorded body is the wire body without transfer coding when no content coding
        // came off it: then the wire body is at least that long.
        let stillCoded = (codings ?? message.contentCodings) == message.contentCodings
        if let recorded = body, stillCoded, message.framing != .none, let size = bodySize, size < recorded.count {
            let chunked = message.framing == .chunked
            bodySize = recorded.count + (chunked && !http2 ? HARMessageBuilder.oneChunkFraming(recorded.count) : 0)
            rebuilt = true
            notes.append(.sizeRebuilt("body"))
        }
        var wire = WireSize(line: line, headers: headers, body: bodySize, source: .unknown)
        if let line, let headers, let bodySize {
            wire.total = line + headers + bodySize
            wire.source = rebuilt ? .charlesReconstructed : .charles
        }
        message.bodyLength = bodySize ?? 0
        return HARMessage(
            message: message, wire: wire, source: harSource, body: body, notes: notes,
            recordSource: .charles(source), codingsStillOn: codings ?? message.contentCodings)
    }

    /// The URL Charles's fields spell: `scheme://host[:port]path[?query]`, the port left out when
    /// it is the scheme's own; the first line's target when `host` is missing.
    static func url(_ transaction: CharlesTransaction) -> String {
        let scheme = transaction.scheme?.lowercased() ?? "http"
        guard let host = transaction.host, !host.isEmpty else {
            let words = transaction.request.firstLine?.split(separator: " ") ?? []
            return words.count >= 2 ? String(words[1]) : "/"
        }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        var url = "\(scheme)://\(bracketed)"
        if let port = transaction.actualPort, port != (scheme == "https" ? 443 : 80) { url += ":\(port)" }
        let path = transaction.path ?? ""
        url += path.isEmpty ? "/" : path
        if let query = transaction.query, !query.isEmpty { url += "?\(query)" }
        return url
    }

    /// `address:port`, IPv6 in brackets; empty without an address.
    public static func endpoint(_ address: String?, _ port: Int?) -> String {
        guard let address, !address.isEmpty else { return "" }
        let host = HARURL.containsColon(address) && !address.hasPrefix("[") ? "[\(address)]" : address
        return port.map { "\(host):\($0)" } ?? host
    }
}
