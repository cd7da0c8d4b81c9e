/// One transaction's value → `CharlesTransaction`, or `Broken` naming the field. The XML reader
/// hands over the same shape with every scalar as text (`textScalars`): an integer or a boolean
/// is then read from its text, so a `.chlsj` and a `.chlsx` of one session give one result.
struct CharlesDecoder {
    struct Broken: Error { let reason: String }

    /// XML: scalars are text.
    let textScalars: Bool

    func transaction(_ raw: RawCharlesTransaction, index: Int) throws -> CharlesTransaction {
        guard let value = raw.members else { throw Broken(reason: "the transaction is \(raw.kindName), not an object") }
        var notes: [String] = []
        let method = try requiredString(value.method, "method")
        let requestValue = try object(value.request, "request") ?? RawCharlesTransaction.Part()
        var transaction = CharlesTransaction(index: index, method: method, request: try part(requestValue, "request", response: false))
        transaction.tunnel = bool(value.tunnel, "tunnel", &notes) ?? false
        if let response = try object(value.response, "response") {
            let part = try self.part(response, "response", response: true)
            // A tunnel's response is kept for its sizes, with or without a status.
            if part.status != nil || transaction.tunnel { transaction.response = part }
        }
        transaction.status = optionalString(value.status, "status", &notes)
        transaction.protocolVersion = optionalString(value.protocolVersion, "protocolVersion", &notes)
        transaction.scheme = try string(value.scheme, "scheme") ?? string(value.schemeAsProtocol, "protocol")
        transaction.host = try string(value.host, "host")
        transaction.actualPort = size(value.actualPort, "actualPort", &notes) ?? size(value.port, "port", &notes)
        transaction.path = try string(value.path, "path")
        transaction.query = try string(value.query, "query")
        switch value.times {
        case let .object(times)?:
            transaction.startTime = optionalString(times.start, "times.start", &notes)
            transaction.responseTime = optionalString(times.responseBegin, "times.responseBegin", &notes)
        case nil, .other(.null)?: break
        case .other?: note("times", &notes)
        }
        transaction.totalSize = size(value.totalSize, "totalSize", &notes)
        if let address = optionalString(value.clientAddress, "clientAddress", &notes) {
            transaction.clientAddress = String(address.drop { $0 == "/" })
        }
        transaction.clientPort = size(value.clientPort, "clientPort", &notes)
        if let remote = optionalString(value.remoteAddress, "remoteAddress", &notes) {
            let address = remote.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? remote
            transaction.remoteAddress = address.isEmpty ? nil : address
        }
        switch value.ssl {
        case let .object(ssl)?:
            transaction.tlsProtocol = optionalString(ssl.tlsProtocol, "ssl.protocol", &notes)
            transaction.cipherSuite = optionalString(ssl.cipherSuite, "ssl.cipherSuite", &notes)
        case nil, .other(.null)?: break
        case .other?: note("ssl", &notes)
        }
        switch value.alpn {
        case let .object(alpn)?: transaction.alpn = optionalString(alpn.alpnProtocol, "alpn.protocol", &notes)
        case let .other(.string(text))?: transaction.alpn = text
        case nil, .other(.null)?: break
        case .other?: note("alpn", &notes)
        }
        transaction.unexpectedTypes = notes
        return transaction
    }

    private func part(_ value: RawCharlesTransaction.Part, _ path: String, response: Bool) throws -> CharlesMessagePart {
        var notes: [String] = []
        var part = CharlesMessagePart()
        switch value.sizes {
        case let .object(sizes)?:
            part.handshakeSize = size(sizes.handshake, "\(path).sizes.handshake", &notes)
            part.headersSize = size(sizes.headers, "\(path).sizes.headers", &notes)
            part.bodySize = size(sizes.body, "\(path).sizes.body", &notes)
        case nil, .other(.null)?: break
        case .other?: note("\(path).sizes", &notes)
        }
        if let header = try object(value.header, "\(path).header") {
            part.firstLine = try string(header.firstLine, "\(path).header.firstLine")
            switch header.headers {
            case nil: break
            case let .success(headers)?: part.headers = headers
            case let .failure(broken)?: throw Broken(reason: broken.reason)
            }
        }
        if let body = try object(value.body, "\(path).body") {
            if let text = try string(body.text, "\(path).body.text") {
                part.body = Array(text.utf8)
                part.bodyIsText = true
            } else if let encoded = try string(body.encoded, "\(path).body.encoded") {
                guard let bytes = HARBase64.decode(encoded) else { throw Broken(reason: "\(path).body.encoded is not valid base64") }
                part.body = bytes
            }
            part.bodyDecoded = bool(body.decoded, "\(path).body.decoded", &notes)
        }
        if response {
            if let statusValue = value.status, !statusValue.isNull {
                guard let status = integer(statusValue) else {
                    throw Broken(reason: "response.status is \(statusValue.kindName) (\(statusValue)), not an integer")
                }
                part.status = status
            } else if let line = part.firstLine {
                // `HTTP/1.1 200 OK`: the second word.
                let words = line.split(separator: " ", maxSplits: 2)
                if words.count >= 2, let status = Int(words[1]) { part.status = status }
            }
        }
        part.unexpectedTypes = notes
        return part
    }

    // MARK: Fields

    func integer(_ value: JSONValue) -> Int? {
        switch value {
        case let .number(number): return number.intValue
        case let .string(text) where textScalars: return JSONNumber(raw: text).intValue.flatMap { Int(text) == $0 ? $0 : nil }
        default: return nil
        }
    }

    /// A size (or port): nil when missing, null, negative or not an integer; a value of
    /// another type than a number is noted too.
    func size(_ value: JSONValue?, _ path: String, _ notes: inout [String]) -> Int? {
        guard let value, !value.isNull else { return nil }
        if let size = integer(value) { return size >= 0 ? size : nil }
        if case .number = value { return nil }
        if textScalars, case let .string(text) = value, text.isEmpty || text == "-1" { return nil }
        note(path, &notes)
        return nil
    }

    func bool(_ value: JSONValue?, _ path: String, _ notes: inout [String]) -> Bool? {
        switch value {
        case nil, .null?: return nil
        case let .bool(flag)?: return flag
        case .string("true")? where textScalars: return true
        case .string("false")? where textScalars: return false
        case _?:
            note(path, &notes)
            return nil
        }
    }

    func object<Members>(_ slot: RawCharlesTransaction.Slot<Members>?, _ path: String) throws -> Members? {
        switch slot {
        case nil, .other(.null)?: return nil
        case let .other(value)?: throw Broken(reason: "\(path) is \(value.kindName), not an object")
        case let .object(members)?: return members
        }
    }

    func string(_ value: JSONValue?, _ path: String) throws -> String? {
        do {
            return try HAREntryDecoder.string(value, path)
        } catch let broken as HAREntryDecoder.Broken {
            throw Broken(reason: broken.reason)
        }
    }

    func requiredString(_ value: JSONValue?, _ path: String) throws -> String {
        guard let text = try string(value, path) else { throw Broken(reason: "\(path) is missing") }
        return text
    }

    func optionalString(_ value: JSONValue?, _ path: String, _ notes: inout [String]) -> String? {
        HAREntryDecoder.optionalString(value, path, &notes)
    }

    func note(_ path: String, _ notes: inout [String]) {
        HAREntryDecoder.note(path, &notes)
    }
}

extension JSONValue {
    var isObject: Bool {
        if case .object = self { return true }
        return false
    }
}
