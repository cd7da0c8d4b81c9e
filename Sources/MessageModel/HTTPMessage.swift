/// Whether a record is a request or a response.
public enum MessageKind: String, Sendable {
    case request, response
}

/// One header (or trailer) field as sent.
public struct HeaderField: Sendable, Equatable {
    /// The name with the spelling it was sent with.
    public var name: [UInt8]
    /// What follows the first `:`, without surrounding spaces and tabs; an obs-fold is one space.
    public var value: [UInt8]

    public init(name: [UInt8], value: [UInt8]) {
        self.name = name
        self.value = value
    }

    public init(_ name: String, _ value: String) {
        self.init(name: Self.bytes(of: name), value: Self.bytes(of: value))
    }

    /// A String's UTF-8 as an array, copied in one block when the text is contiguous (every
    /// native String, HPACK's included: once per field of every HTTP/2 message).
    @inline(__always) static func bytes(of text: String) -> [UInt8] {
        text.utf8.withContiguousStorageIfAvailable { Array($0) } ?? Array(text.utf8)
    }

    /// Case-insensitive name comparison with an ASCII lowercase name.
    public func hasName(_ lowercased: String) -> Bool {
        let wanted = lowercased.utf8
        guard name.count == wanted.count else { return false }
        return wanted.withContiguousStorageIfAvailable { hasName(lowercasedBytes: $0) }
            ?? zip(name, wanted).allSatisfy { asciiLower($0) == $1 }
    }

    /// The same comparison with the name's bytes at hand: a byte loop, not a walk of a String's view.
    @inline(__always) func hasName(lowercasedBytes wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count == wanted.count else { return false }
        for index in wanted.indices where asciiLower(name[index]) != wanted[index] { return false }
        return true
    }
}

/// How a message's body is delimited on the wire.
public enum BodyFraming: Sendable, Equatable {
    /// No body (requests without length, HEAD/1xx/204/304 responses).
    case none
    /// `Content-Length` bytes.
    case length(Int64)
    /// Chunked transfer coding.
    case chunked
    /// Everything up to the sender's FIN.
    case untilClose
}

