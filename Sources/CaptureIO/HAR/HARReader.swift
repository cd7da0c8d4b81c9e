/// Reads a HAR 1.2 file one entry at a time: it walks to `log`, remembers `creator`, then yields
/// `log.entries[]` in order, materializing only the current entry (memory: one read chunk plus
/// one entry). The rest of the file after the entries is still read and checked to be JSON.
///
///     let reader = try HARReader(path: path)
///     while let result = try reader.next() {
///         switch result {
///         case let .entry(entry): ...
///         case let .broken(index, reason): ...   // report and go on
///         }
///     }
///     reader.creatorName   // complete once next() has returned nil
///
/// Errors (`HARError`) are fatal for the file: once thrown, `next()` throws the same again.
public final class HARReader {
    public let path: String
    /// `log.creator.name` / `.version`: set by `init` when `creator` precedes `entries`,
    /// otherwise once `next()` has returned nil.
    public private(set) var creatorName: String?
    public private(set) var creatorVersion: String?
    /// `log.version` when seen.
    public private(set) var harVersion: String?
    /// Entries yielded so far (good and broken).
    public private(set) var entryCount = 0

    private let stream: JSONStreamReader
    private var finished = false
    private var failure: HARError?

    public init(path: String, chunkSize: Int = JSONStreamReader.defaultChunkSize) throws {
        self.path = path
        do {
            stream = try JSONStreamReader(path: path, chunkSize: chunkSize)
        } catch let error as JSONStreamError {
            throw HARError(error)
        }
        do {
            try enterEntries()
        } catch let error as JSONStreamError {
            throw HARError(error)
        }
    }

    /// Bytes of the file read so far, and how many of them are read ahead of the parse position
    /// (at most one chunk).
    public var bytesRead: Int { stream.bytesRead }
    public var bytesBuffered: Int { stream.bytesBuffered }

    /// The next entry, nil after the last one.
    public func next() throws -> HAREntryResult? {
        if let failure { throw failure }
        if finished { return nil }
        do {
            guard let token = try stream.next() else {
                throw JSONStreamError.invalidJSON(
                    line: stream.line, column: stream.column, reason: "unexpected end of file")
            }
            if token == .endArray {
                try finish()
                finished = true
                return nil
            }
            let raw = try RawHAREntry.read(stream, startingWith: token)
            let index = entryCount
            entryCount += 1
            do {
                return .entry(try HAREntryDecoder.entry(raw, index: index))
            } catch let broken as HAREntryDecoder.Broken {
                return .broken(index: index, reason: broken.reason)
            }
        } catch let error as JSONStreamError {
            failure = HARError(error)
            throw failure!
        } catch let error as HARError {
            failure = error
            throw error
        }
    }

    /// Reads every remaining entry (convenience for small files and tests).
    public func readAll() throws -> [HAREntryResult] {
        var results: [HAREntryResult] = []
        while let result = try next() { results.append(result) }
        return results
    }

    // MARK: Walking

    private func enterEntries() throws {
        guard try stream.next() == .beginObject else { throw HARError.notAnObject("top level") }
        while true {
            let token = try stream.next()
            if token == .endObject { throw HARError.missingKey("log") }
            guard case let .key(key) = token else { throw JSONStreamError.misuse("expected a key") }
            if key == "log" { break }
            try stream.skipValue()
        }
        guard try stream.next() == .beginObject else { throw HARError.notAnObject("log") }
        while true {
            let token = try stream.next()
            if token == .endObject { throw HARError.missingKey("log.entries") }
            guard case let .key(key) = token else { throw JSONStreamError.misuse("expected a key") }
            if key == "entries" {
                guard try stream.next() == .beginArray else { throw HARError.notAnArray("log.entries") }
                return
            }
            try readLogMember(key)
        }
    }

    private func readLogMember(_ key: String) throws {
        switch key {
        case "creator":
            let creator = try stream.readValue()
            creatorName = creator["name"]?.stringValue
            creatorVersion = creator["version"]?.stringValue
        case "version":
            harVersion = try stream.readValue().stringValue
        default:
            try stream.skipValue()
        }
    }

    /// After `entries`: the rest of `log` (creator may come here), the rest of the top level,
    /// and nothing but whitespace after it.
    private func finish() throws {
        while true {
            let token = try stream.next()
            if token == .endObject { break }
            guard case let .key(key) = token else { throw JSONStreamError.misuse("expected a key") }
            if key == "entries" { try stream.skipValue() } else { try readLogMember(key) }
        }
        while true {
            let token = try stream.next()
            if token == .endObject { break }
            try stream.skipValue()
        }
        if try stream.next() != nil { throw JSONStreamError.misuse("data after the top-level object") }
    }
}

