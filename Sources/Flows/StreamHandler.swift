import PacketLayers

/// Which way bytes travel on a flow: THE one "which way" type of every layer (TCP, TLS, the
/// messages' parsers, the cost ledger and the reports). `up` is from the client, `down` from the
/// server, as far as the transport can tell: over TCP, up is from the initiator, which sent the
/// SYN when the handshake was captured and is otherwise a guess (the sender of the first captured
/// packet) that a protocol may overrule from content. A message's role (request, response) is
/// not its direction: a pushed request travels down.
public enum Direction: Int, Sendable, CaseIterable, Comparable, Hashable {
    case up = 0
    case down = 1

    public var peer: Direction { self == .up ? .down : .up }

    /// How outputs name it (report.md, report.json, report.html): "up", "down".
    public var name: String { self == .up ? "up" : "down" }

    @inlinable public static func < (a: Direction, b: Direction) -> Bool { a.rawValue < b.rawValue }
}

/// What the transport knows of a flow (a TCP connection, later a UDP flow) when it first sees it.
public struct ConnectionInfo: Sendable {
    /// The transport a flow runs on.
    public enum Transport: UInt8, Sendable {
        /// A byte stream per direction (ByteStreamHandler), reassembled by TCPReassembly.
        case tcp
        /// Datagrams (DatagramHandler); QUIC's streams are byte streams inside them.
        case udp
    }

    /// 0-based number of the connection in the order of its first packet within the file.
    public var number: Int
    /// What carries the flow's bytes.
    public var transport: Transport
    public var initiator: TransportEndpoint
    public var responder: TransportEndpoint
    /// True when the SYN (or SYN-ACK) was captured, so `initiator` is surely the client.
    public var sawHandshake: Bool
    /// Capture time of the connection's first packet (ns since the epoch).
    public var firstPacketTime: Int64

    public init(
        number: Int, initiator: TransportEndpoint, responder: TransportEndpoint,
        sawHandshake: Bool, firstPacketTime: Int64, transport: Transport = .tcp
    ) {
        self.number = number
        self.transport = transport
        self.initiator = initiator
        self.responder = responder
        self.sawHandshake = sawHandshake
        self.firstPacketTime = firstPacketTime
    }

    public func endpoint(_ side: Direction) -> TransportEndpoint {
        side == .up ? initiator : responder
    }
}

/// Where a delivered run of bytes sits.
public struct StreamPosition: Sendable {
    /// Capture time of the packet that carried the first byte.
    public var time: Int64
    /// Offset of the first byte in this side's stream (0 = first byte after the SYN, or
    /// the first captured byte when the connection was joined mid-way).
    public var offset: Int64
    /// How far the sender had acknowledged the peer's stream, as a peer-stream offset, when
    /// this packet was sent; nil when unknown. A response cannot answer a request that starts
    /// at or after this offset.
    public var peerAcknowledged: Int64?

    public init(time: Int64, offset: Int64, peerAcknowledged: Int64?) {
        self.time = time
        self.offset = offset
        self.peerAcknowledged = peerAcknowledged
    }
}

/// Why one side's stream ended.
public enum StreamEndReason: String, Sendable {
    /// The side sent FIN and every byte before it was delivered.
    case fin
    /// A RST ended the connection.
    case reset
    /// No packet for the idle timeout (capture time).
    case idle
    /// The capture ended with the connection open.
    case endOfCapture = "end-of-capture"
    /// A new SYN reused the 4-tuple.
    case portReuse = "port-reuse"
}

/// What one captured packet of a connection cost (docs/METERING.md §2c), handed up for every
/// packet, payload or not, in capture order: retransmissions and out-of-order copies too.
public struct PacketCost: Sendable, Equatable {
    /// Capture time (ns since the epoch).
    public var time: Int64
    /// Stream offset of the first payload byte (meaningless without payload).
    public var offset: Int64
    /// TCP payload length as sent (snaplen cuts do not shorten it).
    public var payloadLength: Int
    /// IP and TCP header bytes: the IP length minus the payload.
    public var headerBytes: Int
    /// Link-layer bytes: the original frame length minus the IP length.
    public var linkBytes: Int
    /// Payload bytes, at the front of the payload, that repeat bytes already seen.
    public var repeatedBytes: Int
    /// A SYN or FIN without payload that repeats one its sender already sent.
    public var repeatsControl: Bool
    /// How far this packet acknowledges the peer's stream (a peer-stream offset), when known.
    public var acknowledged: Int64?