/// Oddities found while parsing; none stops the parse.
public struct MessageAnomalies: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A line ended with a bare LF.
    public static let bareLF = MessageAnomalies(rawValue: 1 << 0)
    /// A header field continued on an obs-fold line.
    public static let obsFold = MessageAnomalies(rawValue: 1 << 1)
    /// A header line without a colon.
    public static let malformedField = MessageAnomalies(rawValue: 1 << 2)
    /// Content-Length unparsable, or several different values.
    public static let invalidContentLength = MessageAnomalies(rawValue: 1 << 3)
    /// Both Transfer-Encoding and Content-Length; Transfer-Encoding wins.
    public static let lengthAndChunked = MessageAnomalies(rawValue: 1 << 4)
    /// The capture lacks some of the message's bytes (see `missingBytes`).
    public static let bytesMissing = MessageAnomalies(rawValue: 1 << 5)
    /// The head was longer than the limit; the rest of the stream was resynchronized.
    public static let headTooLarge = MessageAnomalies(rawValue: 1 << 6)
    /// A chunk-size line that does not parse.
    public static let malformedChunk = MessageAnomalies(rawValue: 1 << 7)
    /// A response with no request to pair with, or a request never answered.
    public static let unpaired = MessageAnomalies(rawValue: 1 << 8)
    /// An Expect: 100-continue request whose body the client left out after a final response.
    public static let bodyOmitted = MessageAnomalies(rawValue: 1 << 9)
    /// The message follows bytes that were skipped to find its start (mid-connection, after a gap).
    public static let afterResync = MessageAnomalies(rawValue: 1 << 10)
    /// A request line that does not parse (bad version, non-token method, HTTP/0.9), kept
    /// because a response answered it.
    public static let malformedStartLine = MessageAnomalies(rawValue: 1 << 11)
    /// HTTP/2: a request the server promised (PUSH_PROMISE), not one the client sent.
    public static let pushed = MessageAnomalies(rawValue: 1 << 12)
    /// HTTP/2: the header block was compressed against HPACK state the capture does not hold
    /// (a start mid-connection, a gap, a block that failed to decode): its fields are unknown.
    public static let hpackStateUnknown = MessageAnomalies(rawValue: 1 << 13)
    /// HTTP/2: RST_STREAM ended the stream before the message did.
    public static let streamReset = MessageAnomalies(rawValue: 1 << 14)
    /// HTTP/2: the decoded header block was larger than the bound on what a message keeps:
    /// its values were dropped, its sizes counted (docs/METERING.md §2a).
    public static let headerValuesDropped = MessageAnomalies(rawValue: 1 << 15)
    /// HTTP/3: the field section needs QPACK encoder-stream inserts the capture does not hold
    /// (it began after them, or lost them), or QPACK rejected it: its fields are unknown.
    public static let qpackStateUnknown = MessageAnomalies(rawValue: 1 << 16)

    /// Names used in outputs, in a fixed order.
    public static let names: [(MessageAnomalies, String)] = [
        (.bareLF, "bare-lf"), (.obsFold, "obs-fold"), (.malformedField, "malformed-field"),
        (.invalidContentLength, "invalid-content-length"), (.lengthAndChunked, "length-and-chunked"),
        (.bytesMissing, "bytes-missing"), (.headTooLarge, "head-too-large"),
        (.malformedChunk, "malformed-chunk"), (.unpaired, "unpaired"), (.bodyOmitted, "body-omitted"),
        (.afterResync, "after-resync"), (.malformedStartLine, "malformed-start-line"), (.pushed, "pushed"),
        (.hpackStateUnknown, "hpack-state-unknown"), (.streamReset, "stream-reset"),
        (.headerValuesDropped, "header-values-dropped"), (.qpackStateUnknown, "qpack-state-unknown"),
    ]

    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }
}

/// What a response needs to know of the request it answers.
public struct RequestSummary: Sendable, Equatable {
    public var index: Int
    public var method: String
    public var target: [UInt8]
    /// The Host field value as sent, else the authority of an absolute-form target.
    public var host: String?
    /// False when the request's method, authority or path is unknown (a header block decoded
    /// against state the capture never saw, §2a `hpack-state-unknown`, or whose values were
    /// dropped): the endpoint cannot be told.
    public var fieldsKnown: Bool

    public init(index: Int, method: String, target: [UInt8], host: String?, fieldsKnown: Bool = true) {
        self.index = index
        self.method = method
        self.target = target
        self.host = host
        self.fieldsKnown = fieldsKnown
    }
}

extension HTTPMessage {
    /// Whether the head's method, target, status and fields are the message's own: false for
    /// a head decoded against compression state the capture never saw (docs/METERING.md §2a).
    @inlinable public var fieldsKnown: Bool { protocolFacts.headFieldsKnown }

    /// Whether a request's method, scheme, authority and path are its own (what its endpoint
    /// needs), though other fields may be unknown (docs/METERING.md §2a, partial decoding).
    @inlinable public var requestLineKnown: Bool {
        let parts = protocolFacts.unknownHeadParts
        return protocolFacts.headFieldsKnown || (!parts.isEmpty && parts.isDisjoint(with: .requestLine))
    }

    /// The names of the head's parts that are unknown (`:path`, `fields`...); empty when the
    /// head is known.
    public var unknownFieldNames: [String] {
        guard !protocolFacts.headFieldsKnown else { return [] }
        let parts = protocolFacts.unknownHeadParts
        return (parts.isEmpty ? HeadParts.all(kind) : parts).names
    }
}

