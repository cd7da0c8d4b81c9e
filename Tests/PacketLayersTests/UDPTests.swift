import CaptureIO
import PacketLayers
import TestSupport
import XCTest

/// UDP over IPv4 and IPv6, fragmented datagrams, the VXLAN and Teredo tunnels and NFLOG, each
/// packet built by hand and its byte counts worked out by hand in the comments.
final class UDPTests: XCTestCase {
    private let client = endpoint("10.0.0.1:50000")
    private let server = endpoint("10.0.0.2:443")
    private let client6 = endpoint("[2001:db8::1]:50000")
    private let server6 = endpoint("[2001:db8::2]:53")

    /// A UDP header (checksum left 0, as offload leaves it) and its payload.
    private func udp(_ from: TransportEndpoint, _ to: TransportEndpoint, _ payload: [UInt8], length: Int? = nil) -> [UInt8] {
        PacketBuilder.be16(from.port) + PacketBuilder.be16(to.port)
            + PacketBuilder.be16(UInt16(length ?? 8 + payload.count)) + [0, 0] + payload
    }

    private func ipv4UDP(_ from: TransportEndpoint, _ to: TransportEndpoint, _ payload: [UInt8], identification: UInt16 = 1) -> [UInt8] {
        PacketBuilder.ipv4(
            source: from.address, destination: to.address, protocolNumber: 17, payload: udp(from, to, payload),
            identification: identification)
    }

    func testIPv4Datagram() throws {
        let frame = PacketBuilder.frame(ipv4UDP(client, server, Array("hello".utf8)))
        let datagram = try XCTUnwrap(decodeOutcome(frame).datagram)
        XCTAssertEqual(datagram.source, client)
        XCTAssertEqual(datagram.destination, server)
        XCTAssertEqual(datagram.payload, Array("hello".utf8))
        // 14 Ethernet + 20 IPv4 + 8 UDP + 5 payload.
        XCTAssertEqual(datagram.frameLength, 47)
        XCTAssertEqual(datagram.ipLength, 33)
        XCTAssertEqual(datagram.payloadLength, 5)
    }

    func testEthernetPaddingIsNotPayload() throws {
        // 14 + 20 + 8 + 1 = 43 bytes, padded to 60 by the NIC: the payload stays 1 byte.
        let frame = PacketBuilder.frame(ipv4UDP(client, server, [0x42]), padToMinimum: true)
        XCTAssertEqual(frame.count, 60)
        let datagram = try XCTUnwrap(decodeOutcome(frame).datagram)
        XCTAssertEqual(datagram.payload, [0x42])
        XCTAssertEqual(datagram.ipLength, 29)
        XCTAssertEqual(datagram.frameLength, 60)
    }

    func testIPv6DatagramAfterExtensionHeader() throws {
        let ip = PacketBuilder.ipv6(
            source: client6.address, destination: server6.address, nextHeader: 17,
            payload: udp(client6, server6, Array("query".utf8)), extensions: [.hopByHop()])
        let datagram = try XCTUnwrap(decodeOutcome(PacketBuilder.frame(ip)).datagram)
        XCTAssertEqual(datagram.destination, server6)
        // 40 IPv6 + 8 hop-by-hop + 8 UDP + 5 payload; 14 more on Ethernet.
        XCTAssertEqual(datagram.ipLength, 61)
        XCTAssertEqual(datagram.frameLength, 75)
        XCTAssertEqual(datagram.payload, Array("query".utf8))
    }

