/// The network protocol a link layer announced.
enum NetworkProtocol {
    case ipv4
    case ipv6
    /// Raw IP link types: the version nibble of the first byte decides.
    case byVersion
}

/// Link-layer decoding: finds where the IP header starts.
enum LinkLayer {
    static let etherTypeIPv4: UInt16 = 0x0800
    static let etherTypeIPv6: UInt16 = 0x86DD

    /// Where the network header starts and what it is, or why the frame is skipped.
    @inline(__always)
    static func decode(_ r: ByteReader, linkType: Int32) -> Parsed<(offset: Int, proto: NetworkProtocol)> {
        // Literal values (the `LinkType` constants live in another module and would not be
        // constant-folded into this per-packet switch).
        switch linkType {
        case 1: // LinkType.ethernet
            guard let type = r.u16(at: 12) else { return .skip(.truncatedHeader) }
            return etherType(type, payloadOffset: 14, r)
        case 113: // LinkType.linuxSLL
            // 16-byte header, protocol in the last two bytes.
            guard let type = r.u16(at: 14) else { return .skip(.truncatedHeader) }
            return etherType(type, payloadOffset: 16, r)
        case 276: // LinkType.linuxSLL2
            // 20-byte header, protocol first.
            guard r.has(20, at: 0), let type = r.u16(at: 0) else { return .skip(.truncatedHeader) }
            return etherType(type, payloadOffset: 20, r)
        case 0: // LinkType.null
            // The family is in the capturing host's byte order, which the file does not record.
            guard let raw = r.u32(at: 0) else { return .skip(.truncatedHeader) }
            return family(raw) ?? family(raw.byteSwapped) ?? .skip(.notIP)
        case 108: // LinkType.loop
            guard let raw = r.u32(at: 0) else { return .skip(.truncatedHeader) }
            return family(raw) ?? .skip(.notIP)
        case 101, 12, 14: // LinkType.raw, LinkType.rawAlternatives
            return .ok((0, .byVersion))
        case 228: // LinkType.ipv4
            return .ok((0, .ipv4))
        case 229: // LinkType.ipv6
            return .ok((0, .ipv6))
        default:
            return .skip(.unsupportedLinkType)
        }
    }

    /// Follows any number of 802.1Q / 802.1ad / 0x9100 tags to the inner EtherType.
    @inline(__always)
    static func etherType(_ first: UInt16, payloadOffset: Int, _ r: ByteReader)
        -> Parsed<(offset: Int, proto: NetworkProtocol)> {
        var type = first
        var offset = payloadOffset
        while type == 0x8100 || type == 0x88A8 || type == 0x9100 {
            // A tag is 2 bytes of TCI then the next EtherType.
            guard let inner = r.u16(at: offset + 2) else { return .skip(.truncatedHeader) }
            type = inner
            offset += 4
        }
        switch type {
        case etherTypeIPv4: return .ok((offset, .ipv4))
        case etherTypeIPv6: return .ok((offset, .ipv6))
        default: return .skip(.notIP)
        }
    }

    /// BSD address families: AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD/OpenBSD),
    /// 28 (FreeBSD) or 30 (macOS). The 4-byte header is followed directly by the IP header.
    @inline(__always)
    static func family(_ value: UInt32) -> Parsed<(offset: Int, proto: NetworkProtocol)>? {
        switch value {
        case 2: return .ok((4, .ipv4))
        case 24, 28, 30: return .ok((4, .ipv6))
        default: return nil
        }
    }
}