/// One HTTP message as its producer found it (this module's parser, or a reader of another
/// format): its head, how its body is framed and what is known of the body, and its pairing.
/// Where it was seen and how many bytes it took on the wire are not the message's own: the
/// parser hands them alongside (`CapturedMessage`), other producers their own way.
public struct HTTPMessage: Sendable, Equatable {
    public var kind: MessageKind
    /// 0-based position among the sender's messages on its connection, or in its producer's input.
    public var index: Int

    /// The start line as sent, without its terminator.
    public var startLine: [UInt8] = []
    /// Request method; nil for responses.
    public var method: String?
    /// Request-target bytes as sent; empty for responses.
    public var target: [UInt8] = []
    /// `HTTP/1.1` and the like.
    public var version: String = ""
    /// Status code; nil for requests.
    public var status: Int?
    public var reason: [UInt8] = []
    public var fields: [HeaderField] = []
    public var trailers: [HeaderField] = []

    /// Body length without transfer coding (content coding still applied), missing bytes included.
    public var bodyLength = 0
    /// Body bytes that the capture lacks (lost segments, snaplen), counted in the wire body.
    /// When a gap cut the head or the chunk framing, how much of it was the message's is
    /// unknown: those bytes go to the stream's `lostBytes`, and only `bytesMissing` and
    /// `complete=false` tell.
    public var missingBytes = 0
    public var framing: BodyFraming = .none
    /// True once the message's framing end was reached.
    public var complete = false
    public var anomalies: MessageAnomalies = []
    /// The counterpart's index on the same connection.
    public var pair: Int?
    /// For a response: the request it answers (for an interim response, the request it relates to).
    public var request: RequestSummary?
    /// What the protocol that carried the message tells of it beside its head and body: which
    /// protocol, its stream and frames, its header list (HTTP/1.x's defaults unless its producer
    /// sets them).
    public var protocolFacts = ProtocolFacts()

    public init(kind: MessageKind, index: Int) {
        self.kind = kind
        self.index = index
    }

    /// 1xx responses other than 101: they precede the final response.
    public var isInterim: Bool {
        if let status { return status >= 100 && status < 200 && status != 101 } else { return false }
    }

    /// Values of every field named `lowercasedName`, in order.
    public func values(of lowercasedName: String) -> [[UInt8]] {
        // Called several times per record: one pass, the name's bytes taken once, and no
        // array allocated unless a field matches.
        var found: [[UInt8]] = []
        let scanned: Void? = lowercasedName.utf8.withContiguousStorageIfAvailable { wanted in
            for field in fields where field.hasName(lowercasedBytes: wanted) { found.append(field.value) }
        }
        if scanned == nil {
            for field in fields where field.hasName(lowercasedName) { found.append(field.value) }
        }
        return found
    }

    /// The values of `lowercasedName` joined with `separator`, nil when absent.
    public func joinedValue(of lowercasedName: String, separator: String = ", ") -> String? {
        let found = values(of: lowercasedName)
        guard !found.isEmpty else { return nil }
        return found.map { String(httpBytes: $0) }.joined(separator: separator)
    }

