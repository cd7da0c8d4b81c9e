/// What the protocol that carried a message tells of it beside its head and body. Every protocol
/// sets the same facts, so consumers decide by facts, never by a protocol's name
/// (docs/METERING.md §2a). A small value of stored properties: it travels in every record.
public struct ProtocolFacts: Sendable, Equatable {
    /// The protocol the message travelled as: what outputs print in their `protocol` columns.
    public var wireProtocol: WireProtocol
    /// True when the start line's parts travel as fields of the compressed header block
    /// (HTTP/2's and HTTP/3's pseudo-fields `:status`, `:method`): there is no start line on the
    /// wire, and the line a client library reads back is `{version} {status}`.
    public var startLineInHeaderBlock: Bool
    /// False when the head's fields are unknown: its block depends on compression state the
    /// capture never saw, or it was lost (`hpack-state-unknown`). Method, target, status and
    /// fields are then empty, not the message's. Unknown trailers alone leave the head known.
    public var headFieldsKnown: Bool
    /// Which parts of the head are unknown when `headFieldsKnown` is false: pseudo-fields
    /// (start-line parts) not decoded, and `.fields` when fields whose names are unknown were
    /// left out (docs/METERING.md §2a, partial decoding). Empty when the head is known.
    public var unknownHeadParts: HeadParts = []
    /// The stream the message travelled on, for protocols with streams; nil otherwise.
    public var stream: UInt64?
    /// Frames that carried the message (HTTP/2: HEADERS, CONTINUATION, PUSH_PROMISE and DATA),
    /// for framed protocols; nil otherwise. Header lists are measured where frames are counted.
    public var frames: Int?
    /// Σ over decoded fields, pseudo-fields included, of len(name) + len(value) + 32 (the HPACK
    /// and QPACK entry size, RFC 7541 §4.1); nil when the fields are unknown or not compressed.
    public var headerListSize: Int?

    @inlinable public init(
        _ wireProtocol: WireProtocol = .http1, stream: UInt64? = nil, frames: Int? = nil, headerListSize: Int? = nil,
        startLineInHeaderBlock: Bool = false, headFieldsKnown: Bool = true
    ) {
        self.wireProtocol = wireProtocol
        self.startLineInHeaderBlock = startLineInHeaderBlock
        self.headFieldsKnown = headFieldsKnown
        self.stream = stream
        self.frames = frames
        self.headerListSize = headerListSize
    }
}

/// Parts of a message's head, named as HTTP/2 and HTTP/3 send them: what a head decoded in
/// part lacks (`ProtocolFacts.unknownHeadParts`).
public struct HeadParts: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let method = HeadParts(rawValue: 1 << 0)
    public static let scheme = HeadParts(rawValue: 1 << 1)
    public static let authority = HeadParts(rawValue: 1 << 2)
    public static let path = HeadParts(rawValue: 1 << 3)
    public static let status = HeadParts(rawValue: 1 << 4)
    /// Fields (not pseudo-fields) whose names, and so values, are unknown or were dropped.
    public static let fields = HeadParts(rawValue: 1 << 5)

    /// What a request's endpoint needs: method, authority (with its scheme) and path.
    public static let requestLine: HeadParts = [.method, .scheme, .authority, .path]

    /// Every part of a request's or a response's head.
    public static func all(_ kind: MessageKind) -> HeadParts {
        kind == .request ? [.method, .scheme, .authority, .path, .fields] : [.status, .fields]
    }

    /// Names in outputs, in a fixed order.
    public static let names: [(HeadParts, String)] = [
        (.method, ":method"), (.scheme, ":scheme"), (.authority, ":authority"), (.path, ":path"),
        (.status, ":status"), (.fields, "fields"),
    ]

    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }
}

/// A protocol messages travel as, by the name outputs print: messages.csv's `protocol`,
/// endpoints.csv, report.json ("http1", "h2"), and report.md's and report.html's label. One
/// byte: a message carries no text. The values are the registry of names outputs know, in
/// the reports' order; a new protocol adds its row here (name, label) and sets its value on
/// the messages it makes. HTTP/3 is listed because a HAR can name it.
public struct WireProtocol: Hashable, Comparable, Sendable {
    /// The place in `allCases`: the reports' order.
    public let order: Int

    @inlinable init(order: Int) { self.order = order }

    @inlinable public static var http1: WireProtocol { WireProtocol(order: 0) }
    @inlinable public static var h2: WireProtocol { WireProtocol(order: 1) }
    @inlinable public static var h3: WireProtocol { WireProtocol(order: 2) }
    /// A HAR entry that names no version, or one not listed here.
    @inlinable public static var unknown: WireProtocol { WireProtocol(order: 3) }

    public static let allCases: [WireProtocol] = (0..<4).map { WireProtocol(order: $0) }

    /// The name outputs print.
    public var rawValue: String {
        switch order {
        case 0: return "http1"
        case 1: return "h2"
        case 2: return "h3"
        default: return "unknown"
        }
    }

    /// How report.md and report.html name it.
    public var label: String {
        switch order {
        case 0: return "HTTP/1.x"
        case 1: return "HTTP/2"
        case 2: return "HTTP/3"
        default: return "unknown"
        }
    }

    @inlinable public static func < (a: WireProtocol, b: WireProtocol) -> Bool { a.order < b.order }
}

extension WireProtocol: CustomStringConvertible {
    public var description: String { rawValue }
}
