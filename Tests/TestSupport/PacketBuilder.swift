import CaptureIO
import PacketLayers

/// Builds capture frames for tests: a link layer around IPv4 or IPv6 (optionally with options
/// or extension headers) around TCP, with valid checksums.
///
/// The quickest use:
///
///     let bytes = PacketBuilder.tcp(from: "10.0.0.1:1234", to: "10.0.0.2:80",
///                                   seq: 1000, ack: 1, flags: [.ack, .psh], payload: Array("GET /".utf8))
///     PacketBuilder.withCapturedFrame(bytes) { frame in decoder.decode(frame) }
///
/// IPv6 is chosen by the endpoint text (`"[2001:db8::1]:443"`). Lower-level pieces
/// (`tcpSegment`, `ipv4`, `ipv6`, `frame`, `fragmentIPv4`) compose for anything unusual.
public enum PacketBuilder {
    // MARK: - Link layers

    /// An 802.1Q / 802.1ad tag.
    public struct VLANTag: Equatable, Sendable {
        /// The tag protocol identifier: 0x8100 (802.1Q), 0x88A8 (802.1ad) or 0x9100.
        public var tpid: UInt16
        /// The 12-bit VLAN id (priority bits left 0).
        public var id: UInt16
        public init(tpid: UInt16 = 0x8100, id: UInt16) {
            self.tpid = tpid
            self.id = id
        }
    }

    /// The link-layer framing around the IP packet.
    public enum Link: Equatable, Sendable {
        /// Ethernet II.
        case ethernet
        /// Ethernet with tags, outermost first.
        case ethernetTagged([VLANTag])
        /// Linux cooked capture v1 (link type 113).
        case linuxSLL
        /// Linux cooked capture v2 (link type 276).
        case linuxSLL2
        /// BSD loopback (link type 0) as written by a little-endian host, AF_INET6 = 30 (macOS).
        case null
        /// BSD loopback (link type 0) with an explicit byte order and AF_INET6 value (24, 28, 30).
        case bsdNull(bigEndian: Bool, ipv6Family: UInt32)
        /// OpenBSD loopback (link type 108): network-order family, AF_INET6 = 24.
        case loop
        /// Raw IP, link type 101.
        case raw
        /// Raw IP under another link type: 12, 14, 228 (IPv4 only) or 229 (IPv6 only).
        case rawLinkType(Int32)
        /// Ethernet, optional VLAN tags, then a PPPoE session header (EtherType 0x8864) and the
        /// PPP protocol (0x0021 IPv4, 0x0057 IPv6).
        case pppoe(tags: [VLANTag], session: UInt16)
        /// Ethernet, then an MPLS label stack (EtherType 0x8847), outermost label first; the
        /// last entry has the bottom-of-stack bit.
        case mpls(labels: [UInt32])

        /// One 802.1Q tag.
        public static func vlan(_ id: UInt16) -> Link { .ethernetTagged([VLANTag(id: id)]) }
        /// 802.1ad service tag outside an 802.1Q customer tag.
        public static func qinq(outer: UInt16, inner: UInt16) -> Link {
            .ethernetTagged([VLANTag(tpid: 0x88A8, id: outer), VLANTag(tpid: 0x8100, id: inner)])
        }

        /// The capture link type for this framing.
        public var linkType: Int32 {
            switch self {
            case .ethernet, .ethernetTagged, .pppoe, .mpls: return LinkType.ethernet
            case .linuxSLL: return LinkType.linuxSLL
            case .linuxSLL2: return LinkType.linuxSLL2
            case .null, .bsdNull: return LinkType.null
            case .loop: return LinkType.loop
            case .raw: return LinkType.raw
            case .rawLinkType(let type): return type
            }
        }

        /// Every framing once (raw types matching `ipv6`), for tests that loop over link types.
        public static func all(ipv6: Bool) -> [Link] {
            [
                .ethernet, .vlan(100), .qinq(outer: 10, inner: 20), .linuxSLL, .linuxSLL2, .null,
                .bsdNull(bigEndian: true, ipv6Family: 28), .bsdNull(bigEndian: false, ipv6Family: 24), .loop,
                .raw, .rawLinkType(12), .rawLinkType(14), .rawLinkType(ipv6 ? LinkType.ipv6 : LinkType.ipv4),
                .pppoe(tags: [], session: 0x1234), .pppoe(tags: [VLANTag(id: 7)], session: 1),
                .mpls(labels: [16]), .mpls(labels: [100, 200, 300]),
            ]
        }
    }

