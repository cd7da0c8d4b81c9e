import CaptureIO

/// One direction's bytes at each cost layer (docs/METERING.md §2c).
public struct LayerBytes: Sendable, Equatable, Codable {
    /// Bytes of TLS records, 5-byte headers included (0 without TLS).
    public var tls = 0
    /// TCP payload bytes, retransmitted bytes counted again.
    public var tcp = 0
    /// `tcp` plus IP and TCP headers.
    public var ip = 0
    /// Original frame lengths, link layer included.
    public var frame = 0

    public init(tls: Int = 0, tcp: Int = 0, ip: Int = 0, frame: Int = 0) {
        self.tls = tls
        self.tcp = tcp
        self.ip = ip
        self.frame = frame
    }

    /// These bytes without `part`, a share of them (QUIC's share of a kind of overhead).
    public func minus(_ part: LayerBytes) -> LayerBytes {
        var rest = LayerBytes()
        (rest.tls, rest.tcp) = (tls &- part.tls, tcp &- part.tcp)
        (rest.ip, rest.frame) = (ip &- part.ip, frame &- part.frame)
        return rest
    }

    public mutating func add(_ other: LayerBytes) {
        tls = saturatingSum(tls, other.tls)
        tcp = saturatingSum(tcp, other.tcp)
        ip = saturatingSum(ip, other.ip)
        frame = saturatingSum(frame, other.frame)
    }
}

/// The bytes of every overhead kind of one direction, inline (`OverheadKind.capacity` of them,
/// found by the kind's index): a packet's charge is one switch, no array and no dictionary.
public struct OverheadFigures: Sendable, Equatable {
    private var k0 = LayerBytes(), k1 = LayerBytes(), k2 = LayerBytes(), k3 = LayerBytes()
    private var k4 = LayerBytes(), k5 = LayerBytes(), k6 = LayerBytes(), k7 = LayerBytes()
    private var k8 = LayerBytes(), k9 = LayerBytes(), k10 = LayerBytes(), k11 = LayerBytes()

    public init() {}

    public subscript(kind: OverheadKind) -> LayerBytes {
        @inline(__always) get {
            switch kind.index {
            case 0: return k0
            case 1: return k1
            case 2: return k2
            case 3: return k3
            case 4: return k4
            case 5: return k5
            case 6: return k6
            case 7: return k7
            case 8: return k8
            case 9: return k9
            case 10: return k10
            default: return k11
            }
        }
        @inline(__always) _modify {
            switch kind.index {
            case 0: yield &k0
            case 1: yield &k1
            case 2: yield &k2
            case 3: yield &k3
            case 4: yield &k4
            case 5: yield &k5
            case 6: yield &k6
            case 7: yield &k7
            case 8: yield &k8
            case 9: yield &k9
            case 10: yield &k10
            default: yield &k11
            }
        }
    }

    /// Σ over every kind (unregistered ones hold zeros).
    public var sum: LayerBytes {
        var sum = LayerBytes()
        for index in 0..<OverheadKind.capacity { sum.add(self[OverheadKind(index: UInt8(index))]) }
        return sum
    }

    public mutating func add(_ other: OverheadFigures) {
        for index in 0..<OverheadKind.capacity {
            let kind = OverheadKind(index: UInt8(index))
            self[kind].add(other[kind])
        }
    }
}

/// What one direction of a connection carried (docs/METERING.md §2c): the whole, and the
/// overhead no message owns, by kind (`OverheadKind.all`). `total` = the direction's records'
/// layers + `overhead`.
public struct DirectionCost: Sendable, Equatable, Codable {
    /// Every packet the direction sent.
    public var total = LayerBytes()
    /// The bytes of each overhead kind.
    public var kinds = OverheadFigures()
    /// Packets without payload (`emptyPackets`'s count).
    public var emptyPacketCount = 0
    /// Segments and TCP payload bytes sent again, in messages and in overhead alike; the segments
    /// include a SYN or FIN without payload sent again (the sender's kernel counts those too).
    public var retransmittedSegments = 0
    public var retransmittedBytes = 0
    /// Copies that came after their message's record had taken its figures (past the peer's
    /// ACK, or a bound of `Limits`): charged to `unclaimed`, counted here.
    public var lateCopies = 0
    /// Packets charged before the owner of their bytes was known (the waiting queue was full):
    /// their unplaced bytes went to `unclaimed`.
    public var forcedPackets = 0
    /// Over QUIC (docs/METERING.md §2d): the direction's UDP bytes (payload + 8 per datagram),
    /// and those of its overhead (Σ over the kinds). 0 over TCP; in no output of their own
    /// (connections.csv's kinds print IP and frame bytes), so not encoded.
    public var udp = 0
    public var overheadUDP = 0

