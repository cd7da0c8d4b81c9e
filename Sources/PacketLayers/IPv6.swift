/// A non-atomic fragment header (RFC 8200 §4.5): the datagram is reassembled from its fragments.
struct IPv6Fragment {
    /// Fragment offset in bytes.
    var offset: Int
    var moreFragments: Bool
    var identification: UInt32
}

/// The IPv6 header fields the decoder uses, once the extension header chain has led to TCP or
/// UDP (or to a fragment header of a fragmented datagram).
struct IPv6Header {
    var sourceHigh: UInt64
    var sourceLow: UInt64
    var destinationHigh: UInt64
    var destinationLow: UInt64
    /// The payload length field: extension headers and upper layer, as sent.
    var payloadLength: Int
    /// Absolute offset of the upper-layer header in the frame (for a fragment: of its data).
    var upperOffset: Int
    /// The upper-layer protocol (6 TCP, 17 UDP); for a fragment, its header's next header.
    var upperProtocol: UInt8
    /// Set when the chain holds a non-atomic fragment header: the bytes from `upperOffset` to
    /// the end are this fragment's part of the datagram.
    var fragment: IPv6Fragment?
}

enum IPv6 {
    static let headerLength = 40

    // Next-header values.
    static let hopByHop: UInt8 = 0
    static let tcp: UInt8 = 6
    static let udp: UInt8 = 17
    static let routing: UInt8 = 43
    static let fragment: UInt8 = 44
    static let esp: UInt8 = 50
    static let authentication: UInt8 = 51
    static let noNextHeader: UInt8 = 59
    static let destinationOptions: UInt8 = 60

    /// Parses the fixed header at `offset` and walks the extension headers to TCP or UDP.
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
            case tcp, udp:
                return .ok(
                    IPv6Header(
                        sourceHigh: sourceHigh, sourceLow: sourceLow,
                        destinationHigh: destinationHigh, destinationLow: destinationLow,
                        payloadLength: payloadLength, upperOffset: cursor, upperProtocol: next))
            case hopByHop, routing, destinationOptions, authentication, fragment:
                guard cursor &+ 8 <= end else { return .skip(.malformedIPv6) }
                guard let nextHeader = r.u8(at: cursor), let lengthField = r.u8(at: cursor + 1)
                else { return .skip(.truncatedHeader) }
                let extensionLength: Int
                switch next {
                case fragment:
                    guard let offsetFlags = r.u16(at: cursor + 2), let identification = r.u32(at: cursor + 4)
                    else { return .skip(.truncatedHeader) }
                    // An atomic fragment (offset 0, no more fragments) carries a whole datagram:
                    // the chain goes on. A real one hands its data to the defragmenter.
                    if offsetFlags & 0xFFF9 != 0 {
                        guard nextHeader == tcp || nextHeader == udp else { return .skip(.notTCP) }
                        return .ok(
                            IPv6Header(
                                sourceHigh: sourceHigh, sourceLow: sourceLow,
                                destinationHigh: destinationHigh, destinationLow: destinationLow,
                                payloadLength: payloadLength, upperOffset: cursor &+ 8, upperProtocol: nextHeader,
                                fragment: IPv6Fragment(
                                    offset: Int(offsetFlags >> 3) &* 8, moreFragments: offsetFlags & 1 != 0,
                                    identification: identification)))
                    }
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
                // ESP (encrypted), no next header, ICMPv6, unknown headers: no TCP or UDP to see.
                return .skip(.notTCP)
            }
        }
    }
}