    public static let sourceMAC: [UInt8] = [0x02, 0, 0, 0, 0, 0x01]
    public static let destinationMAC: [UInt8] = [0x02, 0, 0, 0, 0, 0x02]

    /// Wraps an IP packet (IPv4 or IPv6, by its version nibble) in `link`.
    /// - Parameter padToMinimum: pad Ethernet frames to the 60-byte minimum, as a NIC does.
    public static func frame(_ ipPacket: [UInt8], link: Link = .ethernet, padToMinimum: Bool = false) -> [UInt8] {
        let isIPv6 = (ipPacket.first ?? 0) >> 4 == 6
        let etherType: UInt16 = isIPv6 ? 0x86DD : 0x0800
        var out: [UInt8] = []
        switch link {
        case .ethernet, .ethernetTagged:
            out = destinationMAC + sourceMAC
            if case .ethernetTagged(let tags) = link {
                for tag in tags { out += be16(tag.tpid) + be16(tag.id & 0x0FFF) }
            }
            out += be16(etherType) + ipPacket
            if padToMinimum, out.count < 60 { out += [UInt8](repeating: 0, count: 60 - out.count) }
        case .pppoe(let tags, let session):
            out = destinationMAC + sourceMAC
            for tag in tags { out += be16(tag.tpid) + be16(tag.id & 0x0FFF) }
            // ver/type 0x11, code 0 (session data), session id, length (PPP protocol + IP).
            out += be16(0x8864) + [0x11, 0x00] + be16(session) + be16(UInt16(ipPacket.count + 2))
            out += be16(isIPv6 ? 0x0057 : 0x0021) + ipPacket
        case .mpls(let labels):
            out = destinationMAC + sourceMAC + be16(0x8847)
            for (index, label) in labels.enumerated() {
                // label (20 bits), traffic class 0, bottom-of-stack on the last, TTL 64.
                let bottom: UInt32 = index == labels.count - 1 ? 0x100 : 0
                out += be32(label << 12 | bottom | 64)
            }
            out += ipPacket
        case .linuxSLL:
            // packet type 0 (to us), ARPHRD_ETHER, address length 6, address padded to 8.
            out = be16(0) + be16(1) + be16(6) + sourceMAC + [0, 0] + be16(etherType) + ipPacket
        case .linuxSLL2:
            // protocol, reserved, ifindex, ARPHRD_ETHER, packet type, address length, address.
            out = be16(etherType) + be16(0) + be32(2) + be16(1) + [0, 6] + sourceMAC + [0, 0] + ipPacket
        case .null:
            out = le32(isIPv6 ? 30 : 2) + ipPacket
        case .bsdNull(let bigEndian, let ipv6Family):
            let family: UInt32 = isIPv6 ? ipv6Family : 2
            out = (bigEndian ? be32(family) : le32(family)) + ipPacket
        case .loop:
            out = be32(isIPv6 ? 24 : 2) + ipPacket
        case .raw, .rawLinkType:
            out = ipPacket
        }
        return out
    }

    // MARK: - TCP

    /// A complete frame: `link` around IP around a TCP segment. The endpoints are text
    /// (`"10.0.0.1:1234"`, `"[2001:db8::1]:443"`); both must be the same IP version.
    public static func tcp(
        from source: String, to destination: String,
        seq: UInt32 = 0, ack: UInt32 = 0, flags: TCPFlags = [.ack], window: UInt16 = 65535,
        options: [UInt8] = [], payload: [UInt8] = [],
        link: Link = .ethernet, padToMinimum: Bool = false,
        ipID: UInt16 = 1, ipv4Options: [UInt8] = [], ipv6Extensions: [IPv6Extension] = []
    ) -> [UInt8] {
        tcp(
            from: endpoint(source), to: endpoint(destination), seq: seq, ack: ack, flags: flags,
            window: window, options: options, payload: payload, link: link, padToMinimum: padToMinimum,
            ipID: ipID, ipv4Options: ipv4Options, ipv6Extensions: ipv6Extensions)
    }

