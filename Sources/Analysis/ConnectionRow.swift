import CaptureIO
import MessageModel

/// What one TCP connection carried (a row of `connections.csv`, docs/METERING.md §6): its
/// protocol, what its TLS handshake said, whether it was decrypted, and its bytes per
/// direction, as TCP payload and as TLS records.
public struct ConnectionRow: Sendable, Equatable {
    /// What the connection was read as.
    public enum Content: String, Sendable {
        /// HTTP/1.x messages, in cleartext or decrypted from TLS.
        case http1
        /// HTTP/2 (docs/METERING.md §2a): h2c (preface or Upgrade) or decrypted TLS whose ALPN
        /// (or connection preface) says so.
        case h2
        /// TLS that could not be decrypted (the reason is in `decrypted`).
        case tlsUndecrypted = "tls-undecrypted"
        /// Neither an HTTP/1.x message nor TLS was found.
        case other
    }

    public var input: String
    public var connection: Int
    public var client: String
    public var server: String
    public var protocolKind: Content
    /// The host of the `CONNECT` whose tunnel this is (empty for a TCP connection of its own).
    public var tunnelHost: String = ""
    /// TLS only; empty otherwise.
    public var serverName: String = ""
    public var alpn: String = ""
    public var tlsVersion: String = ""
    public var cipherSuite: String = ""
    /// `yes`, or the reason it was not decrypted; empty without TLS.
    public var decrypted: String = ""
    /// HTTP records the connection produced.
    public var records = 0
    /// TCP payload bytes (sequence space, gaps included) sent by the client and by the server;
    /// for a tunnel, the tunnel's bytes.
    public var clientTCPBytes = 0
    public var serverTCPBytes = 0
    /// Bytes of TLS records (5-byte headers included) each side sent; 0 without TLS.
    public var clientTLSBytes = 0
    public var serverTLSBytes = 0
    /// Bytes of each side's handshake, alert and change_cipher_spec records (the records that
    /// carry no application data); 0 without TLS.
    public var clientTLSControlBytes = 0
    public var serverTLSControlBytes = 0
    /// HTTP/2 only: the frames no message owns, per direction and type.
    public var http2: HTTP2Overhead?
    /// What each direction cost at every layer of docs/METERING.md §2c, and the part of it that
    /// no message owns.
    public var clientCost = DirectionCost()
    public var serverCost = DirectionCost()

    public init(input: String, connection: Int, client: String, server: String, protocolKind: Content) {
        self.input = input
        self.connection = connection
        self.client = client
        self.server = server
        self.protocolKind = protocolKind
    }
}

/// Frames of one type and their bytes, 9-byte headers included.
public struct FrameTypeCount: Sendable, Equatable, Codable {
    public var frames: Int
    public var bytes: Int

    public init(frames: Int, bytes: Int) {
        self.frames = frames
        self.bytes = bytes
    }

    mutating func add(_ other: FrameTypeCount) {
        frames = saturatingSum(frames, other.frames)
        bytes = saturatingSum(bytes, other.bytes)
    }
}

/// An HTTP/2 connection's overhead: the preface and the frames no message owns (SETTINGS,
/// PING, GOAWAY, WINDOW_UPDATE, PRIORITY, RST_STREAM, unknown types), per direction, keyed by
/// frame type name (docs/METERING.md §2a).
public struct HTTP2Overhead: Sendable, Equatable, Codable {
    public var client: [String: FrameTypeCount]
    public var server: [String: FrameTypeCount]
    /// Frame-size, protocol and HPACK errors found reading each direction.
    public var clientErrors: Int
    public var serverErrors: Int
    public var streams: Int

    public init(
        client: [String: FrameTypeCount], server: [String: FrameTypeCount], clientErrors: Int, serverErrors: Int,
        streams: Int
    ) {
        self.client = client
        self.server = server
        self.clientErrors = clientErrors
        self.serverErrors = serverErrors
        self.streams = streams
    }

    public var clientBytes: Int { client.values.reduce(0) { $0 + $1.bytes } }
    public var serverBytes: Int { server.values.reduce(0) { $0 + $1.bytes } }
}

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

    public mutating func add(_ other: LayerBytes) {
        tls = saturatingSum(tls, other.tls)
        tcp = saturatingSum(tcp, other.tcp)
        ip = saturatingSum(ip, other.ip)
        frame = saturatingSum(frame, other.frame)
    }
}

/// What one direction of a connection carried (docs/METERING.md §2c): the whole, and the
/// overhead no message owns, by kind (`OverheadKind.allKinds`). `total` = the direction's
/// records' layers + `overhead`.
public struct DirectionCost: Sendable, Equatable, Codable {
    /// Every packet the direction sent.
    public var total = LayerBytes()
    /// Packets without payload: SYN, SYN/ACK, pure ACKs, FIN, RST.
    public var emptyPackets = LayerBytes()
    /// TLS handshake, alert and change_cipher_spec records, TLS 1.3 post-handshake messages,
    /// and the headers of the packets they begin.
    public var tlsControl = LayerBytes()
    /// HTTP/2's preface and control frames (and their share of TLS records and packets).
    public var http2Control = LayerBytes()
    /// Bytes no message claims: tunnels, unparsed protocols, bytes between messages.
    public var unclaimed = LayerBytes()
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

    public init() {}

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
        for kind in OverheadKind.allKinds {
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
        for kind in OverheadKind.allKinds {
            try container.encode(self[kind], forKey: Key(stringValue: kind.name))
        }
        try container.encode(emptyPacketCount, forKey: .emptyPacketCount)
        try container.encode(retransmittedSegments, forKey: .retransmittedSegments)
        try container.encode(retransmittedBytes, forKey: .retransmittedBytes)
        try container.encode(lateCopies, forKey: .lateCopies)
        try container.encode(forcedPackets, forKey: .forcedPackets)
    }

    /// The part of `total` no message owns: every overhead kind's bytes.
    public var overhead: LayerBytes {
        var sum = LayerBytes()
        for kind in OverheadKind.allKinds { sum.add(self[kind]) }
        return sum
    }
}

extension Int {
    /// `self = saturatingSum(self, other)`, in place (through a dictionary's `default:` subscript,
    /// one lookup instead of a read and a write).
    mutating func addSaturating(_ other: Int) {
        self = saturatingSum(self, other)
    }
}