    public init(
        time: Int64, offset: Int64, payloadLength: Int, headerBytes: Int, linkBytes: Int, repeatedBytes: Int = 0,
        repeatsControl: Bool = false, acknowledged: Int64? = nil
    ) {
        self.repeatsControl = repeatsControl
        self.time = time
        self.offset = offset
        self.payloadLength = payloadLength
        self.headerBytes = headerBytes
        self.linkBytes = linkBytes
        self.repeatedBytes = repeatedBytes
        self.acknowledged = acknowledged
    }

    /// The stream offset just past the payload.
    public var end: Int64 { offset &+ Int64(payloadLength) }
}

/// Receives one flow's ordered bytes, whoever orders them: TCP's reassembly, TLS's decrypted
/// records (offsets in plaintext), a tunnel inside another stream, later each QUIC stream.
/// Calls for one side come in stream order; the two sides interleave in capture order.
public protocol ByteStreamHandler: AnyObject {
    /// In-order bytes from `side`. `bytes` is borrowed: valid only during the call.
    func receive(_ bytes: UnsafeRawBufferPointer, from side: Direction, at position: StreamPosition)
    /// `length` bytes of `side`'s stream are missing from the capture at `position`.
    func gap(_ length: Int, from side: Direction, at position: StreamPosition)
    /// `side` will send nothing more.
    func end(of side: Direction, reason: StreamEndReason, time: Int64)
    /// The connection is over; both sides have ended. Last call the handler gets.
    func close(_ accounting: ConnectionAccounting)
    /// What a packet from `side` cost; comes after the packet's bytes were delivered (or
    /// buffered, or found to repeat), so the bytes it carried are usually placed already.
    func packet(_ cost: PacketCost, from side: Direction)
}

extension ByteStreamHandler {
    /// Handlers that do not count costs ignore them.
    public func packet(_ cost: PacketCost, from side: Direction) {}
}

/// Makes a handler for each new connection.
public protocol ByteStreamHandlerFactory: AnyObject {
    func makeHandler(for connection: ConnectionInfo) -> ByteStreamHandler
}

/// Receives one UDP flow's datagrams, in capture order, as the entry point of a protocol over
/// UDP (QUIC: packets, then its streams' bytes to a `ByteStreamHandler` each). Declared for the
/// flows to come; no UDP is decoded yet.
public protocol DatagramHandler: AnyObject {
    /// One datagram's payload from `direction`, borrowed for the call; `time` its capture time.
    /// `cost` tells what the datagram took on the wire (its payload is `offset` 0 of its own).
    func datagram(_ payload: UnsafeRawBufferPointer, from direction: Direction, time: Int64, cost: PacketCost)
    /// The flow is over (idle, or the capture ended). Last call the handler gets.
    func close(_ accounting: ConnectionAccounting)
}

/// Makes a handler for each new UDP flow; nil leaves the flow's datagrams uncounted by any protocol.
public protocol DatagramHandlerFactory: AnyObject {
    func makeHandler(for flow: ConnectionInfo) -> DatagramHandler?
}

/// Receives the streams of a multiplexed transport (QUIC): each stream's ordered bytes with its
/// id, as `ByteStreamHandler` does for a single stream. The application protocol (HTTP/3)
/// implements it; the transport (QUIC) decrypts, orders and feeds it. Calls for one
/// (stream, side) come in stream order; streams and sides interleave in capture order.
/// `position.offset` is the offset in that stream.
public protocol MultiplexedStreamHandler: AnyObject {
    /// In-order bytes of `stream` from `side`, borrowed for the call.
    func receive(_ bytes: UnsafeRawBufferPointer, stream: UInt64, from side: Direction, at position: StreamPosition)
    /// `length` bytes of `stream` from `side` are missing from the capture at `position`.
    func gap(_ length: Int, stream: UInt64, from side: Direction, at position: StreamPosition)
    /// `side` will send nothing more on `stream`: its FIN was delivered (`.fin`) or it was
    /// reset (`.reset`, RESET_STREAM).
    func end(stream: UInt64, of side: Direction, reason: StreamEndReason, time: Int64)
    /// The connection is over. Last call the handler gets.
    func close(_ accounting: ConnectionAccounting)
}
