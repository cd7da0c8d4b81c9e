import CaptureIO

/// Decodes frames in place, link layer to TCP. One instance per capture file; it keeps
/// the IPv4 fragments that wait for reassembly.
///
/// Plain (unfragmented) packets are decoded without any heap allocation: headers are read
/// straight from `frame.bytes` with bounds-checked loads, and the segment's payload borrows
/// the frame. Link types: Ethernet (with any number of 802.1Q/802.1ad/0x9100 tags, then
/// optionally a PPPoE session or an MPLS label stack), Linux cooked v1/v2, BSD null and
/// OpenBSD loop, raw IP (101, 12, 14, 228, 229).
public final class PacketDecoder {
    private let defragmenter: IPv4Defragmenter

    /// - Parameter maxPendingFragmentBytes: the most memory IPv4 fragments waiting for their
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

    /// Decodes one frame down to its TCP segment.
    ///
    /// The segment's `payload` borrows `frame.bytes`, or for a reassembled IPv4 datagram a
    /// decoder-owned buffer; either way it is valid until the next call.
    public func decode(_ frame: CapturedFrame) -> DecodeResult {
        let r = ByteReader(frame.bytes)
        let network: (offset: Int, proto: NetworkProtocol)
        switch LinkLayer.decode(r, linkType: frame.linkType) {
        case .ok(let found): network = found
        case .skip(let reason): return .skipped(reason)
        }

        // What was on the wire from the IP header on; a broken file may claim an original
        // length below the captured one, so never less than what we hold.
        let wireLength = max(frame.originalLength, r.count) &- network.offset
        let snaplenCut = r.count < frame.originalLength

        switch network.proto {
        case .ipv4:
            return decodeIPv4(frame, r, at: network.offset, wireLength: wireLength, snaplenCut: snaplenCut)
        case .ipv6:
            return decodeIPv6(frame, r, at: network.offset, wireLength: wireLength, snaplenCut: snaplenCut)
        case .byVersion:
            guard let first = r.u8(at: network.offset) else { return .skipped(.truncatedHeader) }
            switch first >> 4 {
            case 4: return decodeIPv4(frame, r, at: network.offset, wireLength: wireLength, snaplenCut: snaplenCut)
            case 6: return decodeIPv6(frame, r, at: network.offset, wireLength: wireLength, snaplenCut: snaplenCut)
            default: return .skipped(.notIP)
            }
        }
    }

    @inline(__always)
    private func decodeIPv4(
        _ frame: CapturedFrame, _ r: ByteReader, at offset: Int,
        wireLength: Int, snaplenCut: Bool
    ) -> DecodeResult {
        let ip: IPv4Header
        switch IPv4.parse(r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut) {
        case .ok(let header): ip = header
        case .skip(let reason): return .skipped(reason)
        }
        guard ip.protocolNumber == IPv4.protocolTCP else { return .skipped(.notTCP) }
        let source = IPAddress(ipv4: ip.source)
        let destination = IPAddress(ipv4: ip.destination)
        if ip.isFragment {
            return defragment(frame, r, ip, at: offset, source: source, destination: destination)
        }
        let tcpOffset = offset &+ ip.headerLength
        return segment(
            r, tcpOffset: tcpOffset, declaredEnd: offset &+ ip.totalLength,
            source: source, destination: destination,
            frameLength: frame.originalLength, ipLength: ip.totalLength, frame: frame)
    }

    @inline(__always)
    private func decodeIPv6(
        _ frame: CapturedFrame, _ r: ByteReader, at offset: Int,
        wireLength: Int, snaplenCut: Bool
    ) -> DecodeResult {
        let ip: IPv6Header
        switch IPv6.parse(r, at: offset, wireLength: wireLength, snaplenCut: snaplenCut) {
        case .ok(let header): ip = header
        case .skip(let reason): return .skipped(reason)
        }
        let ipLength = IPv6.headerLength &+ ip.payloadLength
        return segment(
            r, tcpOffset: ip.tcpOffset, declaredEnd: offset &+ ipLength,
            source: IPAddress(high: ip.sourceHigh, low: ip.sourceLow, isIPv6: true),
            destination: IPAddress(high: ip.destinationHigh, low: ip.destinationLow, isIPv6: true),
            frameLength: frame.originalLength, ipLength: ipLength, frame: frame)
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

    /// The rare path: hands a fragment to the defragmenter, and decodes TCP from the
    /// reassembled datagram when this fragment completed it.
    private func defragment(
        _ frame: CapturedFrame, _ r: ByteReader, _ ip: IPv4Header, at offset: Int,
        source: IPAddress, destination: IPAddress
    ) -> DecodeResult {
        let key = FragmentKey(
            source: ip.source, destination: ip.destination,
            identification: ip.identification, protocolNumber: ip.protocolNumber)
        // A fragment cut by snaplen can never be part of a whole datagram.
        guard let data = r.slice((offset &+ ip.headerLength)..<(offset &+ ip.totalLength)) else {
            defragmenter.discard(key)
            return .skipped(.badFragment)
        }
        switch defragmenter.add(
            key, headerLength: ip.headerLength, offset: ip.fragmentOffset,
            moreFragments: ip.moreFragments, payload: data,
            frameLength: frame.originalLength, time: frame.timestamp)
        {
        case .held:
            return .fragmentHeld
        case .heldAfterEviction, .rejected:
            return .skipped(.badFragment)
        case .complete(let payload, let headerLength, let frameLength):
            return segment(
                ByteReader(payload), tcpOffset: 0, declaredEnd: payload.count,
                source: source, destination: destination,
                frameLength: frameLength, ipLength: headerLength &+ payload.count, frame: frame)
        }
    }
}