    /// Content codings in the order applied (`Content-Encoding` values split at commas,
    /// trimmed, empty ones dropped).
    public var contentCodings: [String] {
        // One pass over each value's bytes (asked per body and per estimate): no array of
        // pieces, copies of them or filtered copy of the list.
        var codings: [String] = []
        for value in values(of: "content-encoding") {
            var start = value.startIndex
            while start <= value.endIndex {
                let end = value[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
                let coding = trimmed(value[start..<end])
                if !coding.isEmpty { codings.append(String(httpBytes: coding)) }
                start = end + 1
            }
        }
        return codings
    }

    /// How the body is delimited by RFC 9112 §6.3; `requestMethod` is, for a response, the
    /// method of the request it answers.
    public func bodyFraming(requestMethod: String?) -> BodyFraming {
        Framing.decide(for: self, requestMethod: requestMethod).framing
    }

    /// The Content-Length value when it is one whole number (or a list of identical ones).
    public var declaredContentLength: Int64? {
        if case let .valid(length) = Framing.parseContentLength(in: fields) { return length }
        return nil
    }

    /// The Host value as sent, else the authority of an absolute-form target.
    public var requestHost: String? {
        // The first Host field, without the array of every one that `values(of:)` makes.
        let host: [UInt8]? = Framing.withBytes("host") { name in
            for field in fields where field.hasName(lowercasedBytes: name) { return field.value }
            return nil
        }
        if let host { return String(httpBytes: host) }
        return RequestTarget(target).authority
    }
}

/// The byte lowercased if it is an ASCII capital: header names compare this way.
@inlinable @inline(__always) public func asciiLower(_ byte: UInt8) -> UInt8 {
    byte >= 65 && byte <= 90 ? byte | 0x20 : byte
}

extension String {
    /// Text as Foundation would hold header bytes: UTF-8 when valid, else ISO-8859-1.
    public init(httpBytes bytes: [UInt8]) {
        self.init(httpBytes: bytes[...])
    }

    public init(httpBytes bytes: ArraySlice<UInt8>) {
        // ASCII (nearly every header byte) is valid UTF-8 as it is: no validation pass.
        if !bytes.contains(where: { $0 >= 0x80 }) {
            self = String(decoding: bytes, as: UTF8.self)
        } else if let text = String(validating: bytes, as: UTF8.self) {
            self = text
        } else {
            self = String(bytes.map { Character(Unicode.Scalar($0)) })
        }
    }
}

/// A request-target split as docs/METERING.md §6 wants it. The parts are slices of the
/// target (once per record: no copies); the authority's text is made only when asked for.
public struct RequestTarget: Sendable {
    /// The bytes of an absolute-form target's authority (`http://host:port/...`), nil otherwise.
    public var authorityBytes: ArraySlice<UInt8>?
    /// The path part (absolute-form: after the authority).
    public var path: ArraySlice<UInt8>
    /// What follows the first `?`; nil when there is no `?`.
    public var query: ArraySlice<UInt8>?

    /// Authority of an absolute-form target, as text; nil otherwise.
    public var authority: String? { authorityBytes.map { String(httpBytes: $0) } }
}

// The public init is in an extension, so that the memberwise one exists: building the split
// through it moves the slices in, where an init of its own copied its `self` out whole.
extension RequestTarget {
    public init(_ target: [UInt8]) {
        // Where the parts start and end, found on the bytes in place (twice per request
        // record: the estimator's request line and the record's endpoint); then one slice each.
        let (authority, pathStart, question) = target.withUnsafeBufferPointer { bytes -> (Range<Int>?, Int, Int?) in
            var authority: Range<Int>?
            var pathStart = 0
            if let schemeEnd = Self.schemeSeparator(in: bytes) {
                var end = schemeEnd + 3
                while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?") { end += 1 }
                authority = (schemeEnd + 3)..<end
                pathStart = end
            }
            var question = pathStart
            while question < bytes.count, bytes[question] != UInt8(ascii: "?") { question += 1 }
            return (authority, pathStart, question < bytes.count ? question : nil)
        }
        if let question {
            self.init(
                authorityBytes: authority.map { target[$0] }, path: target[pathStart..<question],
                query: target[(question + 1)...])
        } else {
            self.init(authorityBytes: authority.map { target[$0] }, path: target[pathStart...], query: nil)
        }
    }

    private static func schemeSeparator(in target: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = target.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "*") else { return nil }
        var i = 0
        while i + 2 < target.count {
            let c = target[i]
            if c == UInt8(ascii: ":") {
                return target[i + 1] == UInt8(ascii: "/") && target[i + 2] == UInt8(ascii: "/") ? i : nil
            }
            let isSchemeChar =
                (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57)
                || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
            if !isSchemeChar { return nil }
            i += 1
        }
        return nil
    }
}
