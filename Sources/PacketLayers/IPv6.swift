/// The IPv6 header fields the decoder uses, once the extension header chain has led to TCP.
struct IPv6Header {
    var sourceHigh: UInt64
    var sourceLow: UInt64
    var destinationHigh: UInt64
    var destinationLow: UInt64
    /// The payload length field: extension headers and upper layer, as sent.
    var payloadLength: Int
    /// Absolute offset of the TCP header in the frame.
    var tcpOffset: Int
}

enum IPv6 {
    static let headerLength = 40

    // Next-header values.
    static let hopByHop: UInt8 = 0
    static let tcp: UInt8 = 6
    static let routing: UInt8 = 43
    static let fragment: UInt8 = 44
    static let esp: UInt8 = 50
    static let authentication: UInt8 = 51
    static let noNextHeader: UInt8 = 59
    static let destinationOptions: UInt8 = 60

    /// Parses the fixed header at `offset` and walks the extension headers to TCP.
    ///
    /// - Parameters:
    ///   - wireLength: how many bytes from `offset` on were on the wire; `snaplenCut` tells
    ///     whether the capture holds fewer than that.
    @inline(__always)
    static func parse(_ r: ByteReader, at offset: Int, wireLength: Int, snaplenCut: Bool) -> Parsed<IPv6Header> {
        guard let version = r.u8(at: offset) else { return .skip(.truncatedHeader) }
        guard version >> 4 == 6 else { return .skip(.malformedIPv6) }
        guard r.has(headerLength, at: offset),
            let length = r.u16(at: offset + 4),
            let first = r.u8(at: offset + 6),
            let sourceHigh = r.u64(at: offset + 8),
            let sourceLow = r.u64(at: offset + 16),
            let destinationHigh = r.u64(at: offset + 24),
            let destinationLow = r.u64(at: offset + 32)
        else { return .skip(.truncatedHeader) }

        let payloadLength = Int(length)
        // Payload length 0 means a jumbogram (hop-by-hop Jumbo Payload option), which we do not
        // decode; with "no next header" it is simply an empty packet.
        if payloadLength == 0 { return .skip(first == noNextHeader ? .notTCP : .malformedIPv6) }
        let totalLength = headerLength &+ payloadLength
        let captured = r.count &- offset
        if totalLength > captured, !snaplenCut || totalLength > wireLength {
            return .skip(.malformedIPv6)
        }

        // Walk the chain. Each header is at least 8 bytes and must end inside the payload
        // length, so the loop is bounded by the datagram's size.
        let end = offset &+ totalLength
        var next = first
        var cursor = offset &+ headerLength
        while true {
            switch next {
            case tcp:
                return .ok(
                    IPv6Header(
                        sourceHigh: sourceHigh, sourceLow: sourceLow,
                        destinationHigh: destinationHigh, destinationLow: destinationLow,
                        payloadLength: payloadLength, tcpOffset: cursor))
            case hopByHop, routing, destinationOptions, authentication, fragment:
                guard cursor &+ 8 <= end else { return .skip(.malformedIPv6) }
                guard let nextHeader = r.u8(at: cursor), let lengthField = r.u8(at: cursor + 1)
                else { return .skip(.truncatedHeader) }
                let extensionLength: Int
                switch next {
                case fragment:
                    guard let offsetFlags = r.u16(at: cursor + 2) else { return .skip(.truncatedHeader) }
                    // Only atomic fragments (offset 0, no more fragments) carry a whole datagram;
                    // IPv6 fragmentation is too rare for TCP to be worth reassembling.
                    guard offsetFlags & 0xFFF9 == 0 else { return .skip(.badFragment) }
                    extensionLength = 8
                case authentication:
                    extensionLength = (Int(lengthField) &+ 2) &* 4 // 4-byte units, minus 2
                default:
                    extensionLength = (Int(lengthField) &+ 1) &* 8 // 8-byte units, minus the first 8
                }
                guard cursor &+ extensionLength <= end else { return .skip(.malformedIPv6) }
                next = nextHeader
                cursor &+= extensionLength
            default:
                // ESP (encrypted), no next header, UDP, ICMPv6, unknown headers: no TCP to see.
                return .skip(.notTCP)
            }
        }
    }
}
