/// One header field (or HTTP/2-3 pseudo-header) of a HAR message, as exported. Kept as the
/// UTF-8 bytes messages are measured in (ill-formed sequences repaired, as a String would):
/// the reader makes them once, and a message's fields share them.
public struct HARHeader: Equatable, Sendable {
    public var nameBytes: [UInt8]
    public var valueBytes: [UInt8]

    public init(name: String, value: String) {
        nameBytes = Array(name.utf8)
        valueBytes = Array(value.utf8)
    }

    /// Bytes that are well-formed UTF-8 (`JSONStreamReader.utf8Array`).
    init(nameBytes: [UInt8], valueBytes: [UInt8]) {
        self.nameBytes = nameBytes
        self.valueBytes = valueBytes
    }

    public var name: String { String(decoding: nameBytes, as: UTF8.self) }
    public var value: String { String(decoding: valueBytes, as: UTF8.self) }

    /// `:authority`, `:method`, `:path`, `:scheme`, `:status`: not header fields for estimators.
    public var isPseudoHeader: Bool { nameBytes.first == UInt8(ascii: ":") }
}

extension Array where Element == HARHeader {
    /// The header fields without pseudo-headers.
    public var withoutPseudoHeaders: [HARHeader] { filter { !$0.isPseudoHeader } }
}

/// `request.postData`.
public struct HARPostData: Equatable, Sendable {
    public var mimeType: String?
    /// Decoded body: the text's UTF-8 bytes, or base64-decoded when `encoding` is "base64".
    /// Nil when the exporter gave no `text`.
    public var text: [UInt8]?
    /// `postData.encoding` as exported (nil when absent).
    public var encoding: String?
    /// `params[]` as name and value (a file upload's `fileName` / `contentType` are not kept).
    public var params: [HARHeader]

    /// `params` is present and non-empty.
    public var hasParams: Bool { !params.isEmpty }

    public init(mimeType: String?, text: [UInt8]?, encoding: String?, params: [HARHeader] = []) {
        self.mimeType = mimeType
        self.text = text
        self.encoding = encoding
        self.params = params
    }
}

/// `request`. Sizes are nil when unknown: -1, missing, null, non-integer or negative.
public struct HARRequest: Equatable, Sendable {
    public var method: String
    public var url: String
    public var httpVersion: String
    /// In file order, pseudo-headers included (see `HARHeader.isPseudoHeader`).
    public var headers: [HARHeader]
    public var cookieCount: Int
    public var headersSize: Int?
    public var bodySize: Int?
    /// Nil when the entry has no `postData` (or it is null).
    public var postData: HARPostData?
    /// The path of each field of a wrong type that no size or body needs (array indices left
    /// out): the field was read as absent and the entry kept.
    public var unexpectedTypes: [String] = []

    public init(
        method: String, url: String, httpVersion: String, headers: [HARHeader], cookieCount: Int = 0, headersSize: Int?,
        bodySize: Int?, postData: HARPostData? = nil
    ) {
        self.method = method
        self.url = url
        self.httpVersion = httpVersion
        self.headers = headers
        self.cookieCount = cookieCount
        self.headersSize = headersSize
        self.bodySize = bodySize
        self.postData = postData
    }
}

/// `response.content`.
public struct HARContent: Equatable, Sendable {
    /// Decoded length as exported (unknown per the size rule); not a substitute for `text`.
    public var size: Int?
    public var mimeType: String?
    /// Decoded body: UTF-8 bytes of `text`, or base64-decoded when `encoding` is "base64".
    public var text: [UInt8]?
    public var encoding: String?
    public var compression: Int?

    public init(
        size: Int? = nil, mimeType: String? = nil, text: [UInt8]? = nil, encoding: String? = nil,
        compression: Int? = nil
    ) {
        self.size = size
        self.mimeType = mimeType
        self.text = text
        self.encoding = encoding
        self.compression = compression
    }
}

/// `response`, present only when the entry has a response object with a non-zero status.
public struct HARResponse: Equatable, Sendable {
    public var status: Int
    public var statusText: String
    public var httpVersion: String
    public var headers: [HARHeader]
    public var cookieCount: Int
    public var headersSize: Int?
    public var bodySize: Int?
    public var content: HARContent
    /// Chrome's `_transferSize` (headers + body as transferred), unknown per the size rule.
    public var transferSize: Int?
    /// Chrome's `_error` (e.g. "net::ERR_ABORTED") when present.
    public var error: String?
    /// As `HARRequest.unexpectedTypes`.
    public var unexpectedTypes: [String] = []

