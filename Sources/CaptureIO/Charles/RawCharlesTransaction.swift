/// One Charles transaction as `CharlesDecoder` reads it: the members its records use, each the
/// first of its name. A `.chlsj` fills it straight from the JSON tokens (`read`), skipping what
/// no figure needs unread, with header lists made `HARHeader`s at once, as `RawHAREntry` does
/// for HAR; a `.chlsx` fills it from the value the XML reader builds (`init(value:)`), so both
/// go through one decoder.
struct RawCharlesTransaction {
    typealias Slot = RawHAREntry.Slot

    struct Sizes {
        var handshake: JSONValue?
        var headers: JSONValue?
        var body: JSONValue?
    }

    struct Header {
        var firstLine: JSONValue?
        var headers: RawHAREntry.Headers?
    }

    struct Body {
        var text: JSONText?
        var encoded: JSONText?
        var decoded: JSONValue?
    }

    /// `request` or `response`. A class, as `Members`: a struct this size was copied member by
    /// member each time it was wrapped (`Slot`), unwrapped or returned.
    final class Part {
        @exclusivity(unchecked) var sizes: Slot<Sizes>?
        @exclusivity(unchecked) var header: Slot<Header>?
        @exclusivity(unchecked) var body: Slot<Body>?
        @exclusivity(unchecked) var status: JSONValue?

        init(sizes: Slot<Sizes>? = nil, header: Slot<Header>? = nil, body: Slot<Body>? = nil, status: JSONValue? = nil) {
            self.sizes = sizes
            self.header = header
            self.body = body
            self.status = status
        }
    }

    struct Times {
        var start: JSONValue?
        var responseBegin: JSONValue?
    }

    struct SSL {
        var tlsProtocol: JSONValue?
        var cipherSuite: JSONValue?
    }

    /// `alpn`: an object's `protocol`.
    struct ALPN {
        var alpnProtocol: JSONValue?
    }

    final class Members {
        @exclusivity(unchecked) var status: JSONValue?
        @exclusivity(unchecked) var method: JSONValue?
        @exclusivity(unchecked) var protocolVersion: JSONValue?
        @exclusivity(unchecked) var scheme: JSONValue?
        @exclusivity(unchecked) var schemeAsProtocol: JSONValue?
        @exclusivity(unchecked) var host: JSONValue?
        @exclusivity(unchecked) var actualPort: JSONValue?
        @exclusivity(unchecked) var port: JSONValue?
        @exclusivity(unchecked) var path: JSONValue?
        @exclusivity(unchecked) var query: JSONValue?
        @exclusivity(unchecked) var tunnel: JSONValue?
        @exclusivity(unchecked) var times: Slot<Times>?
        @exclusivity(unchecked) var totalSize: JSONValue?
        @exclusivity(unchecked) var clientAddress: JSONValue?
        @exclusivity(unchecked) var clientPort: JSONValue?
        @exclusivity(unchecked) var remoteAddress: JSONValue?
        @exclusivity(unchecked) var ssl: Slot<SSL>?
        @exclusivity(unchecked) var alpn: Slot<ALPN>?
        @exclusivity(unchecked) var request: Slot<Part>?
        @exclusivity(unchecked) var response: Slot<Part>?
    }

    /// Nil when the transaction is not an object; `kindName` says what it is then.
    var members: Members?
    var kindName: String

    // MARK: From JSON tokens

