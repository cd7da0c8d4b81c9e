/// What Charles recorded of one side of a transaction (`request` or `response`), read from a
/// `.chlsj` or `.chlsx` session (docs/CHARLES.md). Sizes are nil when unknown: missing, null,
/// negative or not an integer.
public struct CharlesMessagePart: Equatable, Sendable {
    /// `sizes.handshake`: the TLS handshake bytes of this leg, as Charles counted them.
    public var handshakeSize: Int?
    /// `sizes.headers`: the head as Charles counted it.
    public var headersSize: Int?
    /// `sizes.body`: the body as Charles counted it.
    public var bodySize: Int?
    /// `header.firstLine` as recorded (request line or status line, no CRLF).
    public var firstLine: String?
    /// `header.headers[]` in file order, pseudo-header fields included.
    public var headers: [HARHeader]
    /// The body's bytes: `body.text` as UTF-8, or `body.encoded` base64-decoded; nil when absent.
    public var body: [UInt8]?
    /// `body.decoded` when written: whether Charles already removed the content coding.
    public var bodyDecoded: Bool?
    /// True when the body came from `body.text` (false: from `body.encoded`).
    public var bodyIsText: Bool
    /// Response only: `status`, else the status code of `firstLine`.
    public var status: Int?
    /// The path of each field of a wrong type that no size or body needs.
    public var unexpectedTypes: [String]

    public init(
        handshakeSize: Int? = nil, headersSize: Int? = nil, bodySize: Int? = nil, firstLine: String? = nil,
        headers: [HARHeader] = [], body: [UInt8]? = nil, bodyDecoded: Bool? = nil, bodyIsText: Bool = false,
        status: Int? = nil, unexpectedTypes: [String] = []
    ) {
        self.handshakeSize = handshakeSize
        self.headersSize = headersSize
        self.bodySize = bodySize
        self.firstLine = firstLine
        self.headers = headers
        self.body = body
        self.bodyDecoded = bodyDecoded
        self.bodyIsText = bodyIsText
        self.status = status
        self.unexpectedTypes = unexpectedTypes
    }

    /// Whether the body bytes still carry the content coding the head names: `decoded` when
    /// written, else true for `encoded` (raw bytes) and false for `text`.
    public var bodyStillCoded: Bool {
        if let bodyDecoded { return !bodyDecoded }
        return !bodyIsText
    }
}

/// One transaction of a Charles session: a request, its response when there is one, and what
/// Charles knew of the connection (docs/CHARLES.md).
public struct CharlesTransaction: Equatable, Sendable {
    /// 0-based position in the session.
    public var index: Int
    /// `status`: `COMPLETE`, `FAILED`, ... (nil when absent).
    public var status: String?
    public var method: String
    /// `protocolVersion`, e.g. `HTTP/1.1`, `HTTP/2.0`.
    public var protocolVersion: String?
    /// `scheme` (`protocol` in some exports): `http` or `https`.
    public var scheme: String?
    public var host: String?
    public var actualPort: Int?
    public var path: String?
    public var query: String?
    /// A CONNECT that Charles did not decrypt: a connection, not messages.
    public var tunnel: Bool
    /// `times.start` and `times.responseBegin` as written (ISO 8601).
    public var startTime: String?
    public var responseTime: String?
    public var totalSize: Int?
    /// The client's address (a leading `/` removed) and port.
    public var clientAddress: String?
    public var clientPort: Int?
    /// The server's address: `remoteAddress` after its last `/` (Charles writes `host/ip`).
    public var remoteAddress: String?
    /// `ssl.protocol`, `ssl.cipherSuite`, `alpn.protocol`.
    public var tlsProtocol: String?
    public var cipherSuite: String?
    public var alpn: String?
    public var request: CharlesMessagePart
    /// Nil when the transaction has no response (or a response without a status).
    public var response: CharlesMessagePart?
    /// Fields of a wrong type at the transaction's own level that no figure needs.
    public var unexpectedTypes: [String]

    public init(index: Int, method: String, request: CharlesMessagePart) {
        self.index = index
        self.method = method
        self.tunnel = false
        self.request = request
        self.unexpectedTypes = []
    }

    public var isHTTP2: Bool {
        guard let version = protocolVersion?.lowercased() else { return false }
        return version == "http/2" || version == "http/2.0" || version == "h2"
    }
}

