import MessageModel

/// Where a record's wire size came from (the `wire_source` column).
public enum WireSource: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// Counted in TCP sequence space from a capture.
    case capture
    /// A HAR's `headersSize + bodySize`.
    case har
    /// Chrome's `_transferSize`, when `headersSize` is unknown.
    case harTransferSize = "har-transfer-size"
    /// Recomputed from the listed fields, for exporters whose sizes are known to be wrong.
    case reconstructed
    /// Not known: the record is unmeasured.
    case unknown
}

/// What one message cost on the wire, as far as it is known: the one size every figure,
/// every cause and every output reads. Nil parts are unknown.
///
/// These are the HTTP message's own bytes. The layers under it (TLS records, TCP and IP
/// headers, link frames) are counted apart: each is one more optional field here, nil
/// where a source cannot tell it, so adding one changes no existing use.
public struct WireSize: Sendable, Equatable {
    /// Start line with its terminator.
    public var line: Int?
    /// Field lines and the empty line that ends the head.
    public var headers: Int?
    /// The body as transmitted, transfer coding included.
    public var body: Int?
    /// The whole message; known alone when a HAR gives only a total.
    public var total: Int?
    public var source: WireSource
    /// `total` plus the overhead of the TLS records that carried the message (docs/METERING.md
    /// §2b: headers, explicit nonces, tags or MACs and padding, TLS 1.3 inner types); equal to
    /// `total` over cleartext TCP; nil where the source cannot tell (HAR).
    public var tls: Int?
    /// The cost layers under TLS (docs/METERING.md §2c); nil where the source cannot tell (HAR).
    public var lower: LowerLayers?

    public init(
        line: Int? = nil, headers: Int? = nil, body: Int? = nil, total: Int? = nil, source: WireSource,
        tls: Int? = nil, lower: LowerLayers? = nil
    ) {
        self.line = line
        self.headers = headers
        self.body = body
        self.total = total
        self.source = source
        self.tls = tls
        self.lower = lower
    }

    /// A captured message's sizes, all counted; `tlsOverhead` is what its TLS records added
    /// (0 over cleartext TCP).
    public init(captured message: CapturedMessage, tlsOverhead: Int = 0) {
        let total = message.wireTotal
        let (withTLS, overflow) = total.addingReportingOverflow(tlsOverhead)
        self.init(
            line: message.wireLine, headers: message.wireHeaders, body: message.wireBody,
            total: total, source: .capture, tls: overflow ? Int.max : withTLS)
    }

    /// The three components, when each is known.
    public var split: ComponentSizes? {
        guard let line, let headers, let body else { return nil }
        return ComponentSizes(line: line, headers: headers, body: body)
    }

    /// True when line, headers and body are each known, so errors split by component.
    public var hasComponents: Bool { split != nil }
}

/// A message's size in the three parts reports compare separately: what was measured of it
/// (`WireSize.split`) or what a meter estimated (`Estimate`).
public struct ComponentSizes: Sendable, Equatable {
    public var line: Int
    public var headers: Int
    public var body: Int

    public init(line: Int, headers: Int, body: Int) {
        self.line = line
        self.headers = headers
        self.body = body
    }

    public var total: Int { line + headers + body }
}

/// What the packets under one message cost (docs/METERING.md §2c): the `wire_tcp`, `wire_ip`
/// and `wire_frame` columns. TCP payload bytes are the message's own (its TLS bytes, and every
/// copy of them sent again); the headers of a packet go to the message that owns its first
/// payload byte.
public struct LowerLayers: Sendable, Equatable {
    /// TCP payload bytes that carried the message, retransmitted bytes counted again.
    public var tcp: Int
    /// `tcp` plus the IP and TCP headers of the packets whose first payload byte it owns.
    public var ip: Int
    /// `ip` plus those packets' link-layer bytes: their original frame lengths.
    public var frame: Int
    /// The part of `tcp` that was sent again (retransmitted copies).
    public var retransmitted: Int
    /// Packets whose first payload byte the message owns.
    public var packets: Int
    /// True when part of the message was never captured (a gap): each layer is a lower bound.
    public var lowerBound: Bool

    public init(tcp: Int, ip: Int, frame: Int, retransmitted: Int = 0, packets: Int = 0, lowerBound: Bool = false) {
        self.tcp = tcp
        self.ip = ip
        self.frame = frame
        self.retransmitted = retransmitted
        self.packets = packets
        self.lowerBound = lowerBound
    }
}