    static func read(_ stream: JSONStreamReader, startingWith token: JSONToken) throws -> RawCharlesTransaction {
        guard token == .beginObject else {
            try stream.skipValue(startingWith: token)
            return RawCharlesTransaction(members: nil, kindName: JSONStreamReader.kindName(token))
        }
        let members = Members()
        while try stream.nextMemberKey() {
            if stream.keyIs("request") {
                if members.request == nil {
                    members.request = try RawHAREntry.slot(stream) { try readPart($0, response: false) }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("response") {
                if members.response == nil {
                    members.response = try RawHAREntry.slot(stream) { try readPart($0, response: true) }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("method") {
                try RawHAREntry.first(&members.method, stream)
            } else if stream.keyIs("status") {
                try RawHAREntry.first(&members.status, stream)
            } else if stream.keyIs("protocolVersion") {
                try RawHAREntry.first(&members.protocolVersion, stream)
            } else if stream.keyIs("scheme") {
                try RawHAREntry.first(&members.scheme, stream)
            } else if stream.keyIs("protocol") {
                try RawHAREntry.first(&members.schemeAsProtocol, stream)
            } else if stream.keyIs("host") {
                try RawHAREntry.first(&members.host, stream)
            } else if stream.keyIs("actualPort") {
                try RawHAREntry.first(&members.actualPort, stream)
            } else if stream.keyIs("port") {
                try RawHAREntry.first(&members.port, stream)
            } else if stream.keyIs("path") {
                try RawHAREntry.first(&members.path, stream)
            } else if stream.keyIs("query") {
                try RawHAREntry.first(&members.query, stream)
            } else if stream.keyIs("tunnel") {
                try RawHAREntry.first(&members.tunnel, stream)
            } else if stream.keyIs("totalSize") {
                try RawHAREntry.first(&members.totalSize, stream)
            } else if stream.keyIs("clientAddress") {
                try RawHAREntry.first(&members.clientAddress, stream)
            } else if stream.keyIs("clientPort") {
                try RawHAREntry.first(&members.clientPort, stream)
            } else if stream.keyIs("remoteAddress") {
                try RawHAREntry.first(&members.remoteAddress, stream)
            } else if stream.keyIs("times") {
                if members.times == nil {
                    members.times = try RawHAREntry.slot(stream) { stream in
                        var times = Times()
                        while try stream.nextMemberKey() {
                            if stream.keyIs("start") {
                                try RawHAREntry.first(&times.start, stream)
                            } else if stream.keyIs("responseBegin") {
                                try RawHAREntry.first(&times.responseBegin, stream)
                            } else {
                                try stream.skipValue()
                            }
                        }
                        return times
                    }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("ssl") {
                if members.ssl == nil {
                    members.ssl = try RawHAREntry.slot(stream) { stream in
                        var ssl = SSL()
                        while try stream.nextMemberKey() {
                            if stream.keyIs("protocol") {
                                try RawHAREntry.first(&ssl.tlsProtocol, stream)
                            } else if stream.keyIs("cipherSuite") {
                                try RawHAREntry.first(&ssl.cipherSuite, stream)
                            } else {
                                try stream.skipValue()
                            }
                        }
                        return ssl
                    }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("alpn") {
                if members.alpn == nil {
                    members.alpn = try RawHAREntry.slot(stream) { stream in
                        var alpn = ALPN()
                        while try stream.nextMemberKey() {
                            if stream.keyIs("protocol") { try RawHAREntry.first(&alpn.alpnProtocol, stream) } else { try stream.skipValue() }
                        }
                        return alpn
                    }
                } else {
                    try stream.skipValue()
                }
            } else {
                try stream.skipValue()
            }
        }
        return RawCharlesTransaction(members: members, kindName: "an object")
    }

    static func readPart(_ stream: JSONStreamReader, response: Bool) throws -> Part {
        let part = Part()
        let headersPath: StaticString = response ? "response.header.headers" : "request.header.headers"
        while try stream.nextMemberKey() {
            if stream.keyIs("header") {
                if part.header == nil {
                    part.header = try RawHAREntry.slot(stream) { stream in
                        var header = Header()
                        while try stream.nextMemberKey() {
                            if stream.keyIs("headers") {
                                if header.headers == nil {
                                    header.headers = try RawHAREntry.readHeaders(stream, headersPath)
                                } else {
                                    try stream.skipValue()
                                }
                            } else if stream.keyIs("firstLine") {
                                try RawHAREntry.first(&header.firstLine, stream)
                            } else {
                                try stream.skipValue()
                            }
                        }
                        return header
                    }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("body") {
                if part.body == nil {
                    part.body = try RawHAREntry.slot(stream) { stream in
                        var body = Body()
                        while try stream.nextMemberKey() {
                            if stream.keyIs("text") {
                                try RawHAREntry.first(&body.text, stream)
                            } else if stream.keyIs("encoded") {
                                try RawHAREntry.first(&body.encoded, stream)
                            } else if stream.keyIs("decoded") {
                                try RawHAREntry.first(&body.decoded, stream)
                            } else {
                                try stream.skipValue()
                            }
                        }
                        return body
                    }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("sizes") {
                if part.sizes == nil {
                    part.sizes = try RawHAREntry.slot(stream) { stream in
                        var sizes = Sizes()
                        while try stream.nextMemberKey() {
                            if stream.keyIs("handshake") {
                                try RawHAREntry.first(&sizes.handshake, stream)
                            } else if stream.keyIs("headers") {
                                try RawHAREntry.first(&sizes.headers, stream)
                            } else if stream.keyIs("body") {
                                try RawHAREntry.first(&sizes.body, stream)
                            } else {
                                try stream.skipValue()
                            }
                        }
                        return sizes
                    }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("status") {
                if part.status == nil {
                    // An object or array status is written out whole in the reason.
                    let token = try stream.token()
                    switch token {
                    case .beginObject, .beginArray: part.status = try stream.readValue(startingWith: token)
                    default: part.status = try stream.scalarOrKind(startingWith: token)
                    }
                } else {
                    try stream.skipValue()
                }
            } else {
                try stream.skipValue()
            }
        }
        return part
    }

    // MARK: From a value (the XML reader's)

    init(members: Members?, kindName: String) {
        self.members = members
        self.kindName = kindName
    }

    init(value: JSONValue) {
        kindName = value.kindName
        guard value.isObject else {
            members = nil
            return
        }
        let members = Members()
        members.status = value["status"]
        members.method = value["method"]
        members.protocolVersion = value["protocolVersion"]
        members.scheme = value["scheme"]
        members.schemeAsProtocol = value["protocol"]
        members.host = value["host"]
        members.actualPort = value["actualPort"]
        members.port = value["port"]
        members.path = value["path"]
        members.query = value["query"]
        members.tunnel = value["tunnel"]
        members.totalSize = value["totalSize"]
        members.clientAddress = value["clientAddress"]
        members.clientPort = value["clientPort"]
        members.remoteAddress = value["remoteAddress"]
        members.times = Self.slot(value["times"]) { Times(start: $0["start"], responseBegin: $0["responseBegin"]) }
        members.ssl = Self.slot(value["ssl"]) { SSL(tlsProtocol: $0["protocol"], cipherSuite: $0["cipherSuite"]) }
        members.alpn = Self.slot(value["alpn"]) { ALPN(alpnProtocol: $0["protocol"]) }
        members.request = Self.slot(value["request"]) { Self.part($0, "request") }
        members.response = Self.slot(value["response"]) { Self.part($0, "response") }
        self.members = members
    }

    private static func slot<Members>(_ value: JSONValue?, _ members: (JSONValue) -> Members) -> Slot<Members>? {
        guard let value else { return nil }
        return value.isObject ? .object(members(value)) : .other(value)
    }

    private static func part(_ value: JSONValue, _ path: String) -> Part {
        Part(
            sizes: slot(value["sizes"]) { Sizes(handshake: $0["handshake"], headers: $0["headers"], body: $0["body"]) },
            header: slot(value["header"]) { header in
                Header(
                    firstLine: header["firstLine"],
                    headers: header["headers"].map { list in
                        Result(catching: { try HAREntryDecoder.headers(list, "\(path).header.headers") })
                            .mapError { $0 as? HAREntryDecoder.Broken ?? .init(reason: "\($0)") }
                    })
            },
            body: slot(value["body"]) {
                Body(text: $0["text"].map(JSONText.init), encoded: $0["encoded"].map(JSONText.init), decoded: $0["decoded"])
            },
            status: value["status"])
    }
}
