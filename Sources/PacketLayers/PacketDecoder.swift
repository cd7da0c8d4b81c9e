import CaptureIO

/// Decodes frames in place, link layer to TCP or UDP. One instance per capture file; it keeps
/// the IPv4 and IPv6 fragments that wait for reassembly.
///
/// Plain (unfragmented) packets are decoded without any heap allocation: headers are read
/// straight from `frame.bytes` with bounds-checked loads, and the segment's payload borrows
/// the frame. Link types: Ethernet (with any number of 802.1Q/802.1ad/0x9100 tags, then
/// optionally a PPPoE session or an MPLS label stack), Linux cooked v1/v2, BSD null and
/// OpenBSD loop, raw IP (101, 12, 14, 228, 229), NFLOG (239). UDP tunnels are opened: VXLAN
/// (UDP 4789, an Ethernet frame inside) and Teredo (UDP 3544, IPv6 inside); what they carry is
/// decoded as if captured directly, the tunnel's headers counted as link bytes.
public final class PacketDecoder {
    private let defragmenter: IPv4Defragmenter

    /// - Parameter maxPendingFragmentBytes: the most memory IPv4 and IPv6 fragments waiting for their
    ///   datagram may hold in total; over it, the oldest datagram is dropped.
    public init(maxPendingFragmentBytes: Int = 8 << 20) {
        defragmenter = IPv4Defragmenter(limit: maxPendingFragmentBytes)
    }

    /// Bytes currently held (charged) for incomplete IPv4 datagrams.
    public var pendingFragmentBytes: Int { defragmenter.heldBytes }
    /// Incomplete IPv4 datagrams currently held.
    public var pendingFragmentDatagrams: Int { defragmenter.pendingDatagrams }
    /// Incomplete datagrams dropped to stay under `maxPendingFragmentBytes`.
    public var evictedFragmentDatagrams: Int { defragmenter.evictedDatagrams }
    /// Incomplete datagrams dropped because no fragment arrived for 30 s of capture time.
    public var expiredFragmentDatagrams: Int { defragmenter.expiredDatagrams }

    /// Tunnels inside tunnels are opened this deep at most.
    static let maxTunnelDepth = 2

    /// Decodes one frame down to its TCP segment or UDP datagram.
    ///
    /// The result's payload borrows `frame.bytes`, or for a reassembled datagram a
    /// decoder-owned buffer; either way it is valid until the next call.
    public func decode(_ frame: CapturedFrame) -> DecodeResult {
        let r = ByteReader(frame.bytes)
        let network: (offset: Int, proto: NetworkProtocol)
        switch LinkLayer.decode(r, linkType: frame.linkType) {
        case .ok(let found): network = found
        case .skip(let reason): return .skipped(reason)
        }
        // What was on the wire; a broken file may claim an original length below the captured
        // one, so never less than what we hold.
        let wireEnd = max(frame.originalLength, r.count)
        return decodeNetwork(
            frame, r, network.proto, at: network.offset, wireEnd: wireEnd,
            snaplenCut: r.count < frame.originalLength, frameLength: frame.originalLength, depth: 0)
    }

    /// Decodes the IP packet at `offset`; `wireEnd` is where the frame ended on the wire.
    private func decodeNetwork(
        _ frame: CapturedFrame, _ r: ByteReader, _ proto: NetworkProtocol, at offset: Int,
        wireEnd: Int, snaplenCut: Bool, frameLength: Int, depth: Int
    ) -> DecodeResult {
        let wireLength = wireEnd &- offset
        switch proto {
        case .ipv4:
            return decodeIPv4(frame, r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut, frameLength: frameLength, depth: depth)
        case .ipv6:
            return decodeIPv6(frame, r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut, frameLength: frameLength, depth: depth)
        case .byVersion:
            guard let first = r.u8(at: offset) else { return .skipped(.truncatedHeader) }
            switch first >> 4 {
            case 4: return decodeIPv4(frame, r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut, frameLength: frameLength, depth: depth)
            case 6: return decodeIPv6(frame, r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut, frameLength: frameLength, depth: depth)
            default: return .skipped(.notIP)
            }
        }
    }