    /// `tcp(from:to:...)` with endpoint values.
    public static func tcp(
        from source: TransportEndpoint, to destination: TransportEndpoint,
        seq: UInt32 = 0, ack: UInt32 = 0, flags: TCPFlags = [.ack], window: UInt16 = 65535,
        options: [UInt8] = [], payload: [UInt8] = [],
        link: Link = .ethernet, padToMinimum: Bool = false,
        ipID: UInt16 = 1, ipv4Options: [UInt8] = [], ipv6Extensions: [IPv6Extension] = []
    ) -> [UInt8] {
        frame(
            tcpPacket(
                from: source, to: destination, seq: seq, ack: ack, flags: flags, window: window,
                options: options, payload: payload, ipID: ipID, ipv4Options: ipv4Options,
                ipv6Extensions: ipv6Extensions),
            link: link, padToMinimum: padToMinimum)
    }

    /// The IP packet (no link layer) carrying a TCP segment.
    public static func tcpPacket(
        from source: TransportEndpoint, to destination: TransportEndpoint,
        seq: UInt32 = 0, ack: UInt32 = 0, flags: TCPFlags = [.ack], window: UInt16 = 65535,
        options: [UInt8] = [], payload: [UInt8] = [],
        ipID: UInt16 = 1, ipv4Options: [UInt8] = [], ipv6Extensions: [IPv6Extension] = []
    ) -> [UInt8] {
        precondition(source.address.isIPv6 == destination.address.isIPv6, "mixed IP versions")
        let segment = tcpSegment(
            from: source, to: destination, seq: seq, ack: ack, flags: flags,
            window: window, options: options, payload: payload)
        if source.address.isIPv6 {
            return ipv6(
                source: source.address, destination: destination.address, nextHeader: 6,
                payload: segment, extensions: ipv6Extensions)
        }
        return ipv4(
            source: source.address, destination: destination.address, protocolNumber: 6,
            payload: segment, identification: ipID, options: ipv4Options)
    }

    /// A TCP header (options padded with NOPs to a multiple of 4 bytes) plus payload, with the
    /// checksum over the pseudo-header of the given addresses.
    public static func tcpSegment(
        from source: TransportEndpoint, to destination: TransportEndpoint,
        seq: UInt32, ack: UInt32, flags: TCPFlags, window: UInt16 = 65535,
        options: [UInt8] = [], payload: [UInt8] = []
    ) -> [UInt8] {
        var paddedOptions = options
        while paddedOptions.count % 4 != 0 { paddedOptions.append(1) } // NOP
        precondition(paddedOptions.count <= 40, "TCP options exceed 40 bytes")
        let headerLength = 20 + paddedOptions.count
        var segment = be16(source.port) + be16(destination.port) + be32(seq) + be32(ack)
        segment += [UInt8(headerLength / 4) << 4, flags.rawValue] + be16(window) + be16(0) + be16(0)
        segment += paddedOptions + payload
        let sum = checksum(
            pseudoHeader(
                source.address, destination.address, protocolNumber: 6,
                length: segment.count) + segment)
        segment[16] = UInt8(sum >> 8)
        segment[17] = UInt8(sum & 0xFF)
        return segment
    }

    /// Common TCP options, ready for `options:`.
    public enum TCPOption {
        public static func mss(_ value: UInt16) -> [UInt8] { [2, 4] + be16(value) }
        public static func windowScale(_ shift: UInt8) -> [UInt8] { [3, 3, shift] }
        public static let sackPermitted: [UInt8] = [4, 2]
        public static func timestamps(_ value: UInt32, echo: UInt32) -> [UInt8] { [8, 10] + be32(value) + be32(echo) }
    }

    // MARK: - IPv4

    /// An IPv4 packet with a valid header checksum.
    /// - Parameters:
    ///   - fragmentOffset: in bytes (a multiple of 8).
    ///   - totalLength: overrides the total length field (for malformed-packet tests).
    public static func ipv4(
        source: IPAddress, destination: IPAddress, protocolNumber: UInt8 = 6, payload: [UInt8],
        identification: UInt16 = 1, ttl: UInt8 = 64, options: [UInt8] = [],
        dontFragment: Bool = false, moreFragments: Bool = false, fragmentOffset: Int = 0,
        totalLength: Int? = nil
    ) -> [UInt8] {
        var paddedOptions = options
        while paddedOptions.count % 4 != 0 { paddedOptions.append(0) } // EOL padding
        precondition(paddedOptions.count <= 40, "IPv4 options exceed 40 bytes")
        let headerLength = 20 + paddedOptions.count
        let length = totalLength ?? headerLength + payload.count
        var flags = UInt16(fragmentOffset / 8) & 0x1FFF
        if dontFragment { flags |= 0x4000 }
        if moreFragments { flags |= 0x2000 }
        var header = [0x40 | UInt8(headerLength / 4), 0] + be16(UInt16(truncatingIfNeeded: length))
        header += be16(identification) + be16(flags) + [ttl, protocolNumber] + be16(0)
        header += source.bytes + destination.bytes + paddedOptions
        let sum = checksum(header)
        header[10] = UInt8(sum >> 8)
        header[11] = UInt8(sum & 0xFF)
        return header + payload
    }

