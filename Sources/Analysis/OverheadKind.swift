import MessageModel

/// A kind of connection overhead: bytes of a connection that no message owns (docs/METERING.md
/// §2c). `allKinds` is the one list of them: connections.csv's columns, diagnostics.json's and
/// report.json's `overhead` keys, and the parts of "What the network carried" all read it, so a
/// kind has one name in every output. A protocol with overhead of its own adds a `DirectionCost`
/// field and registers it here.
public struct OverheadKind: @unchecked Sendable {
    // @unchecked: a key path is an immutable value that Swift does not mark Sendable.

    /// Which of "What the network carried"'s parts (`NetworkFigures.parts`) the kind's bytes go to.
    public enum Part: Sendable {
        /// "TLS overhead": its TCP payload (its packets' headers go to the header parts).
        case tls
        /// "handshakes and ACKs": whole packets without payload, IP and TCP headers included.
        case emptyPackets
        /// "other connection overhead": its TCP payload.
        case other
    }

    /// What every output calls it (snake_case, as CSV columns and JSON keys).
    public let name: String
    public let part: Part
    /// Where a direction keeps the kind's bytes.
    public let bytes: WritableKeyPath<DirectionCost, LayerBytes>

    public init(name: String, part: Part, bytes: WritableKeyPath<DirectionCost, LayerBytes>) {
        self.name = name
        self.part = part
        self.bytes = bytes
    }

    public static let emptyPackets = OverheadKind(name: "empty_packets", part: .emptyPackets, bytes: \.emptyPackets)
    public static let tlsControl = OverheadKind(name: "tls_control", part: .tls, bytes: \.tlsControl)
    public static let h2Control = OverheadKind(name: "h2_control", part: .other, bytes: \.http2Control)
    public static let unclaimed = OverheadKind(name: "unclaimed", part: .other, bytes: \.unclaimed)

    /// Every kind, in connections.csv's column order (JSON objects sort their keys themselves).
    public static let allKinds: [OverheadKind] = [emptyPackets, tlsControl, h2Control, unclaimed]
}

extension DirectionCost {
    /// The bytes of one overhead kind.
    public subscript(kind: OverheadKind) -> LayerBytes {
        get { self[keyPath: kind.bytes] }
        set { self[keyPath: kind.bytes] = newValue }
    }
}