    @inline(__always)
    private func decodeIPv4(
        _ frame: CapturedFrame, _ r: ByteReader, at offset: Int,
        wireLength: Int, snaplenCut: Bool, frameLength: Int, depth: Int
    ) -> DecodeResult {
        let ip: IPv4Header
        switch IPv4.parse(r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut) {
        case .ok(let header): ip = header
        case .skip(let reason): return .skipped(reason)
        }
        guard ip.protocolNumber == IPv4.protocolTCP || ip.protocolNumber == IPv4.protocolUDP else {
            return .skipped(.notTCP)
        }
        let source = IPAddress(ipv4: ip.source)
        let destination = IPAddress(ipv4: ip.destination)
        if ip.isFragment {
            let key = FragmentKey(
                source: source, destination: destination,
                identification: UInt32(ip.identification), protocolNumber: ip.protocolNumber)
            return defragment(
                frame, r, key, dataRange: (offset &+ ip.headerLength)..<(offset &+ ip.totalLength),
                headerLength: ip.headerLength, fragmentOffset: ip.fragmentOffset, moreFragments: ip.moreFragments,
                frameLength: frameLength, depth: depth)
        }
        return transport(
            ip.protocolNumber, frame, r, at: offset &+ ip.headerLength, declaredEnd: offset &+ ip.totalLength,
            source: source, destination: destination, frameLength: frameLength, ipLength: ip.totalLength,
            snaplenCut: snaplenCut, depth: depth)
    }

    @inline(__always)
    private func decodeIPv6(
        _ frame: CapturedFrame, _ r: ByteReader, at offset: Int,
        wireLength: Int, snaplenCut: Bool, frameLength: Int, depth: Int
    ) -> DecodeResult {
        let ip: IPv6Header
        switch IPv6.parse(r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut) {
        case .ok(let header): ip = header
        case .skip(let reason): return .skipped(reason)
        }
        let ipLength = IPv6.headerLength &+ ip.payloadLength
        let source = IPAddress(high: ip.sourceHigh, low: ip.sourceLow, isIPv6: true)
        let destination = IPAddress(high: ip.destinationHigh, low: ip.destinationLow, isIPv6: true)
        if let fragment = ip.fragment {
            let key = FragmentKey(
                source: source, destination: destination, identification: fragment.identification,
                protocolNumber: ip.upperProtocol)
            return defragment(
                frame, r, key, dataRange: ip.upperOffset..<(offset &+ ipLength),
                headerLength: ip.upperOffset &- offset, fragmentOffset: fragment.offset,
                moreFragments: fragment.moreFragments, frameLength: frameLength, depth: depth)
        }
        return transport(
            ip.upperProtocol, frame, r, at: ip.upperOffset, declaredEnd: offset &+ ipLength,
            source: source, destination: destination, frameLength: frameLength, ipLength: ipLength,
            snaplenCut: snaplenCut, depth: depth)
    }

    /// The TCP segment or UDP datagram at `offset`, whose IP length ends at `declaredEnd`.
    @inline(__always)
    private func transport(
        _ protocolNumber: UInt8, _ frame: CapturedFrame, _ r: ByteReader, at offset: Int, declaredEnd: Int,
        source: IPAddress, destination: IPAddress, frameLength: Int, ipLength: Int, snaplenCut: Bool, depth: Int
    ) -> DecodeResult {
        if protocolNumber == IPv4.protocolTCP {
            return segment(
                r, tcpOffset: offset, declaredEnd: declaredEnd, source: source, destination: destination,
                frameLength: frameLength, ipLength: ipLength, frame: frame)
        }
        return datagram(
            frame, r, udpOffset: offset, declaredEnd: declaredEnd, source: source, destination: destination,
            frameLength: frameLength, ipLength: ipLength, snaplenCut: snaplenCut, depth: depth)
    }

    /// Parses the TCP header at `tcpOffset` and builds the segment; the payload runs to the IP
    /// length (`declaredEnd`), of which only the captured part is borrowed.
    @inline(__always)
    private func segment(
        _ r: ByteReader, tcpOffset: Int, declaredEnd: Int,
        source: IPAddress, destination: IPAddress,
        frameLength: Int, ipLength: Int, frame: CapturedFrame
    ) -> DecodeResult {
        let tcp: TCPHeader
        switch TCP.parse(r, at: tcpOffset, declaredEnd: declaredEnd) {
        case .ok(let header): tcp = header
        case .skip(let reason): return .skipped(reason)
        }
        let payloadStart = tcpOffset &+ tcp.headerLength
        // Trimming to the IP length keeps Ethernet padding (and trailers) out of the payload.
        let capturedEnd = min(declaredEnd, r.count)
        guard let payload = r.slice(payloadStart..<max(payloadStart, capturedEnd)) else {
            return .skipped(.truncatedHeader)
        }
        return .segment(
            TCPSegment(
                source: TransportEndpoint(address: source, port: tcp.sourcePort),
                destination: TransportEndpoint(address: destination, port: tcp.destinationPort),
                sequence: tcp.sequence, acknowledgment: tcp.acknowledgment,
                flags: TCPFlags(rawValue: tcp.flags), window: tcp.window,
                payload: payload, payloadLength: declaredEnd &- payloadStart,
                frameLength: frameLength, ipLength: ipLength,
                timestamp: frame.timestamp, frameNumber: frame.number))
    }