    /// Splits an IPv4 packet into fragments carrying at most `maxPayload` bytes each (rounded
    /// down to a multiple of 8), in order. Each fragment repeats the original header, options
    /// included. Wrap each in `frame(_:link:)`.
    public static func fragmentIPv4(_ packet: [UInt8], maxPayload: Int) -> [[UInt8]] {
        let headerLength = Int(packet[0] & 0x0F) * 4
        let header = Array(packet[0..<headerLength])
        let payload = Array(packet[headerLength...])
        let step = max(8, maxPayload / 8 * 8)
        var fragments: [[UInt8]] = []
        var offset = 0
        repeat {
            let end = min(payload.count, offset + step)
            let protocolNumber = header[9]
            let source = IPAddress(ipv4: UInt32(bytes: header[12..<16]))
            let destination = IPAddress(ipv4: UInt32(bytes: header[16..<20]))
            let identification = UInt16(header[4]) << 8 | UInt16(header[5])
            fragments.append(
                ipv4(
                    source: source, destination: destination, protocolNumber: protocolNumber,
                    payload: Array(payload[offset..<end]), identification: identification,
                    ttl: header[8], options: Array(header[20...]),
                    dontFragment: false, moreFragments: end < payload.count, fragmentOffset: offset))
            offset = end
        } while offset < payload.count
        return fragments
    }

    /// A TCP segment over IPv4, fragmented: one frame per fragment, in order.
    public static func tcpFragments(
        from source: String, to destination: String, seq: UInt32 = 0, ack: UInt32 = 0,
        flags: TCPFlags = [.ack, .psh], payload: [UInt8], maxFragmentPayload: Int,
        ipID: UInt16 = 1, link: Link = .ethernet
    ) -> [[UInt8]] {
        let packet = tcpPacket(
            from: endpoint(source), to: endpoint(destination), seq: seq, ack: ack,
            flags: flags, payload: payload, ipID: ipID)
        return fragmentIPv4(packet, maxPayload: maxFragmentPayload).map { frame($0, link: link) }
    }

    // MARK: - IPv6

    /// One IPv6 extension header. `body` is what follows the next-header and length bytes;
    /// `ipv6(...)` fills those in.
    public struct IPv6Extension: Equatable, Sendable {
        public var headerType: UInt8
        public var body: [UInt8]
        public init(headerType: UInt8, body: [UInt8]) {
            self.headerType = headerType
            self.body = body
        }

        /// Hop-by-hop options: a router alert plus PadN to `8 × units` bytes in all.
        public static func hopByHop(units: Int = 1) -> IPv6Extension {
            IPv6Extension(headerType: 0, body: optionsBody(units: units, leading: [5, 2, 0, 0]))
        }
        /// Destination options: PadN only, `8 × units` bytes in all.
        public static func destinationOptions(units: Int = 1) -> IPv6Extension {
            IPv6Extension(headerType: 60, body: optionsBody(units: units, leading: []))
        }
        /// A type-0-style routing header with segments left 0 and `addresses` addresses.
        public static func routing(addresses: Int = 1) -> IPv6Extension {
            IPv6Extension(headerType: 43, body: [0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16 * addresses))
        }
        /// A fragment header (offset in bytes).
        public static func fragment(offset: Int = 0, more: Bool = false, identification: UInt32 = 1) -> IPv6Extension {
            let field = UInt16(offset / 8) << 3 | (more ? 1 : 0)
            return IPv6Extension(headerType: 44, body: be16(field) + be32(identification))
        }
        /// An authentication header with `icvWords` 32-bit words of ICV.
        public static func authentication(icvWords: Int = 3) -> IPv6Extension {
            IPv6Extension(
                headerType: 51,
                body: [0, 0] + be32(0x100) + be32(1)
                    + [UInt8](repeating: 0xAB, count: 4 * icvWords))
        }

