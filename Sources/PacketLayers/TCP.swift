/// The TCP header fields the decoder uses.
struct TCPHeader {
    var sourcePort: UInt16
    var destinationPort: UInt16
    var sequence: UInt32
    var acknowledgment: UInt32
    var flags: UInt8
    var window: UInt16
    /// Data offset in bytes (options included).
    var headerLength: Int
}

enum TCP {
    static let minimumHeaderLength = 20

    /// Parses the header at `offset` of a segment that ends at `declaredEnd` by the IP length;
    /// `r` may end earlier (snaplen).
    @inline(__always)
    static func parse(_ r: ByteReader, at offset: Int, declaredEnd: Int) -> Parsed<TCPHeader> {
        let declaredLength = declaredEnd &- offset
        guard declaredLength >= minimumHeaderLength else { return .skip(.malformedTCP) }
        guard let sourcePort = r.u16(at: offset),
            let destinationPort = r.u16(at: offset + 2),
            let sequence = r.u32(at: offset + 4),
            let acknowledgment = r.u32(at: offset + 8),
            let dataOffset = r.u8(at: offset + 12),
            let flags = r.u8(at: offset + 13),
            let window = r.u16(at: offset + 14),
            r.has(minimumHeaderLength, at: offset)
        else { return .skip(.truncatedHeader) }
        let headerLength = Int(dataOffset >> 4) &* 4
        guard headerLength >= minimumHeaderLength, headerLength <= declaredLength else {
            return .skip(.malformedTCP)
        }
        // Options must be captured too: the payload starts after them.
        guard r.has(headerLength, at: offset) else { return .skip(.truncatedHeader) }
        return .ok(
            TCPHeader(
                sourcePort: sourcePort, destinationPort: destinationPort, sequence: sequence,
                acknowledgment: acknowledgment, flags: flags, window: window, headerLength: headerLength))
    }
}
