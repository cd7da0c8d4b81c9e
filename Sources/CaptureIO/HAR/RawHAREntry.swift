/// One HAR entry as read straight from the JSON tokens: the members `HAREntryDecoder` uses, each
/// the first of its name (as a JSON object lookup gives it), and nothing else. Everything no
/// figure needs (`timings`, Chrome's `_initiator` stacks, `queryString`, ...) is skipped unread,
/// arrays of which only the length counts (`cookies`, `_webSocketMessages`) are counted, keys are
/// compared as bytes, and header lists become `HARHeader`s at once: no value tree is built.
/// A header list's first bad element is kept as its `Broken` reason, to be thrown where the
/// decoder reaches the list, so the reasons are those of a whole-value decoder.
/// Its parts are classes: as structs of optional values they were copied, member by member,
/// each time one was wrapped (`Slot`), unwrapped or returned.
struct RawHAREntry {
    /// A member that should be an object: its members, or what it held instead (null, or
    /// another kind as `JSONStreamReader.scalarOrKind` gives it).
    enum Slot<Members> {
        case object(Members)
        case other(JSONValue)
    }

    /// `postData.params[]`: the params, or the path of the note that drops them all.
    enum Params {
        case list([HARHeader])
        case note(String)
    }

    typealias Headers = Result<[HARHeader], HAREntryDecoder.Broken>

    final class PostData {
        @exclusivity(unchecked) var mimeType: JSONValue?
        @exclusivity(unchecked) var text: JSONText?
        @exclusivity(unchecked) var encoding: JSONValue?
        @exclusivity(unchecked) var params: Params?
    }

    final class Request {
        @exclusivity(unchecked) var method: JSONValue?
        @exclusivity(unchecked) var url: JSONValue?
        @exclusivity(unchecked) var httpVersion: JSONValue?
        @exclusivity(unchecked) var headers: Headers?
        @exclusivity(unchecked) var cookies: JSONCount?
        @exclusivity(unchecked) var headersSize: JSONValue?
        @exclusivity(unchecked) var bodySize: JSONValue?
        @exclusivity(unchecked) var postData: Slot<PostData>?
    }

    final class Content {
        @exclusivity(unchecked) var size: JSONValue?
        @exclusivity(unchecked) var mimeType: JSONValue?
        @exclusivity(unchecked) var text: JSONText?
        @exclusivity(unchecked) var encoding: JSONValue?
        @exclusivity(unchecked) var compression: JSONValue?
    }

    final class Response {
        @exclusivity(unchecked) var status: JSONValue?
        @exclusivity(unchecked) var statusText: JSONValue?
        @exclusivity(unchecked) var httpVersion: JSONValue?
        @exclusivity(unchecked) var headers: Headers?
        @exclusivity(unchecked) var cookies: JSONCount?
        @exclusivity(unchecked) var headersSize: JSONValue?
        @exclusivity(unchecked) var bodySize: JSONValue?
        @exclusivity(unchecked) var transferSize: JSONValue?
        @exclusivity(unchecked) var error: JSONValue?
        @exclusivity(unchecked) var content: Slot<Content>?
    }

    final class Members {
        @exclusivity(unchecked) var startedDateTime: JSONValue?
        @exclusivity(unchecked) var connection: JSONValue?
        @exclusivity(unchecked) var serverIPAddress: JSONValue?
        @exclusivity(unchecked) var fromCache: JSONValue?
        @exclusivity(unchecked) var webSocketMessages: JSONCount?
        /// `cache`: whether its (first) `beforeRequest` or `afterRequest` holds anything (is
        /// neither null nor `{}`); nil without `cache`.
        @exclusivity(unchecked) var cacheHit: Bool?
        @exclusivity(unchecked) var request: Slot<Request>?
        @exclusivity(unchecked) var response: Slot<Response>?
    }

    /// Nil when the entry is not an object; `kindName` then says what it is.
    var members: Members?
    var kindName: String


    /// Reads the entry whose first token the caller took.
    static func read(_ stream: JSONStreamReader, startingWith token: JSONToken) throws -> RawHAREntry {
        guard token == .beginObject else {
            try stream.skipValue(startingWith: token)
            return RawHAREntry(members: nil, kindName: JSONStreamReader.kindName(token))
        }
        let members = Members()
        while try stream.nextMemberKey() {
            if stream.keyIs("request") {
                if members.request == nil { members.request = try slot(stream, readRequest) } else { try stream.skipValue() }
            } else if stream.keyIs("response") {
                if members.response == nil { members.response = try slot(stream, readResponse) } else { try stream.skipValue() }
            } else if stream.keyIs("startedDateTime") {
                try first(&members.startedDateTime, stream)
            } else if stream.keyIs("connection") {
                try first(&members.connection, stream)
            } else if stream.keyIs("serverIPAddress") {
                try first(&members.serverIPAddress, stream)
            } else if stream.keyIs("_fromCache") {
                try first(&members.fromCache, stream)
            } else if stream.keyIs("_webSocketMessages") {
                if members.webSocketMessages == nil { members.webSocketMessages = try stream.countOrKind() } else { try stream.skipValue() }
            } else if stream.keyIs("cache") {
                if members.cacheHit == nil {
                    members.cacheHit = try readCache(stream)
                } else {
                    try stream.skipValue()
                }
            } else {
                try stream.skipValue()
            }
        }
        return RawHAREntry(members: members, kindName: "an object")
    }