        private static func optionsBody(units: Int, leading: [UInt8]) -> [UInt8] {
            let padding = 8 * max(1, units) - 2 - leading.count
            var body = leading
            if padding == 1 {
                body.append(0)
            } else if padding > 1 {
                body += [1, UInt8(padding - 2)] + [UInt8](repeating: 0, count: padding - 2)
            }
            return body
        }

        /// The header's bytes with `next` as its next header.
        func encoded(next: UInt8) -> [UInt8] {
            let total = 2 + body.count
            let lengthField: Int
            switch headerType {
            case 44: lengthField = 0
            case 51: lengthField = total / 4 - 2
            default: lengthField = total / 8 - 1
            }
            return [next, UInt8(truncatingIfNeeded: lengthField)] + body
        }
    }

    /// An IPv6 packet; `nextHeader` is the upper-layer protocol after `extensions`.
    /// - Parameter payloadLength: overrides the payload length field (for malformed-packet tests).
    public static func ipv6(
        source: IPAddress, destination: IPAddress, nextHeader: UInt8 = 6, payload: [UInt8],
        extensions: [IPv6Extension] = [], hopLimit: UInt8 = 64, payloadLength: Int? = nil
    ) -> [UInt8] {
        var chain: [UInt8] = []
        for (index, ext) in extensions.enumerated() {
            let next = index + 1 < extensions.count ? extensions[index + 1].headerType : nextHeader
            chain += ext.encoded(next: next)
        }
        let first = extensions.first?.headerType ?? nextHeader
        let length = payloadLength ?? chain.count + payload.count
        var header: [UInt8] = [0x60, 0, 0, 0] + be16(UInt16(truncatingIfNeeded: length)) + [first, hopLimit]
        header += source.bytes + destination.bytes
        return header + chain + payload
    }

    // MARK: - Frames for the decoder

    /// Runs `body` with a `CapturedFrame` borrowing `bytes`.
    /// - Parameter originalLength: the wire length; default `bytes.count` (pass more to
    ///   simulate snaplen truncation).
    public static func withCapturedFrame<Result>(
        _ bytes: [UInt8], link: Link = .ethernet, number: Int = 1, timestamp: Int64 = 0,
        originalLength: Int? = nil, _ body: (CapturedFrame) throws -> Result
    ) rethrows -> Result {
        try withCapturedFrame(
            bytes, linkType: link.linkType, number: number, timestamp: timestamp,
            originalLength: originalLength, body)
    }

    /// `withCapturedFrame` with an explicit link type number.
    public static func withCapturedFrame<Result>(
        _ bytes: [UInt8], linkType: Int32, number: Int = 1, timestamp: Int64 = 0,
        originalLength: Int? = nil, _ body: (CapturedFrame) throws -> Result
    ) rethrows -> Result {
        try bytes.withUnsafeBytes { raw in
            try body(
                CapturedFrame(
                    number: number, timestamp: timestamp, linkType: linkType, interface: 0,
                    originalLength: originalLength ?? bytes.count, bytes: raw))
        }
    }

    // MARK: - Byte helpers

    /// The Internet checksum (RFC 1071) of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        var index = 0
        while index + 1 < bytes.count {
            sum += UInt32(bytes[index]) << 8 | UInt32(bytes[index + 1])
            index += 2
        }
        if index < bytes.count { sum += UInt32(bytes[index]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
        return ~UInt16(sum)
    }

    public static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    public static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
    public static func le32(_ value: UInt32) -> [UInt8] { be32(value).reversed() }

    /// Parses endpoint text, trapping on a typo (test input).
    public static func endpoint(_ text: String) -> TransportEndpoint {
        guard let endpoint = TransportEndpoint(text) else { preconditionFailure("bad endpoint \(text)") }
        return endpoint
    }

    private static func pseudoHeader(
        _ source: IPAddress, _ destination: IPAddress,
        protocolNumber: UInt8, length: Int
    ) -> [UInt8] {
        if source.isIPv6 {
            return source.bytes + destination.bytes + be32(UInt32(length)) + [0, 0, 0, protocolNumber]
        }
        return source.bytes + destination.bytes + [0, protocolNumber] + be16(UInt16(truncatingIfNeeded: length))
    }
}

private extension UInt32 {
    init(bytes: ArraySlice<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