/// JSON value of one entry → `HAREntry`, or `Broken` with a reason naming the field.
enum HAREntryDecoder {
    struct Broken: Error { let reason: String }

    static func entry(_ raw: RawHAREntry, index: Int) throws -> HAREntry {
        guard let members = raw.members else { throw Broken(reason: "the entry is \(raw.kindName), not an object") }
        let request = try self.request(try object(members.request, "request", required: true)!)
        var response: HARResponse?
        var responseStatus: Int?
        var responseError: String?
        if let object = try object(members.response, "response", required: false) {
            let decoded = try self.response(object)
            responseStatus = decoded.status
            if decoded.status == 0 {
                responseError = decoded.error
            } else {
                response = consume decoded  // moved, not copied (a retain per string and array)
            }
        }
        var connection: String?
        switch members.connection {
        case let .string(text)?: connection = text
        case let .number(number)?: connection = number.raw
        default: break
        }
        var fromCache = false
        switch members.fromCache {
        case let .string(text)?: fromCache = !text.isEmpty
        case let .bool(flag)?: fromCache = flag
        default: break
        }
        if members.cacheHit == true { fromCache = true }
        var webSocketMessageCount = 0
        if case let .count(count)? = members.webSocketMessages { webSocketMessageCount = count }
        return HAREntry(
            index: index,
            startedDateTime: members.startedDateTime?.stringValue,
            connection: connection,
            serverIPAddress: members.serverIPAddress?.stringValue,
            request: request,
            response: response,
            responseStatus: responseStatus,
            responseError: responseError,
            fromCache: fromCache,
            webSocketMessageCount: webSocketMessageCount)
    }

    static func request(_ value: RawHAREntry.Request) throws -> HARRequest {
        var unexpectedTypes: [String] = []
        var postData: HARPostData?
        if let object = try object(value.postData, "request.postData", required: false) {
            let encoding = try string(object.encoding, "request.postData.encoding")
            postData = HARPostData(
                mimeType: optionalString(object.mimeType, "request.postData.mimeType", &unexpectedTypes),
                text: try body(object.text, encoding: encoding, "request.postData.text"),
                encoding: encoding,
                params: params(object.params, &unexpectedTypes))
        }
        var request = HARRequest(
            method: try requiredString(value.method, "request.method"),
            url: try requiredString(value.url, "request.url"),
            // The request line is measured as HTTP/1.1 whatever the HAR says (docs/HAR.md).
            httpVersion: optionalString(value.httpVersion, "request.httpVersion", &unexpectedTypes) ?? "",
            headers: try value.headers?.get() ?? [],
            cookieCount: cookieCount(value.cookies, "request.cookies", &unexpectedTypes),
            headersSize: size(value.headersSize),
            bodySize: size(value.bodySize),
            postData: postData)
        if !unexpectedTypes.isEmpty { request.unexpectedTypes = unexpectedTypes }
        return request
    }

    static func response(_ value: RawHAREntry.Response) throws -> HARResponse {
        guard let statusValue = value.status else { throw Broken(reason: "response.status is missing") }
        guard let status = statusValue.intValue else {
            throw Broken(reason: "response.status is \(statusValue.kindName) (\(statusValue)), not an integer")
        }
        var unexpectedTypes: [String] = []
        let content: HARContent
        if let object = try object(value.content, "response.content", required: false) {
            let encoding = try string(object.encoding, "response.content.encoding")
            content = HARContent(
                size: size(object.size),
                mimeType: optionalString(object.mimeType, "response.content.mimeType", &unexpectedTypes),
                text: try body(object.text, encoding: encoding, "response.content.text"),
                encoding: encoding,
                compression: size(object.compression))
        } else {
            content = HARContent()
        }
        var response = HARResponse(
            status: status,
            statusText: try string(value.statusText, "response.statusText") ?? "",
            httpVersion: try string(value.httpVersion, "response.httpVersion") ?? "",
            headers: try value.headers?.get() ?? [],
            cookieCount: cookieCount(value.cookies, "response.cookies", &unexpectedTypes),
            headersSize: size(value.headersSize),
            bodySize: size(value.bodySize),
            content: consume content,
            transferSize: size(value.transferSize),
            error: optionalString(value.error, "response._error", &unexpectedTypes))
        if !unexpectedTypes.isEmpty { response.unexpectedTypes = unexpectedTypes }
        return response
    }