    public init() {}

    /// The bytes of one overhead kind.
    public subscript(kind: OverheadKind) -> LayerBytes {
        @inline(__always) get { kinds[kind] }
        @inline(__always) _modify { yield &kinds[kind] }
    }

    /// The part of `total` no message owns: every overhead kind's bytes.
    public var overhead: LayerBytes { kinds.sum }

    /// Adds another direction's bytes, kind by kind.
    public mutating func add(_ other: DirectionCost) {
        total.add(other.total)
        kinds.add(other.kinds)
        emptyPacketCount = saturatingSum(emptyPacketCount, other.emptyPacketCount)
        retransmittedSegments = saturatingSum(retransmittedSegments, other.retransmittedSegments)
        retransmittedBytes = saturatingSum(retransmittedBytes, other.retransmittedBytes)
        lateCopies = saturatingSum(lateCopies, other.lateCopies)
        forcedPackets = saturatingSum(forcedPackets, other.forcedPackets)
        udp = saturatingSum(udp, other.udp)
        overheadUDP = saturatingSum(overheadUDP, other.overheadUDP)
    }

    /// The keys of diagnostics.json: the counts', then each overhead kind's name.
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }

        static let total = Key(stringValue: "total")
        static let emptyPacketCount = Key(stringValue: "empty_packet_count")
        static let retransmittedSegments = Key(stringValue: "retransmitted_segments")
        static let retransmittedBytes = Key(stringValue: "retransmitted_bytes")
        static let lateCopies = Key(stringValue: "late_copies")
        static let forcedPackets = Key(stringValue: "forced_packets")
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        total = try container.decode(LayerBytes.self, forKey: .total)
        for kind in OverheadKind.all {
            self[kind] = try container.decode(LayerBytes.self, forKey: Key(stringValue: kind.name))
        }
        emptyPacketCount = try container.decode(Int.self, forKey: .emptyPacketCount)
        retransmittedSegments = try container.decode(Int.self, forKey: .retransmittedSegments)
        retransmittedBytes = try container.decode(Int.self, forKey: .retransmittedBytes)
        lateCopies = try container.decode(Int.self, forKey: .lateCopies)
        forcedPackets = try container.decode(Int.self, forKey: .forcedPackets)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(total, forKey: .total)
        for kind in OverheadKind.all {
            try container.encode(self[kind], forKey: Key(stringValue: kind.name))
        }
        try container.encode(emptyPacketCount, forKey: .emptyPacketCount)
        try container.encode(retransmittedSegments, forKey: .retransmittedSegments)
        try container.encode(retransmittedBytes, forKey: .retransmittedBytes)
        try container.encode(lateCopies, forKey: .lateCopies)
        try container.encode(forcedPackets, forKey: .forcedPackets)
    }
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
    /// Over QUIC (docs/METERING.md §2d): `tcp` holds the QUIC packet bytes the message owns
    /// (`wire_quic`), and this `wire_udp`: those plus the UDP headers of the datagrams whose
    /// first packet's head it owns. nil over TCP.
    public var udp: Int?

    public init(tcp: Int, ip: Int, frame: Int, retransmitted: Int = 0, packets: Int = 0, lowerBound: Bool = false) {
        self.tcp = tcp
        self.ip = ip
        self.frame = frame
        self.retransmitted = retransmitted
        self.packets = packets
        self.lowerBound = lowerBound
        udp = nil
    }
}