    /// Parses the UDP header at `udpOffset` and builds the datagram, or opens the tunnel it
    /// carries (VXLAN, Teredo) when what is inside decodes; otherwise the datagram itself.
    @inline(__always)
    private func datagram(
        _ frame: CapturedFrame, _ r: ByteReader, udpOffset: Int, declaredEnd: Int,
        source: IPAddress, destination: IPAddress, frameLength: Int, ipLength: Int, snaplenCut: Bool, depth: Int
    ) -> DecodeResult {
        let udp: UDPHeader
        switch UDP.parse(r, at: udpOffset, declaredEnd: declaredEnd) {
        case .ok(let header): udp = header
        case .skip(let reason): return .skipped(reason)
        }
        let payloadStart = udpOffset &+ UDP.headerLength
        let udpEnd = payloadStart &+ udp.payloadLength
        let capturedEnd = min(udpEnd, r.count)
        guard let payload = r.slice(payloadStart..<max(payloadStart, capturedEnd)) else {
            return .skipped(.truncatedHeader)
        }
        if depth < Self.maxTunnelDepth,
            let inner = tunnel(
                frame, r, udp, from: payloadStart, to: udpEnd, snaplenCut: snaplenCut, frameLength: frameLength,
                depth: depth)
        {
            return inner
        }
        return .datagram(
            UDPDatagram(
                source: TransportEndpoint(address: source, port: udp.sourcePort),
                destination: TransportEndpoint(address: destination, port: udp.destinationPort),
                payload: payload, payloadLength: udp.payloadLength, frameLength: frameLength, ipLength: ipLength,
                timestamp: frame.timestamp, frameNumber: frame.number))
    }

    /// What a VXLAN or Teredo datagram carries, when it decodes to a segment, a datagram or a
    /// held fragment; nil leaves the datagram as plain UDP (its bytes are still counted).
    private func tunnel(
        _ frame: CapturedFrame, _ r: ByteReader, _ udp: UDPHeader, from start: Int, to end: Int,
        snaplenCut: Bool, frameLength: Int, depth: Int
    ) -> DecodeResult? {
        let inner: DecodeResult
        if udp.destinationPort == UDP.vxlanPort || udp.sourcePort == UDP.vxlanPort {
            // Flags with the I bit (a valid network identifier), then the inner Ethernet frame.
            guard let flags = r.u8(at: start), flags & 0x08 != 0, let type = r.u16(at: start &+ 20) else { return nil }
            guard case .ok(let network) = LinkLayer.etherType(type, payloadOffset: start &+ 22, r) else { return nil }
            inner = decodeNetwork(
                frame, r, network.proto, at: network.offset, wireEnd: end, snaplenCut: snaplenCut,
                frameLength: frameLength, depth: depth &+ 1)
        } else if udp.destinationPort == UDP.teredoPort || udp.sourcePort == UDP.teredoPort {
            guard let offset = UDP.teredoInner(r, from: start, to: end) else { return nil }
            inner = decodeNetwork(
                frame, r, .ipv6, at: offset, wireEnd: end, snaplenCut: snaplenCut, frameLength: frameLength,
                depth: depth &+ 1)
        } else {
            return nil
        }
        if case .skipped = inner { return nil }
        return inner
    }

    /// The rare path: hands a fragment to the defragmenter, and decodes TCP or UDP from the
    /// reassembled datagram when this fragment completed it.
    private func defragment(
        _ frame: CapturedFrame, _ r: ByteReader, _ key: FragmentKey, dataRange: Range<Int>, headerLength: Int,
        fragmentOffset: Int, moreFragments: Bool, frameLength: Int, depth: Int
    ) -> DecodeResult {
        // A fragment cut by snaplen can never be part of a whole datagram.
        guard let data = r.slice(dataRange) else {
            defragmenter.discard(key)
            return .skipped(.badFragment)
        }
        switch defragmenter.add(
            key, headerLength: headerLength, offset: fragmentOffset,
            moreFragments: moreFragments, payload: data,
            frameLength: frameLength, time: frame.timestamp)
        {
        case .held:
            return .fragmentHeld
        case .heldAfterEviction, .rejected:
            return .skipped(.badFragment)
        case .complete(let payload, let headerLength, let frameLength):
            return transport(
                key.protocolNumber, frame, ByteReader(payload), at: 0, declaredEnd: payload.count,
                source: key.source, destination: key.destination,
                frameLength: frameLength, ipLength: headerLength &+ payload.count, snaplenCut: false, depth: depth)
        }
    }
}
