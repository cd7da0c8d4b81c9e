/// TCP header flags.
public struct TCPFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let fin = TCPFlags(rawValue: 0x01)
    public static let syn = TCPFlags(rawValue: 0x02)
    public static let rst = TCPFlags(rawValue: 0x04)
    public static let psh = TCPFlags(rawValue: 0x08)
    public static let ack = TCPFlags(rawValue: 0x10)
    public static let urg = TCPFlags(rawValue: 0x20)
    public static let ece = TCPFlags(rawValue: 0x40)
    public static let cwr = TCPFlags(rawValue: 0x80)
}

/// A decoded TCP segment. `payload` is borrowed from the frame (or from the decoder's
/// reassembled IPv4 datagram): valid until the next `decode` call; copy what must be kept.
public struct TCPSegment {
    public var source: TransportEndpoint
    public var destination: TransportEndpoint
    public var sequence: UInt32
    public var acknowledgment: UInt32
    public var flags: TCPFlags
    public var window: UInt16
    /// The payload bytes that were captured (borrowed, see above).
    public var payload: UnsafeRawBufferPointer
    /// The payload length as sent, from the IP length; larger than `payload.count` when
    /// snaplen cut the frame. Sequence space advances by this much.
    public var payloadLength: Int
    /// The frame's original length on the wire (for a reassembled IPv4 datagram: the sum of its fragments' frames).
    public var frameLength: Int
    /// The IP datagram's total length, header included.
    public var ipLength: Int
    /// Capture time in nanoseconds since the epoch.
    public var timestamp: Int64
    /// The frame number in its file (the last fragment's, for a reassembled datagram).
    public var frameNumber: Int

    public init(
        source: TransportEndpoint, destination: TransportEndpoint, sequence: UInt32,
        acknowledgment: UInt32, flags: TCPFlags, window: UInt16,
        payload: UnsafeRawBufferPointer, payloadLength: Int, frameLength: Int,
        ipLength: Int, timestamp: Int64, frameNumber: Int
    ) {
        self.source = source
        self.destination = destination
        self.sequence = sequence
        self.acknowledgment = acknowledgment
        self.flags = flags
        self.window = window
        self.payload = payload
        self.payloadLength = payloadLength
        self.frameLength = frameLength
        self.ipLength = ipLength
        self.timestamp = timestamp
        self.frameNumber = frameNumber
    }
}

/// A decoded UDP datagram. `payload` is borrowed like a `TCPSegment`'s: valid until the next
/// `decode` call. A datagram carried in a tunnel (VXLAN, Teredo) is the inner one: its
/// `frameLength` is the outer frame's, so the tunnel's headers count as link bytes.
public struct UDPDatagram {
    public var source: TransportEndpoint
    public var destination: TransportEndpoint
    /// The payload bytes that were captured.
    public var payload: UnsafeRawBufferPointer
    /// The payload length as sent (the UDP length minus 8); more than `payload.count` when
    /// snaplen cut the frame.
    public var payloadLength: Int
    /// The frame's original length on the wire (for a reassembled datagram: the sum of its fragments' frames).
    public var frameLength: Int
    /// The IP datagram's total length, header included.
    public var ipLength: Int
    /// Capture time in nanoseconds since the epoch.
    public var timestamp: Int64
    /// The frame number in its file (the last fragment's, for a reassembled datagram).
    public var frameNumber: Int

    public init(
        source: TransportEndpoint, destination: TransportEndpoint, payload: UnsafeRawBufferPointer,
        payloadLength: Int, frameLength: Int, ipLength: Int, timestamp: Int64, frameNumber: Int
    ) {
        self.source = source
        self.destination = destination
        self.payload = payload
        self.payloadLength = payloadLength
        self.frameLength = frameLength
        self.ipLength = ipLength
        self.timestamp = timestamp
        self.frameNumber = frameNumber
    }

    /// IP and UDP header bytes (and any IP padding after the UDP length): the IP length minus the payload.
    public var headerBytes: Int { ipLength &- payloadLength }
    /// Link-layer bytes (and a tunnel's outer headers): the frame length minus the IP length.
    public var linkBytes: Int { frameLength &- ipLength }
}

/// Why a frame yields no TCP segment. Raw values are the names used in diagnostics.
public enum SkipReason: String, CaseIterable, Sendable, Codable, CodingKeyRepresentable {
    /// The interface's link type is not one we decode.
    case unsupportedLinkType = "unsupported-link-type"
    /// The link layer carries something other than IPv4/IPv6 (ARP, LLDP, ...).
    case notIP = "not-ip"
    /// PPPoE discovery (0x8863): session setup, no IP.
    case pppoeDiscovery = "pppoe-discovery"
    /// A PPPoE session frame with a bad version/type or code.
    case malformedPPPoE = "malformed-pppoe"
    /// A PPPoE session frame carrying a PPP protocol other than IPv4/IPv6 (LCP, IPCP, ...).
    case pppNotIP = "ppp-not-ip"
    /// An MPLS label stack over something that is neither IPv4 nor IPv6 by its first nibble.
    case mplsNotIP = "mpls-not-ip"
    /// IP carrying another protocol than TCP or UDP (ICMP, ESP, ...).
    case notTCP = "not-tcp"
    /// The frame ends before a header it announces (snaplen too small for headers, or corrupt).
    case truncatedHeader = "truncated-header"
    /// An IPv4 header with a bad version, header length or total length.
    case malformedIPv4 = "malformed-ipv4"
    /// An IPv6 header or extension header chain that does not parse.
    case malformedIPv6 = "malformed-ipv6"
    /// A TCP header with an impossible data offset.
    case malformedTCP = "malformed-tcp"
    /// A UDP header whose length is under 8 or past the IP length.
    case malformedUDP = "malformed-udp"
    /// A fragment that could not be reassembled (overlap conflict, over the limit, timed out).
    case badFragment = "bad-fragment"
}

/// What `PacketDecoder.decode` made of a frame.
public enum DecodeResult {
    /// A TCP segment (borrowed, see `TCPSegment`).
    case segment(TCPSegment)
    /// A UDP datagram (borrowed, see `UDPDatagram`).
    case datagram(UDPDatagram)
    /// An IPv4 or IPv6 fragment was stored; the datagram is not complete yet.
    case fragmentHeld
    /// The frame carries no TCP segment we can use.
    case skipped(SkipReason)
}
