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
            let address = Self.afterLastSlash(remote)
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

    /// The paths a part's fields are named by in reasons and notes, made once.
    private struct PartPaths {
        let sizes, handshake, headersSize, bodySize, header, firstLine, body, bodyText, bodyEncoded, bodyDecoded: String

        init(_ path: String) {
            sizes = "\(path).sizes"
            handshake = "\(path).sizes.handshake"
            headersSize = "\(path).sizes.headers"
            bodySize = "\(path).sizes.body"
            header = "\(path).header"
            firstLine = "\(path).header.firstLine"
            body = "\(path).body"
            bodyText = "\(path).body.text"
            bodyEncoded = "\(path).body.encoded"
            bodyDecoded = "\(path).body.decoded"
        }

        static let request = PartPaths("request")
        static let response = PartPaths("response")
    }

    private func part(_ value: RawCharlesTransaction.Part, _ path: String, response: Bool) throws -> CharlesMessagePart {
        var notes: [String] = []
        var part = CharlesMessagePart()
        let paths = path == "request" ? PartPaths.request : path == "response" ? PartPaths.response : PartPaths(path)
        switch value.sizes {
        case let .object(sizes)?:
            part.handshakeSize = size(sizes.handshake, paths.handshake, &notes)
            part.headersSize = size(sizes.headers, paths.headersSize, &notes)
            part.bodySize = size(sizes.body, paths.bodySize, &notes)
        case nil, .other(.null)?: break
        case .other?: note(paths.sizes, &notes)
        }
        if let header = try object(value.header, paths.header) {
            part.firstLine = try string(header.firstLine, paths.firstLine)
            switch header.headers {
            case nil: break
            case let .success(headers)?: part.headers = headers
            case let .failure(broken)?: throw Broken(reason: broken.reason)
            }
        }
        if let body = try object(value.body, paths.body) {
            if let text = try bytes(body.text, paths.bodyText) {
                part.body = text
                part.bodyIsText = true
            } else if let encoded = try bytes(body.encoded, paths.bodyEncoded) {
                guard let bytes = encoded.withUnsafeBytes({ HARBase64.decode($0) }) else {
                    throw Broken(reason: "\(paths.bodyEncoded) is not valid base64")
                }
                part.body = bytes
            }
            part.bodyDecoded = bool(body.decoded, paths.bodyDecoded, &notes)
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

    /// A string read as bytes (`JSONText`), as `string` reads it.
    func bytes(_ value: JSONText?, _ path: String) throws -> [UInt8]? {
        switch value {
        case nil: return nil
        case let .bytes(bytes)?: return bytes
        case let .other(value)?: return try string(value, path).map { Array($0.utf8) }
        }
    }

    /// What follows the last `/` (all of it without one), as a split on "/" gives it.
    static func afterLastSlash(_ text: String) -> String {
        let utf8 = text.utf8
        // ASCII: bytes are characters, so the byte found is the character a split finds.
        if utf8.allSatisfy({ $0 < 0x80 }) {
            guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return text }
            return String(text[utf8.index(after: slash)...])
        }
        return text.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? text
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
