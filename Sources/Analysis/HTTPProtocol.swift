import Records

/// Which HTTP a record travelled as (docs/FIGURES.md, Protocols): its own framing on the wire,
/// so the request of an `Upgrade: h2c` exchange is HTTP/1.1 and its response HTTP/2.
public enum HTTPProtocol: String, Sendable, CaseIterable, Comparable {
    case http1, h2, h3
    /// A HAR entry that names no version, or one not listed here.
    case unknown

    /// The `protocol` cell of messages.csv: empty when unknown, as every unknown cell there.
    public var csvValue: String { self == .unknown ? "" : rawValue }

    /// The protocol's place in `allCases`, by a switch: `allCases` builds an array on every
    /// call, and this runs for every record in every group it joins.
    var order: Int {
        switch self {
        case .http1: return 0
        case .h2: return 1
        case .h3: return 2
        case .unknown: return 3
        }
    }

    /// How report.md and report.html name it.
    public var label: String {
        switch self {
        case .http1: return "HTTP/1.x"
        case .h2: return "HTTP/2"
        case .h3: return "HTTP/3"
        case .unknown: return "unknown"
        }
    }

    /// The case, not its name's text, is hashed (protocols key tables looked up per record).
    public func hash(into hasher: inout Hasher) { hasher.combine(order) }

    public static func < (a: HTTPProtocol, b: HTTPProtocol) -> Bool {
        a.order < b.order
    }

    /// A HAR's `httpVersion` as exporters write it: `HTTP/1.1`, `1.1`, `http/2.0`, `HTTP/2`, `h2`,
    /// `h3`, `h3-29`...; anything else (the empty string included) is unknown.
    public init(harVersion: String) {
        var text = Substring(harVersion.lowercased())
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        if text.hasPrefix("http/") { text = text.dropFirst(5) }
        switch text {
        case "0.9", "1", "1.0", "1.1": self = .http1
        case "2", "2.0", "h2", "h2c": self = .h2
        case "3", "3.0", "h3": self = .h3
        default: self = text.hasPrefix("h3-") ? .h3 : .unknown // h3 drafts: h3-29
        }
    }

    /// The protocols present, in this type's order, joined by `+`; the unknown left out, so
    /// empty when none is known (endpoints.csv's `protocol` column).
    public static func joined(_ counts: ProtocolCounts) -> String {
        allCases.filter { $0 != .unknown && counts[$0] > 0 }.map(\.rawValue).joined(separator: "+")
    }
}

/// Records per protocol.
public struct ProtocolCounts: Sendable, Equatable {
    private var counts = [Int](repeating: 0, count: HTTPProtocol.allCases.count)

    public init() {}

    public subscript(_ wireProtocol: HTTPProtocol) -> Int {
        get { counts[Self.index(wireProtocol)] }
        set { counts[Self.index(wireProtocol)] = newValue }
    }

    /// The protocols with at least one record, in protocol order.
    public var present: [(wireProtocol: HTTPProtocol, records: Int)] {
        HTTPProtocol.allCases.filter { self[$0] > 0 }.map { (wireProtocol: $0, records: self[$0]) }
    }

    mutating func merge(_ other: ProtocolCounts) {
        for index in counts.indices { counts[index] += other.counts[index] }
    }

    private static func index(_ wireProtocol: HTTPProtocol) -> Int { wireProtocol.order }
}

extension MessageRecord {
    /// HTTP/2 when the HTTP/2 reader made the record; HTTP/1.x for every other captured record;
    /// for a HAR, the entry's `httpVersion` (docs/FIGURES.md, Protocols).
    public var wireProtocol: HTTPProtocol {
        if message.http2 != nil { return .h2 }
        switch source {
        case .capture: return .http1
        case .har: return HTTPProtocol(harVersion: message.version)
        }
    }
}