    func testMalformedUDPLengths() {
        for length in [4, 14] { // under the header; past the IP payload of 8 + 5
            let ip = PacketBuilder.ipv4(
                source: client.address, destination: server.address, protocolNumber: 17,
                payload: udp(client, server, Array("hello".utf8), length: length))
            XCTAssertEqual(decodeOutcome(PacketBuilder.frame(ip)), .skipped(.malformedUDP), "length \(length)")
        }
        // Shorter than the IP payload is legal: the rest is IP padding (here 2 bytes).
        let short = PacketBuilder.ipv4(
            source: client.address, destination: server.address, protocolNumber: 17,
            payload: udp(client, server, Array("hello".utf8), length: 11))
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(short)).datagram?.payload, Array("hel".utf8))
    }

    func testFragmentedIPv4Datagram() throws {
        let payload = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let fragments = PacketBuilder.fragmentIPv4(ipv4UDP(client, server, payload, identification: 77), maxPayload: 1480)
            .map { PacketBuilder.frame($0) }
        // 3008 bytes of UDP in 1480 + 1480 + 48.
        XCTAssertEqual(fragments.map(\.count), [1514, 1514, 82])
        let decoder = PacketDecoder()
        XCTAssertEqual(decoder.decode(fragments[2]), .held) // out of order
        XCTAssertEqual(decoder.decode(fragments[0]), .held)
        let datagram = try XCTUnwrap(decoder.decode(fragments[1]).datagram)
        XCTAssertEqual(datagram.payload, payload)
        XCTAssertEqual(datagram.payloadLength, 3000)
        XCTAssertEqual(datagram.ipLength, 20 + 3008)
        XCTAssertEqual(datagram.frameLength, 1514 + 1514 + 82)
        XCTAssertEqual(decoder.pendingFragmentDatagrams, 0)
    }

    /// IPv6 fragments (RFC 8200 §4.5): the fragment header, then 1448-byte pieces of the UDP datagram.
    func testFragmentedIPv6Datagram() throws {
        let payload = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let whole = udp(client6, server6, payload) // 3008 bytes
        var frames: [[UInt8]] = []
        for start in stride(from: 0, to: whole.count, by: 1448) {
            let end = min(whole.count, start + 1448)
            let ip = PacketBuilder.ipv6(
                source: client6.address, destination: server6.address, nextHeader: 17,
                payload: Array(whole[start..<end]),
                extensions: [.fragment(offset: start, more: end < whole.count, identification: 0xABCD)])
            frames.append(PacketBuilder.frame(ip))
        }
        // 14 + 40 + 8 + data: 1448, 1448, 112.
        XCTAssertEqual(frames.map(\.count), [1510, 1510, 174])
        let decoder = PacketDecoder()
        XCTAssertEqual(decoder.decode(frames[1]), .held)
        XCTAssertEqual(decoder.decode(frames[0]), .held)
        let datagram = try XCTUnwrap(decoder.decode(frames[2]).datagram)
        XCTAssertEqual(datagram.payload, payload)
        XCTAssertEqual(datagram.destination, server6)
        XCTAssertEqual(datagram.ipLength, 48 + 3008)
        XCTAssertEqual(datagram.frameLength, 1510 + 1510 + 174)
    }

    func testVXLANCarriesATCPSegment() throws {
        let inner = PacketBuilder.tcp(from: "192.168.1.1:1234", to: "192.168.1.2:80", seq: 10, payload: Array("abc".utf8))
        XCTAssertEqual(inner.count, 14 + 20 + 20 + 3)
        let vxlan: [UInt8] = [0x08, 0, 0, 0, 0, 0, 0x2A, 0] + inner
        let outer = PacketBuilder.frame(
            ipv4UDP(endpoint("172.16.0.1:40000"), endpoint("172.16.0.2:4789"), vxlan))
        XCTAssertEqual(outer.count, 14 + 20 + 8 + 8 + 57)
        let segment = try decodeSegment(outer)
        XCTAssertEqual(segment.source, endpoint("192.168.1.1:1234"))
        XCTAssertEqual(segment.payload, Array("abc".utf8))
        XCTAssertEqual(segment.ipLength, 43) // the inner IP packet
        XCTAssertEqual(segment.frameLength, 107) // the whole outer frame: the tunnel is link bytes
        // Without the I flag it is not VXLAN: the datagram stays UDP on 4789, 65 bytes of payload.
        var bad = vxlan
        bad[0] = 0
        let plain = PacketBuilder.frame(ipv4UDP(endpoint("172.16.0.1:40000"), endpoint("172.16.0.2:4789"), bad))
        XCTAssertEqual(decodeOutcome(plain).datagram?.payloadLength, 65)
    }

    func testTeredoCarriesIPv6() throws {
        let inner = PacketBuilder.ipv6(
            source: client6.address, destination: server6.address, nextHeader: 17, payload: udp(client6, server6, [1, 2]))
        XCTAssertEqual(inner.count, 50)
        // An origin indication (type 0, obfuscated port and address) before the IPv6 packet.
        let teredo: [UInt8] = [0, 0, 0xAB, 0xCD, 1, 2, 3, 4] + inner
        let outer = PacketBuilder.frame(ipv4UDP(endpoint("198.51.100.1:3544"), endpoint("10.0.0.9:51000"), teredo))
        let datagram = try XCTUnwrap(decodeOutcome(outer).datagram)
        XCTAssertEqual(datagram.source, client6)
        XCTAssertEqual(datagram.payload, [1, 2])
        XCTAssertEqual(datagram.ipLength, 50)
        XCTAssertEqual(datagram.frameLength, 14 + 20 + 8 + 8 + 50)
        // A bubble (IPv6 with no next header) holds no TCP or UDP: it stays a UDP datagram on 3544.
        let bubble = PacketBuilder.ipv6(source: client6.address, destination: server6.address, nextHeader: 59, payload: [])
        let plain = PacketBuilder.frame(ipv4UDP(endpoint("198.51.100.1:3544"), endpoint("10.0.0.9:51000"), bubble))
        XCTAssertEqual(decodeOutcome(plain).datagram?.payloadLength, 40)
    }

    /// NFLOG: family AF_INET, version 0, resource id, a hardware-protocol TLV (8 bytes), then
    /// the payload TLV (type 9); TLV length and type in either byte order.
    func testNFLOG() throws {
        let ip = ipv4UDP(client, server, Array("hello".utf8))
        for littleEndian in [true, false] {
            func field(_ value: UInt16) -> [UInt8] {
                littleEndian ? [UInt8(value & 0xFF), UInt8(value >> 8)] : PacketBuilder.be16(value)
            }
            var bytes: [UInt8] = [2, 0, 0, 1]
            bytes += field(8) + field(1) + [0x08, 0x00, 0, 0]
            bytes += field(UInt16(4 + ip.count)) + field(9) + ip
            while bytes.count % 4 != 0 { bytes.append(0) }
            let outcome = PacketDecoder().decode(bytes, linkType: LinkType.nflog)
            let datagram = try XCTUnwrap(outcome.datagram, "\(outcome)")
            XCTAssertEqual(datagram.payload, Array("hello".utf8))
            XCTAssertEqual(datagram.ipLength, 33)
            XCTAssertEqual(datagram.frameLength, 4 + 8 + 4 + 33 + 3)
        }
        // No payload TLV: nothing to decode.
        XCTAssertEqual(PacketDecoder().decode([2, 0, 0, 1, 8, 0, 1, 0, 8, 0, 0, 0], linkType: LinkType.nflog), .skipped(.notIP))
    }

    /// The tunnels and NFLOG against tshark, which shares no code with the decoder: each frame
    /// above written to a capture, tshark's innermost IP source, transport source port, IP
    /// length and transport payload length must be the decoder's.
    func testTunnelsAsTsharkDecodesThem() throws {
        guard let tshark = executable("tshark") else { throw XCTSkip("tshark is not installed (scripts/setup)") }
        let vxlanInner = PacketBuilder.tcp(from: "192.168.1.1:1234", to: "192.168.1.2:80", seq: 10, payload: Array("abc".utf8))
        let vxlan = PacketBuilder.frame(
            ipv4UDP(endpoint("172.16.0.1:40000"), endpoint("172.16.0.2:4789"), [0x08, 0, 0, 0, 0, 0, 0x2A, 0] + vxlanInner))
        let teredoInner = PacketBuilder.ipv6(
            source: client6.address, destination: server6.address, nextHeader: 17, payload: udp(client6, server6, [1, 2]))
        let teredo = PacketBuilder.frame(
            ipv4UDP(endpoint("198.51.100.1:3544"), endpoint("10.0.0.9:51000"), [0, 0, 0xAB, 0xCD, 1, 2, 3, 4] + teredoInner))
        let ip = ipv4UDP(client, server, Array("hello".utf8))
        var nflog: [UInt8] = [2, 0, 0, 1, 8, 0, 1, 0, 0x08, 0x00, 0, 0]
        nflog += [UInt8(truncatingIfNeeded: 4 + ip.count), 0, 9, 0] + ip + [0, 0, 0]

        // (frame, link type): what the decoder makes of it, as tshark prints it.
        for (frame, linkType) in [(vxlan, LinkType.ethernet), (teredo, LinkType.ethernet), (nflog, LinkType.nflog)] {
            let outcome = PacketDecoder().decode(frame, linkType: linkType)
            let ours: [String]
            if let segment = outcome.segment {
                ours = [segment.source.address.description, String(segment.source.port), String(segment.ipLength), String(segment.payload.count)]
            } else if let datagram = outcome.datagram {
                ours = [datagram.source.address.description, String(datagram.source.port), String(datagram.ipLength), String(datagram.payloadLength)]
            } else {
                XCTFail("\(linkType): \(outcome)")
                continue
            }
            let path = try CaptureFileWriter.temporaryFile(
                named: "tunnel.pcap",
                containing: CaptureFileWriter.pcap([.init(timestamp: 1_000_000_000, bytes: frame)], linkType: linkType))
            let fields = try runTool(
                tshark,
                ["-r", path, "-T", "fields", "-E", "occurrence=l", "-E", "separator=,", "-e", "ip.src", "-e", "ipv6.src",
                 "-e", "tcp.srcport", "-e", "udp.srcport", "-e", "ip.len", "-e", "ipv6.plen", "-e", "tcp.len", "-e", "udp.length"]
            ).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            XCTAssertEqual(fields.count, 8, "\(fields)")
            guard fields.count == 8 else { continue }
            // Innermost: IPv6 inside IPv4 (Teredo) means the IPv6 fields; TCP over UDP (VXLAN) the TCP ones.
            let innerIPv6 = !fields[1].isEmpty && ours[0].contains(":")
            let address = innerIPv6 ? fields[1] : fields[0]
            let port = outcome.segment != nil ? fields[2] : fields[3]
            let ipLength = innerIPv6 ? String((Int(fields[5]) ?? 0) + 40) : fields[4]
            let payload = outcome.segment != nil ? fields[6] : String((Int(fields[7]) ?? 0) - 8)
            XCTAssertEqual(ours, [address, port, ipLength, payload], "link type \(linkType): decoder vs tshark \(fields)")
        }
    }
}