    /// `cache` as `Members.cacheHit` tells it: read without building its values.
    static func readCache(_ stream: JSONStreamReader) throws -> Bool {
        let token = try stream.token(materialize: false)
        guard token == .beginObject else {
            try stream.skipValue(startingWith: token)
            return false
        }
        var hit = false
        var seenBefore = false
        var seenAfter = false
        while try stream.nextMemberKey() {
            let before = stream.keyIs("beforeRequest")
            guard before ? !seenBefore : (!seenAfter && stream.keyIs("afterRequest")) else {
                try stream.skipValue()
                continue
            }
            if before { seenBefore = true } else { seenAfter = true }
            let value = try stream.token(materialize: false)
            switch value {
            case .null: break
            case .beginObject:
                // `{}` holds nothing; any member is something.
                if try stream.nextMemberKey() {
                    hit = true
                    try stream.skipValue()
                    while try stream.nextMemberKey() { try stream.skipValue() }
                }
            default:
                hit = true
                try stream.skipValue(startingWith: value)
            }
        }
        return hit
    }

    /// The first member of a name wins; later ones are skipped unread.
    @inline(__always)
    static func first(_ value: inout JSONValue?, _ stream: JSONStreamReader) throws {
        if value == nil { value = try stream.scalarOrKind() } else { try stream.skipValue() }
    }

    /// `first` for a body's text, read as bytes.
    @inline(__always)
    static func first(_ value: inout JSONText?, _ stream: JSONStreamReader) throws {
        if value == nil { value = try stream.textOrKind() } else { try stream.skipValue() }
    }

    /// An object member read by `members`, or what the member held instead.
    static func slot<Members>(
        _ stream: JSONStreamReader, _ members: (JSONStreamReader) throws -> Members
    ) throws -> Slot<Members> {
        let token = try stream.token()
        guard token == .beginObject else { return .other(try stream.scalarOrKind(startingWith: token)) }
        return .object(try members(stream))
    }

