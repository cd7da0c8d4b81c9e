import CaptureIO
import PacketLayers
import TestSupport
import XCTest

/// PPPoE sessions and MPLS label stacks between Ethernet (and its VLAN tags) and IP. The
/// decoded fields of every framing are also checked against tshark (TsharkOracleTests, via
/// `Link.all`); here: where the IP header is found, and why the rest is skipped.
final class EncapsulationTests: XCTestCase {
    private let payload = Array("GET / HTTP/1.1\r\n\r\n".utf8)
    private let mac = PacketBuilder.destinationMAC + PacketBuilder.sourceMAC

    private var ipv4Packet: [UInt8] {
        PacketBuilder.tcpPacket(
            from: endpoint("10.0.0.1:1234"), to: endpoint("10.0.0.2:80"), seq: 5,
            payload: payload)
    }

    func testPPPoEUnderQinQCarriesIPv4() throws {
        let link = PacketBuilder.Link.pppoe(tags: [.init(tpid: 0x88A8, id: 10), .init(id: 20)], session: 0xBEEF)
        let bytes = PacketBuilder.frame(ipv4Packet, link: link)
        // 12 MAC + 2 × 4 tags + 2 EtherType + 6 PPPoE + 2 PPP protocol = 30 bytes before IP.
        XCTAssertEqual(bytes.count, 30 + ipv4Packet.count)
        let segment = try decodeSegment(bytes, link: link)
        XCTAssertEqual(segment.payload, payload)
        XCTAssertEqual(segment.ipLength, 20 + 20 + payload.count)
        XCTAssertEqual(segment.frameLength, bytes.count)
    }

    func testPPPoEWithoutIPIsSkippedByReason() {
        // Discovery (PADI): EtherType 0x8863, ver/type 0x11, code 0x09, session 0, no tags.
        let discovery = mac + [0x88, 0x63, 0x11, 0x09, 0, 0, 0, 0]
        XCTAssertEqual(decodeOutcome(discovery), .skipped(.pppoeDiscovery))
        // A session frame with LCP (0xC021) inside.
        let lcp = mac + [0x88, 0x64, 0x11, 0x00, 0x12, 0x34, 0x00, 0x06, 0xC0, 0x21, 1, 1, 0, 4]
        XCTAssertEqual(decodeOutcome(lcp), .skipped(.pppNotIP))
        // Version/type 0x21 or code 0x07 (PADO) in a session frame: not a PPPoE session.
        var badVersion = PacketBuilder.frame(ipv4Packet, link: .pppoe(tags: [], session: 1))
        badVersion[14] = 0x21
        XCTAssertEqual(decodeOutcome(badVersion), .skipped(.malformedPPPoE))
        var badCode = PacketBuilder.frame(ipv4Packet, link: .pppoe(tags: [], session: 1))
        badCode[15] = 0x07
        XCTAssertEqual(decodeOutcome(badCode), .skipped(.malformedPPPoE))
        // Cut inside the PPP protocol field: 14 + 7 bytes.
        let cut = Array(PacketBuilder.frame(ipv4Packet, link: .pppoe(tags: [], session: 1)).prefix(21))
        XCTAssertEqual(decodeOutcome(cut), .skipped(.truncatedHeader))
    }

    func testMPLSStackCarriesIPv4AndIPv6() throws {
        let link = PacketBuilder.Link.mpls(labels: [1000, 2000, 3000, 4000])
        let bytes = PacketBuilder.frame(ipv4Packet, link: link)
        // 14 Ethernet + 4 labels × 4 bytes = 30 bytes before IP.
        XCTAssertEqual(bytes.count, 30 + ipv4Packet.count)
        XCTAssertEqual(try decodeSegment(bytes, link: link).payload, payload)

        let ipv6 = PacketBuilder.tcp(from: "[2001:db8::1]:1", to: "[2001:db8::2]:2", payload: payload, link: link)
        XCTAssertEqual(try decodeSegment(ipv6, link: link).ipLength, 40 + 20 + payload.count)

        // Multicast MPLS (0x8848) is the same stack.
        var multicast = bytes
        multicast[13] = 0x48
        XCTAssertEqual(try decodeSegment(multicast).payload, payload)
    }

    func testMPLSWithoutIPIsSkippedByReason() {
        // One label (bottom of stack) over a pseudowire control word (first nibble 0).
        let pseudowire = mac + [0x88, 0x47, 0x00, 0x01, 0x01, 0x40] + [0, 0, 0, 0] + mac + [0x08, 0x00]
        XCTAssertEqual(decodeOutcome(pseudowire), .skipped(.mplsNotIP))
        // Labels without a bottom-of-stack bit run to the end of the frame.
        let endless = mac + [0x88, 0x47] + [UInt8](repeating: 0, count: 4 * 5)
        XCTAssertEqual(decodeOutcome(endless), .skipped(.truncatedHeader))
        // Bottom of stack, then nothing.
        let empty = mac + [0x88, 0x47, 0x00, 0x01, 0x01, 0x40]
        XCTAssertEqual(decodeOutcome(empty), .skipped(.truncatedHeader))
    }
}
