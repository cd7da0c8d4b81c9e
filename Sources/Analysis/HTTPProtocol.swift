import MessageModel
import Records

/// Which HTTP a record travelled as (docs/FIGURES.md, Protocols): its own framing on the wire,
/// so the request of an `Upgrade: h2c` exchange is HTTP/1.1 and its response HTTP/2. The
/// message model's `WireProtocol`, read from the facts its producer set.
public typealias HTTPProtocol = WireProtocol

extension WireProtocol {
    /// The `protocol` cell of messages.csv: empty when unknown, as every unknown cell there.
    public var csvValue: String { self == .unknown ? "" : rawValue }

    /// A HAR's `httpVersion` as exporters write it: `HTTP/1.1`, `1.1`, `http/2.0`, `HTTP/2`, `h2`,
    /// `h3`, `h3-29`...; anything else (the empty string included) is unknown.
    public init(harVersion: String) {
        // The spellings exporters write, without lowercasing: this runs several times per record.
        switch harVersion {
        case "HTTP/1.1", "http/1.1": self = .http1; return
        case "http/2.0", "HTTP/2.0", "h2", "HTTP/2": self = .h2; return
        case "h3", "HTTP/3", "http/3": self = .h3; return
        case "": self = .unknown; return
        default: break
        }
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
    var counts = [Int](repeating: 0, count: HTTPProtocol.allCases.count)

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
    /// For a captured record, the protocol its reader set on the message; for a HAR, the
    /// entry's `httpVersion` (docs/FIGURES.md, Protocols).
    public var wireProtocol: HTTPProtocol {
        switch source {
        case .capture: return message.protocolFacts.wireProtocol
        case .har: return HTTPProtocol(harVersion: message.version)
        case .charles: return message.protocolFacts.wireProtocol
        }
    }
}