/// What a Charles reader yields: a transaction, or one that is well-formed but unusable
/// (wrong types where a size, a body or the endpoint needs them), reported by index.
public enum CharlesResult: Equatable, Sendable {
    case transaction(CharlesTransaction)
    case broken(index: Int, reason: String)
}

/// Why a Charles session cannot be read (further); fatal for the file. Descriptions leave the
/// file's name to the caller.
public enum CharlesError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case readFailed(path: String, reason: String)
    /// Not JSON / not XML: where the first wrong byte is (1-based), and why.
    case invalid(format: String, line: Int, column: Int, reason: String)
    /// The top-level value is not a session (`[` array of transactions, or `<charles-session>`).
    case notASession(String)

    public var description: String {
        switch self {
        case let .cannotOpen(_, reason): return "cannot open: \(reason)"
        case let .readFailed(_, reason): return "read failed: \(reason)"
        case let .invalid(format, line, column, reason):
            return "not a Charles session: invalid \(format) at line \(line), column \(column): \(reason)"
        case let .notASession(why): return "not a Charles session: \(why)"
        }
    }

    init(_ error: JSONStreamError) {
        switch error {
        case let .cannotOpen(path, reason): self = .cannotOpen(path: path, reason: reason)
        case let .readFailed(path, reason): self = .readFailed(path: path, reason: reason)
        case let .invalidJSON(line, column, reason): self = .invalid(format: "JSON", line: line, column: column, reason: reason)
        case let .misuse(reason): self = .invalid(format: "JSON", line: 0, column: 0, reason: "internal: \(reason)")
        }
    }
}

/// Reads a Charles session one transaction at a time, JSON (`.chlsj`) or XML (`.chlsx`),
/// told apart by the first byte after an optional BOM and white space (`[` or `<`).
public protocol CharlesSessionReader: AnyObject {
    /// The next transaction, nil after the last one. Errors are fatal for the file.
    func next() throws -> CharlesResult?
    /// Bytes of the file read so far.
    var bytesRead: Int { get }
    /// "chlsj" or "chlsx".
    var format: String { get }
}

public enum CharlesSession {
    /// Opens `path` with the reader its content calls for.
    public static func open(path: String) throws -> CharlesSessionReader {
        switch try firstByte(path: path) {
        case UInt8(ascii: "<"): return try CharlesXMLReader(path: path)
        default: return try CharlesJSONReader(path: path)
        }
    }

    /// The first byte after an optional UTF-8 BOM and white space; nil for an empty file.
    public static func firstByte(path: String) throws -> UInt8? {
        guard let file = fopen(path, "rb") else {
            throw CharlesError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var head = [UInt8](repeating: 0, count: 4096)
        let count = fread(&head, 1, head.count, file)
        var bytes = head[0..<count]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension CharlesSession {
    /// Whether the file's content is a Charles session: XML whose head names `<charles-session`,
    /// or a JSON array whose first element is an object whose first key is one Charles writes
    /// (a HAR is an object; an array of anything else stays with the HAR reader, which rejects it).
    public static func looksLikeSession(path: String) -> Bool {
        guard let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var head = [UInt8](repeating: 0, count: 4096)
        let count = fread(&head, 1, head.count, file)
        var bytes = head[0..<count]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        func skipSpace() { while let b = bytes.first, [0x20, 0x09, 0x0A, 0x0D].contains(b) { bytes = bytes.dropFirst() } }
        skipSpace()
        switch bytes.first {
        case UInt8(ascii: "<"):
            let marker = Array("<charles-session".utf8)
            return bytes.indices.contains { bytes[$0...].starts(with: marker) }
        case UInt8(ascii: "["):
            bytes = bytes.dropFirst()
            skipSpace()
            guard bytes.first == UInt8(ascii: "{") else { return false }
            bytes = bytes.dropFirst()
            skipSpace()
            guard bytes.first == UInt8(ascii: "\"") else { return false }
            bytes = bytes.dropFirst()
            let key = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
            return transactionKeys.contains(key)
        default:
            return false
        }
    }

    /// Keys of a Charles transaction that a HAR entry does not have at its top level.
    static let transactionKeys: Set<String> = [
        "status", "method", "protocolVersion", "scheme", "host", "actualPort", "path", "query", "tunnel",
        "keptAlive", "webSocket", "remoteAddress", "clientAddress", "clientPort", "times", "durations", "speeds",
        "totalSize", "ssl", "alpn", "request", "response", "notes", "errorMessage", "port", "protocol",
    ]
}
