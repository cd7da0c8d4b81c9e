import CaptureIO

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
    static let etherTypePPPoEDiscovery: UInt16 = 0x8863
    static let etherTypePPPoESession: UInt16 = 0x8864
    static let etherTypeMPLSUnicast: UInt16 = 0x8847
    static let etherTypeMPLSMulticast: UInt16 = 0x8848
    /// PPP protocol numbers carried in a PPPoE session (RFC 1332, RFC 5072).
    static let pppIPv4: UInt16 = 0x0021
    static let pppIPv6: UInt16 = 0x0057

    /// Where the network header starts and what it is, or why the frame is skipped.
    @inline(__always)
    static func decode(_ r: ByteReader, linkType: Int32) -> Parsed<(offset: Int, proto: NetworkProtocol)> {
        // `LinkType`'s constants are @inlinable, so this stays a switch over constants.
        switch linkType {
        case LinkType.ethernet:
            guard let type = r.u16(at: 12) else { return .skip(.truncatedHeader) }
            return etherType(type, payloadOffset: 14, r)
        case LinkType.linuxSLL:
            // 16-byte header, protocol in the last two bytes.
            guard let type = r.u16(at: 14) else { return .skip(.truncatedHeader) }
            return etherType(type, payloadOffset: 16, r)
        case LinkType.linuxSLL2:
            // 20-byte header, protocol first.
            guard r.has(20, at: 0), let type = r.u16(at: 0) else { return .skip(.truncatedHeader) }
            return etherType(type, payloadOffset: 20, r)
        case LinkType.null:
            // The family is in the capturing host's byte order, which the file does not record.
            guard let raw = r.u32(at: 0) else { return .skip(.truncatedHeader) }
            return family(raw) ?? family(raw.byteSwapped) ?? .skip(.notIP)
        case LinkType.loop:
            guard let raw = r.u32(at: 0) else { return .skip(.truncatedHeader) }
            return family(raw) ?? .skip(.notIP)
        case LinkType.raw, LinkType.rawAlternative12, LinkType.rawAlternative14:
            return .ok((0, .byVersion))
        case LinkType.ipv4:
            return .ok((0, .ipv4))
        case LinkType.ipv6:
            return .ok((0, .ipv6))
        case LinkType.nflog:
            return nflog(r)
        default:
            return .skip(.unsupportedLinkType)
        }
    }

    /// Follows any number of 802.1Q / 802.1ad / 0x9100 tags to the inner EtherType, then a
    /// PPPoE session header or an MPLS label stack when there is one.
    @inline(__always)
    static func etherType(_ first: UInt16, payloadOffset: Int, _ r: ByteReader)
        -> Parsed<(offset: Int, proto: NetworkProtocol)>
    {
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
        case etherTypePPPoESession: return pppoeSession(at: offset, r)
        case etherTypePPPoEDiscovery: return .skip(.pppoeDiscovery)
        case etherTypeMPLSUnicast, etherTypeMPLSMulticast: return mplsStack(at: offset, r)
        default: return .skip(.notIP)
        }
    }

    /// A PPPoE session header (RFC 2516: ver/type 0x11, code 0, session id, length) and the
    /// 2-byte PPP protocol; IPv4 and IPv6 follow it directly. The PPPoE length is not needed:
    /// the IP length bounds the datagram, as it does for Ethernet padding.
    @inline(__always)
    static func pppoeSession(at offset: Int, _ r: ByteReader) -> Parsed<(offset: Int, proto: NetworkProtocol)> {
        guard let versionType = r.u8(at: offset), let code = r.u8(at: offset + 1),
            let proto = r.u16(at: offset + 6)
        else { return .skip(.truncatedHeader) }
        guard versionType == 0x11, code == 0 else { return .skip(.malformedPPPoE) }
        switch proto {
        case pppIPv4: return .ok((offset + 8, .ipv4))
        case pppIPv6: return .ok((offset + 8, .ipv6))
        default: return .skip(.pppNotIP) // LCP, IPCP, authentication...
        }
    }

    /// An MPLS label stack (RFC 3032): 4-byte entries up to the one with the bottom-of-stack
    /// bit. The stack does not say what it carries, so the first nibble after it decides, as
    /// Wireshark guesses too; anything else (a pseudowire control word, Ethernet) is skipped.
    @inline(__always)
    static func mplsStack(at start: Int, _ r: ByteReader) -> Parsed<(offset: Int, proto: NetworkProtocol)> {
        var offset = start
        // Each entry is read before the next: the loop ends at the buffer's end at the latest.
        while true {
            guard let entry = r.u32(at: offset) else { return .skip(.truncatedHeader) }
            offset += 4
            if entry & 0x100 != 0 { break }
        }
        guard let first = r.u8(at: offset) else { return .skip(.truncatedHeader) }
        switch first >> 4 {
        case 4: return .ok((offset, .ipv4))
        case 6: return .ok((offset, .ipv6))
        default: return .skip(.mplsNotIP)
        }
    }

    /// NFLOG (link type 239): family, version 0, resource id, then TLVs (length with the
    /// 4-byte TLV header, type, value padded to 4 bytes), one of which, NFULA_PAYLOAD (9),
    /// holds the packet from its IP header on. Length and type are in the capturing host's byte
    /// order, which the file does not record: the first TLV's length (at least 4, and within the
    /// frame) tells it, little-endian first as Wireshark does.
    @inline(__always)
    static func nflog(_ r: ByteReader) -> Parsed<(offset: Int, proto: NetworkProtocol)> {
        guard let family = r.u8(at: 0), let version = r.u8(at: 1), r.has(8, at: 0) else {
            return .skip(.truncatedHeader)
        }
        guard version == 0 else { return .skip(.notIP) }
        let proto: NetworkProtocol
        switch family {
        case 2: proto = .ipv4
        case 10: proto = .ipv6
        default: proto = .byVersion
        }
        func plausible(_ length: UInt16, at offset: Int) -> Bool {
            length >= 4 && Int(length) <= r.count &- offset
        }
        let firstBigEndian = r.u16(at: 4) ?? 0
        let littleEndian = plausible(firstBigEndian.byteSwapped, at: 4) || !plausible(firstBigEndian, at: 4)
        var offset = 4
        // Every TLV advances by at least 4 bytes: the loop ends at the frame's end at the latest.
        while let rawLength = r.u16(at: offset), let rawType = r.u16(at: offset + 2) {
            let length = Int(littleEndian ? rawLength.byteSwapped : rawLength)
            let type = (littleEndian ? rawType.byteSwapped : rawType) & 0x7FFF
            guard length >= 4 else { return .skip(.truncatedHeader) }
            if type == 9 { return .ok((offset + 4, proto)) }
            offset &+= (length &+ 3) & ~3
        }
        return .skip(.notIP)
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
