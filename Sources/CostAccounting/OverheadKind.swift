import CaptureIO

/// A kind of overhead: bytes of a flow that no message owns (docs/METERING.md §2c). The
/// transport's two are built in (`emptyPackets`, `unclaimed`); a protocol registers its own once,
/// where it declares them (TLS: `tls_control`, HTTP/2: `h2_control`), with the name every output
/// prints and the part of "What the network carried" its bytes go to. `OverheadKind.all` is the
/// one list connections.csv's columns, diagnostics.json's and report.json's keys and the network
/// parts of report.md and report.html read, so a kind has one name everywhere.
///
/// One byte: a claim and a ledger's owner stay plain values, and a direction keeps each kind's
/// bytes in inline storage (`OverheadFigures`) found by `index`, never by name.
public struct OverheadKind: Hashable, Sendable {
    /// Where a direction keeps the kind's bytes: the order of registration, not of the outputs.
    public let index: UInt8

    @inlinable init(index: UInt8) { self.index = index }

    /// Kinds a run can hold: the storage of every `DirectionCost` is this wide.
    public static let capacity = 12

    /// Packets without payload: SYN, SYN/ACK, pure ACKs, FIN, RST (first column).
    @inlinable public static var emptyPackets: OverheadKind { OverheadKind(index: 0) }
    /// Bytes no message claims: tunnels, unparsed protocols, bytes between messages (last column).
    @inlinable public static var unclaimed: OverheadKind { OverheadKind(index: 1) }

    /// Which of "What the network carried"'s parts (`NetworkFigures.parts`) the kind's bytes go to.
    public enum Part: Sendable {
        /// "TLS overhead": its TCP payload (its packets' headers go to the header parts); its TLS
        /// bytes get a column of their own in connections.csv (`{direction}_{name}_tls`).
        case tls
        /// "handshakes and ACKs": whole packets without payload, IP and TCP headers included.
        case emptyPackets
        /// "other connection overhead": its TCP payload.
        case other
    }

    /// Registers a kind, or returns the one registered under `name` (registering is idempotent,
    /// so a test may name a kind its protocol registers). `order` places it among the outputs'
    /// columns: the transport's `empty_packets` is 0 and `unclaimed` last; a security layer's
    /// kinds take 100 (TLS), an application protocol's 200 (HTTP/2); ties go by name. Call it
    /// from a `static let`, so that a kind is registered once, before the first run reads `all`.
    public static func register(_ name: String, part: Part, order: Int) -> OverheadKind {
        OverheadKind(index: UInt8(registry.register(Entry(name: name, part: part, order: order), capacity: capacity)))
    }

    /// Every kind registered, in the outputs' order (connections.csv's columns; JSON objects
    /// sort their keys themselves).
    public static var all: [OverheadKind] { registry.orderedIndices().map { OverheadKind(index: UInt8($0)) } }

    /// What every output calls it (snake_case, as CSV columns and JSON keys).
    public var name: String { registry.entry(at: Int(index)).name }
    public var part: Part { registry.entry(at: Int(index)).part }

    struct Entry {
        var name: String
        var part: Part
        var order: Int
    }
}

/// The transport's two kinds are built in: `empty_packets` first, `unclaimed` last.
private let registry = NamedRegistry(
    [
        OverheadKind.Entry(name: "empty_packets", part: .emptyPackets, order: 0),
        OverheadKind.Entry(name: "unclaimed", part: .other, order: .max),
    ], name: \.name, order: \.order)
