/// What one side of a connection cost below the HTTP layer.
public struct SideAccounting: Sendable, Equatable {
    /// Packets sent by this side.
    public var packets = 0
    /// Frame bytes as on the wire (original lengths, not captured lengths).
    public var frameBytes = 0
    /// IP datagram bytes (headers included).
    public var ipBytes = 0
    /// TCP payload bytes, retransmissions included.
    public var payloadBytes = 0
    /// Payload bytes that repeated bytes already seen.
    public var retransmittedBytes = 0
    /// Packets without payload: handshake, teardown, pure ACKs.
    public var controlPackets = 0
    /// Holes in the stream that the capture does not hold.
    public var gaps = 0
    /// Bytes in those holes.
    public var gapBytes = 0
    /// Payload bytes that snaplen cut from captured packets (known length, unknown content).
    public var truncatedBytes = 0
    /// Segments that arrived ahead of a hole and were buffered.
    public var outOfOrderSegments = 0

    public init() {}
}

/// Both sides of a connection, and how it ended.
public struct ConnectionAccounting: Sendable {
    public var info: ConnectionInfo
    public var initiator = SideAccounting()
    public var responder = SideAccounting()
    /// Capture time of the last packet.
    public var lastPacketTime: Int64
    /// How the stream of each side ended (nil until it did).
    public var initiatorEnd: StreamEndReason?
    public var responderEnd: StreamEndReason?
    /// RSTs that did not end the connection because its sender went on afterwards (new data
    /// or a new acknowledgment): forged, or not taken by the endpoint. An anomaly.
    public var ignoredResets = 0

    public init(info: ConnectionInfo) {
        self.info = info
        self.lastPacketTime = info.firstPacketTime
    }

    public subscript(side: Direction) -> SideAccounting {
        get { side == .up ? initiator : responder }
        set { if side == .up { initiator = newValue } else { responder = newValue } }
        // In place: `accounting[side].packets += 1` must not copy the side's figures out and back.
        _modify {
            if side == .up { yield &initiator } else { yield &responder }
        }
    }
}
