/// The UDP header fields the decoder uses (RFC 768).
struct UDPHeader {
    var sourcePort: UInt16
    var destinationPort: UInt16
    /// The payload length as sent: the UDP length minus its 8-byte header.
    var payloadLength: Int
}

enum UDP {
    static let headerLength = 8
    /// VXLAN (RFC 7348): an 8-byte header, then an Ethernet frame.
    static let vxlanPort: UInt16 = 4789
    /// Teredo (RFC 4380): IPv6 in UDP, optionally behind authentication and origin indicators.
    static let teredoPort: UInt16 = 3544

    /// Parses the header at `offset` of a datagram that ends at `declaredEnd` by the IP length;
    /// `r` may end earlier (snaplen). A UDP length of 0 (IPv6 jumbograms, or GSO super-packets
    /// captured on the sender) means "to the IP length". The checksum is not verified (offload).
    @inline(__always)
    static func parse(_ r: ByteReader, at offset: Int, declaredEnd: Int) -> Parsed<UDPHeader> {
        let declaredLength = declaredEnd &- offset
        guard declaredLength >= headerLength else { return .skip(.malformedUDP) }
        guard let sourcePort = r.u16(at: offset), let destinationPort = r.u16(at: offset + 2),
            let length = r.u16(at: offset + 4), r.has(headerLength, at: offset)
        else { return .skip(.truncatedHeader) }
        var udpLength = Int(length)
        if udpLength == 0 { udpLength = declaredLength }
        // Shorter than the IP payload is legal (the rest is padding, an IP-layer byte); longer is not.
        guard udpLength >= headerLength, udpLength <= declaredLength else { return .skip(.malformedUDP) }
        return .ok(
            UDPHeader(sourcePort: sourcePort, destinationPort: destinationPort, payloadLength: udpLength &- headerLength))
    }

    /// Where the inner IPv6 header of a Teredo datagram starts (after its optional
    /// authentication and origin indicators), when the payload is exactly one IPv6 packet.
    @inline(__always)
    static func teredoInner(_ r: ByteReader, from start: Int, to end: Int) -> Int? {
        var offset = start
        if r.u16(at: offset) == 0x0001 {
            // Authentication: type, id length, auth length, id, auth, 8-byte nonce, confirmation byte.
            guard let idLength = r.u8(at: offset + 2), let authLength = r.u8(at: offset + 3) else { return nil }
            offset &+= 4 &+ Int(idLength) &+ Int(authLength) &+ 9
        }
        if r.u16(at: offset) == 0x0000 { offset &+= 8 } // Origin indication: type, port, address.
        guard let version = r.u8(at: offset), version >> 4 == 6, let length = r.u16(at: offset + 4),
            offset &+ 40 &+ Int(length) == end
        else { return nil }
        return offset
    }
}