    public init(
        status: Int, statusText: String, httpVersion: String, headers: [HARHeader], cookieCount: Int = 0,
        headersSize: Int?, bodySize: Int?, content: HARContent, transferSize: Int? = nil, error: String? = nil
    ) {
        self.status = status
        self.statusText = statusText
        self.httpVersion = httpVersion
        self.headers = headers
        self.cookieCount = cookieCount
        self.headersSize = headersSize
        self.bodySize = bodySize
        self.content = content
        self.transferSize = transferSize
        self.error = error
    }
}

/// One `log.entries[]` element, read on its own.
public struct HAREntry: Equatable, Sendable {
    /// 0-based position in `log.entries`.
    public var index: Int
    /// `startedDateTime` as written (nil when missing or not a string).
    public var startedDateTime: String?
    /// `connection` (a number is kept as its text).
    public var connection: String?
    public var serverIPAddress: String?
    public var request: HARRequest
    /// Nil when the entry has no response object, or its status is 0 (no response received).
    public var response: HARResponse?
    /// `response.status` as exported, for diagnostics: 0 when `response` was dropped for status
    /// 0, nil when there is no response object at all.
    public var responseStatus: Int?
    /// `response._error` when the response was dropped (status 0), e.g. "net::ERR_FAILED".
    public var responseError: String?
    /// Served from a cache: Chrome's `_fromCache` ("memory", "disk", or true), or `cache`
    /// holding a non-null, non-empty `beforeRequest`/`afterRequest`.
    public var fromCache: Bool
    /// Length of Chrome's `_webSocketMessages` (0 when absent).
    public var webSocketMessageCount: Int

    public init(
        index: Int, startedDateTime: String?, connection: String?, serverIPAddress: String?, request: HARRequest,
        response: HARResponse?, responseStatus: Int?, responseError: String? = nil, fromCache: Bool = false,
        webSocketMessageCount: Int = 0
    ) {
        self.index = index
        self.startedDateTime = startedDateTime
        self.connection = connection
        self.serverIPAddress = serverIPAddress
        self.request = request
        self.response = response
        self.responseStatus = responseStatus
        self.responseError = responseError
        self.fromCache = fromCache
        self.webSocketMessageCount = webSocketMessageCount
    }
}

/// What `HARReader.next()` yields: an entry, or an entry that is valid JSON but not a usable
/// HAR entry (wrong types, undecodable base64), to be reported by index and skipped.
public enum HAREntryResult: Equatable, Sendable {
    case entry(HAREntry)
    case broken(index: Int, reason: String)

    public var entry: HAREntry? {
        if case let .entry(entry) = self { return entry }
        return nil
    }
}

/// Why a HAR file cannot be read (further). Descriptions leave the file's name to the caller. All are fatal for the file; a broken entry is not an
/// error but `HAREntryResult.broken`.
public enum HARError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case readFailed(path: String, reason: String)
    /// Not JSON: line and column (1-based) of the first wrong byte.
    case invalidJSON(line: Int, column: Int, reason: String)
    /// A required key is missing; the argument is its path, e.g. "log.entries".
    case missingKey(String)
    /// The value at this path ("top level", "log") is not an object.
    case notAnObject(String)
    /// The value at this path ("log.entries") is not an array.
    case notAnArray(String)

    public var description: String {
        switch self {
        case let .cannotOpen(_, reason): return "cannot open: \(reason)"
        case let .readFailed(_, reason): return "read failed: \(reason)"
        case let .invalidJSON(line, column, reason):
            return "not a HAR file: invalid JSON at line \(line), column \(column): \(reason)"
        case let .missingKey(path): return "not a HAR file: \(path) is missing"
        case let .notAnObject(path): return "not a HAR file: \(path) is not an object"
        case let .notAnArray(path): return "not a HAR file: \(path) is not an array"
        }
    }

    init(_ error: JSONStreamError) {
        switch error {
        case let .cannotOpen(path, reason): self = .cannotOpen(path: path, reason: reason)
        case let .readFailed(path, reason): self = .readFailed(path: path, reason: reason)
        case let .invalidJSON(line, column, reason): self = .invalidJSON(line: line, column: column, reason: reason)
        case let .misuse(reason): self = .invalidJSON(line: 0, column: 0, reason: "internal: \(reason)")
        }
    }
}