    static func readRequest(_ stream: JSONStreamReader) throws -> Request {
        let request = Request()
        while try stream.nextMemberKey() {
            if stream.keyIs("headers") {
                if request.headers == nil {
                    request.headers = try readHeaders(stream, "request.headers")
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("method") {
                try first(&request.method, stream)
            } else if stream.keyIs("url") {
                try first(&request.url, stream)
            } else if stream.keyIs("httpVersion") {
                try first(&request.httpVersion, stream)
            } else if stream.keyIs("cookies") {
                if request.cookies == nil { request.cookies = try stream.countOrKind() } else { try stream.skipValue() }
            } else if stream.keyIs("headersSize") {
                try first(&request.headersSize, stream)
            } else if stream.keyIs("bodySize") {
                try first(&request.bodySize, stream)
            } else if stream.keyIs("postData") {
                if request.postData == nil { request.postData = try slot(stream, readPostData) } else { try stream.skipValue() }
            } else {
                try stream.skipValue()
            }
        }
        return request
    }

    static func readPostData(_ stream: JSONStreamReader) throws -> PostData {
        let postData = PostData()
        while try stream.nextMemberKey() {
            if stream.keyIs("text") {
                try first(&postData.text, stream)
            } else if stream.keyIs("mimeType") {
                try first(&postData.mimeType, stream)
            } else if stream.keyIs("encoding") {
                try first(&postData.encoding, stream)
            } else if stream.keyIs("params") {
                if postData.params == nil { postData.params = try readParams(stream) } else { try stream.skipValue() }
            } else {
                try stream.skipValue()
            }
        }
        return postData
    }

    static func readResponse(_ stream: JSONStreamReader) throws -> Response {
        let response = Response()
        while try stream.nextMemberKey() {
            if stream.keyIs("headers") {
                if response.headers == nil {
                    response.headers = try readHeaders(stream, "response.headers")
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("status") {
                if response.status == nil {
                    // An object or array status is written out whole in the reason.
                    let token = try stream.token()
                    switch token {
                    case .beginObject, .beginArray: response.status = try stream.readValue(startingWith: token)
                    default: response.status = try stream.scalarOrKind(startingWith: token)
                    }
                } else {
                    try stream.skipValue()
                }
            } else if stream.keyIs("content") {
                if response.content == nil { response.content = try slot(stream, readContent) } else { try stream.skipValue() }
            } else if stream.keyIs("statusText") {
                try first(&response.statusText, stream)
            } else if stream.keyIs("httpVersion") {
                try first(&response.httpVersion, stream)
            } else if stream.keyIs("cookies") {
                if response.cookies == nil { response.cookies = try stream.countOrKind() } else { try stream.skipValue() }
            } else if stream.keyIs("headersSize") {
                try first(&response.headersSize, stream)
            } else if stream.keyIs("bodySize") {
                try first(&response.bodySize, stream)
            } else if stream.keyIs("_transferSize") {
                try first(&response.transferSize, stream)
            } else if stream.keyIs("_error") {
                try first(&response.error, stream)
            } else {
                try stream.skipValue()
            }
        }
        return response
    }

    static func readContent(_ stream: JSONStreamReader) throws -> Content {
        let content = Content()
        while try stream.nextMemberKey() {
            if stream.keyIs("text") {
                try first(&content.text, stream)
            } else if stream.keyIs("size") {
                try first(&content.size, stream)
            } else if stream.keyIs("mimeType") {
                try first(&content.mimeType, stream)
            } else if stream.keyIs("encoding") {
                try first(&content.encoding, stream)
            } else if stream.keyIs("compression") {
                try first(&content.compression, stream)
            } else {
                try stream.skipValue()
            }
        }
        return content
    }

    /// A `[{name, value}]` list (`headers`) as `HAREntryDecoder.headers` reads it: null is
    /// empty; an element's missing or null value is empty; the first bad element (in file
    /// order; its name checked before its value) or a value of another kind is the reason.
    static func readHeaders(_ stream: JSONStreamReader, _ path: StaticString) throws -> Headers {
        let first = try stream.token(materialize: false)
        switch first {
        case .null: return .success([])
        case .beginArray: break
        default:
            try stream.skipValue(startingWith: first)
            return .failure(.init(reason: "\(path) is \(JSONStreamReader.kindName(first)), not an array"))
        }
        var headers: [HARHeader] = []
        headers.reserveCapacity(16)
        var failure: HAREntryDecoder.Broken?
        var offset = 0
        while true {
            if failure == nil, let (name, value) = stream.nameValueElementInBuffer() {
                headers.append(HARHeader(nameBytes: name, valueBytes: value))
                offset += 1
                continue
            }
            let element = try stream.token(materialize: false)
            if element == .endArray { break }
            defer { offset += 1 }
            if failure != nil {
                try stream.skipValue(startingWith: element)
                continue
            }
            guard element == .beginObject else {
                try stream.skipValue(startingWith: element)
                failure = .init(reason: "\(path)[\(offset)] is \(JSONStreamReader.kindName(element)), not an object")
                continue
            }
            var name: JSONValue?
            var value: JSONValue?
            while try stream.nextMemberKey() {
                if stream.keyIs("name") {
                    try self.first(&name, stream)
                } else if stream.keyIs("value") {
                    try self.first(&value, stream)
                } else {
                    try stream.skipValue()
                }
            }
            if case let .string(name)? = name {
                switch value {
                case let .string(text)?:
                    headers.append(HARHeader(name: name, value: text))
                    continue
                case nil, .null?:
                    headers.append(HARHeader(name: name, value: ""))
                    continue
                default: break
                }
            }
            do {
                headers.append(
                    HARHeader(
                        name: try HAREntryDecoder.requiredString(name, "\(path)[\(offset)].name"),
                        value: try HAREntryDecoder.string(value, "\(path)[\(offset)].value") ?? ""))
            } catch let broken as HAREntryDecoder.Broken {
                failure = broken
            }
        }
        if let failure { return .failure(failure) }
        return .success(headers)
    }

    /// `postData.params[]` as `HAREntryDecoder` reads it: used only to rebuild a form body that
    /// `text` lacks, so a param of an unexpected shape is a note and drops them all.
    static func readParams(_ stream: JSONStreamReader) throws -> Params {
        let path = "request.postData.params"
        let first = try stream.token(materialize: false)
        switch first {
        case .null: return .list([])
        case .beginArray: break
        default:
            try stream.skipValue(startingWith: first)
            return .note(path)
        }
        var params: [HARHeader] = []
        var noted: String?
        while true {
            if noted == nil, let (name, value) = stream.nameValueElementInBuffer() {
                params.append(HARHeader(nameBytes: name, valueBytes: value))
                continue
            }
            let element = try stream.token(materialize: false)
            if element == .endArray { break }
            if noted != nil {
                try stream.skipValue(startingWith: element)
                continue
            }
            guard element == .beginObject else {
                try stream.skipValue(startingWith: element)
                noted = path
                continue
            }
            var name: JSONValue?
            var value: JSONValue?
            while try stream.nextMemberKey() {
                if stream.keyIs("name") {
                    try self.first(&name, stream)
                } else if stream.keyIs("value") {
                    try self.first(&value, stream)
                } else {
                    try stream.skipValue()
                }
            }
            guard case let .string(name)? = name else {
                noted = "\(path).name"
                continue
            }
            switch value {
            case nil, .null?: params.append(HARHeader(name: name, value: ""))
            case let .string(text)?: params.append(HARHeader(name: name, value: text))
            case _?: noted = "\(path).value"
            }
        }
        if let noted { return .note(noted) }
        return .list(params)
    }
}
