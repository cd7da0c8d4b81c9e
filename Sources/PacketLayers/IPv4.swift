/// The IPv4 header fields the decoder uses.
struct IPv4Header {
    var source: UInt32
    var destination: UInt32
    /// Header length in bytes (IHL × 4), options included.
    var headerLength: Int
    /// The datagram's total length in bytes (header included), as sent.
    var totalLength: Int
    var identification: UInt16
    var protocolNumber: UInt8
    var moreFragments: Bool
    /// Fragment offset in bytes.
    var fragmentOffset: Int

    @inline(__always)
    var isFragment: Bool { moreFragments || fragmentOffset != 0 }
}

enum IPv4 {
    static let minimumHeaderLength = 20
    static let protocolTCP: UInt8 = 6
    static let protocolUDP: UInt8 = 17

    /// Parses and validates the header at `offset`.
    ///
    /// - Parameters:
    ///   - wireLength: how many bytes from `offset` on were on the wire (from the frame's
    ///     original length); `snaplenCut` tells whether the capture holds fewer than that.
    ///
    /// The checksum is not verified: captures on the sending host carry offloaded (unfilled)
    /// checksums, and the meter must count those packets too.
    @inline(__always)
    static func parse(_ r: ByteReader, at offset: Int, wireLength: Int, snaplenCut: Bool) -> Parsed<IPv4Header> {
        guard let versionIHL = r.u8(at: offset) else { return .skip(.truncatedHeader) }
        guard versionIHL >> 4 == 4 else { return .skip(.malformedIPv4) }
        let headerLength = Int(versionIHL & 0x0F) &* 4
        guard headerLength >= minimumHeaderLength else { return .skip(.malformedIPv4) }
        guard r.has(minimumHeaderLength, at: offset),
            let length = r.u16(at: offset + 2),
            let identification = r.u16(at: offset + 4),
            let flagsOffset = r.u16(at: offset + 6),
            let protocolNumber = r.u8(at: offset + 9),
            let source = r.u32(at: offset + 12),
            let destination = r.u32(at: offset + 16)
        else { return .skip(.truncatedHeader) }

        var totalLength = Int(length)
        // Total length 0 is what TSO/GSO super-segments show when captured on the sending host
        // (Wireshark's "TSO support" does the same): the frame's wire length is the truth then.
        if totalLength == 0 { totalLength = wireLength }
        guard totalLength >= headerLength else { return .skip(.malformedIPv4) }
        // Longer than the capture is fine only when snaplen cut the frame, and never longer
        // than what was on the wire.
        let captured = r.count &- offset
        if totalLength > captured, !snaplenCut || totalLength > wireLength {
            return .skip(.malformedIPv4)
        }
        // Options must be captured too: the payload starts after them.
        guard r.has(headerLength, at: offset) else { return .skip(.truncatedHeader) }

        return .ok(
            IPv4Header(
                source: source, destination: destination, headerLength: headerLength,
                totalLength: totalLength, identification: identification, protocolNumber: protocolNumber,
                moreFragments: flagsOffset & 0x2000 != 0, fragmentOffset: Int(flagsOffset & 0x1FFF) &* 8))
    }
}