    /// A member that must be an object when present: its members, or the value (null, or
    /// another kind) it held instead.
    static func object<Members>(_ slot: RawHAREntry.Slot<Members>?, _ path: String, required: Bool) throws -> Members? {
        switch slot {
        case nil, .other(.null)?:
            if required { throw Broken(reason: "\(path) is missing") }
            return nil
        case let .other(value)?: throw Broken(reason: "\(path) is \(value.kindName), not an object")
        case let .object(members)?: return members
        }
    }

    /// `cookies[]` counted; only its length is used, so another type is a note.
    static func cookieCount(_ value: JSONCount?, _ path: String, _ unexpectedTypes: inout [String]) -> Int {
        switch value {
        case nil, .other(.null)?: return 0
        case let .count(count)?: return count
        case .other?:
            note(path, &unexpectedTypes)
            return 0
        }
    }

    /// `postData.params[]` as read (see `RawHAREntry.readParams`): the params, or the note
    /// that drops them.
    static func params(_ value: RawHAREntry.Params?, _ unexpectedTypes: inout [String]) -> [HARHeader] {
        switch value {
        case nil: return []
        case let .list(params)?: return params
        case let .note(path)?:
            note(path, &unexpectedTypes)
            return []
        }
    }

    // MARK: Fields

    /// docs/METERING.md §3: missing, null, non-integer or negative sizes are unknown.
    static func size(_ value: JSONValue?) -> Int? {
        guard let size = value?.intValue, size >= 0 else { return nil }
        return size
    }

    /// nil for missing/null; Broken for another non-object; the object otherwise.
    static func object(_ value: JSONValue?, _ path: String, required: Bool) throws -> JSONValue? {
        switch value {
        case nil, .null?:
            if required { throw Broken(reason: "\(path) is missing") }
            return nil
        case let value?:
            guard case .object = value else { throw Broken(reason: "\(path) is \(value.kindName), not an object") }
            return value
        }
    }

    /// nil for missing/null; Broken for a non-string.
    static func string(_ value: JSONValue?, _ path: String) throws -> String? {
        switch value {
        case nil, .null?: return nil
        case let .string(text)?: return text
        case let value?: throw Broken(reason: "\(path) is \(value.kindName), not a string")
        }
    }

    /// For a field no size or body needs: a value of another type is read as absent, with the
    /// field's PATH noted in `unexpectedTypes` (without array indices, so they count by field).
    static func optionalString(_ value: JSONValue?, _ path: String, _ unexpectedTypes: inout [String]) -> String? {
        switch value {
        case nil, .null?: return nil
        case let .string(text)?: return text
        case _?:
            note(path, &unexpectedTypes)
            return nil
        }
    }

    static func note(_ path: String, _ unexpectedTypes: inout [String]) {
        if !unexpectedTypes.contains(path) { unexpectedTypes.append(path) }
    }

    static func requiredString(_ value: JSONValue?, _ path: String) throws -> String {
        guard let text = try string(value, path) else { throw Broken(reason: "\(path) is missing") }
        return text
    }

    static func body(_ value: JSONText?, encoding: String?, _ path: String) throws -> [UInt8]? {
        guard case let .bytes(text)? = value else {
            if case let .other(value)? = value { return try body(value, encoding: encoding, path) }
            return nil
        }
        guard encoding?.lowercased() == "base64" else { return text }
        guard let bytes = text.withUnsafeBytes({ HARBase64.decode($0) }) else {
            throw Broken(reason: "\(path) is not valid base64")
        }
        return bytes
    }

    static func body(_ value: JSONValue?, encoding: String?, _ path: String) throws -> [UInt8]? {
        guard let text = try string(value, path) else { return nil }
        guard encoding?.lowercased() == "base64" else { return Array(text.utf8) }
        guard let bytes = HARBase64.decode(text) else { throw Broken(reason: "\(path) is not valid base64") }
        return bytes
    }

    /// A `[{name, value}]` list (`headers`, `params`); a missing value is empty.
    static func headers(_ value: JSONValue?, _ path: String) throws -> [HARHeader] {
        switch value {
        case nil, .null?: return []
        case let .array(elements)?:
            return try elements.enumerated().map { offset, element in
                guard case .object = element else {
                    throw Broken(reason: "\(path)[\(offset)] is \(element.kindName), not an object")
                }
                return HARHeader(
                    name: try requiredString(element["name"], "\(path)[\(offset)].name"),
                    value: try string(element["value"], "\(path)[\(offset)].value") ?? "")
            }
        case let value?: throw Broken(reason: "\(path) is \(value.kindName), not an array")
        }
    }
}
