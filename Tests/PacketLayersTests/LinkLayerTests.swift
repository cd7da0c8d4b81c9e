import CaptureIO
import PacketLayers
import TestSupport
import XCTest

final class LinkLayerTests: XCTestCase {
    private let payload = Array("GET / HTTP/1.1\r\n\r\n".utf8)

    func testEveryLinkTypeDecodesIPv4() throws {
        for link in PacketBuilder.Link.all(ipv6: false) {
            let bytes = PacketBuilder.tcp(
                from: "10.0.0.1:1234", to: "10.0.0.2:80", seq: 1000, ack: 2000,
                flags: [.ack, .psh], window: 512, payload: payload, link: link)
            let segment = try decodeSegment(bytes, link: link)
            XCTAssertEqual(segment.source, endpoint("10.0.0.1:1234"), "\(link)")
            XCTAssertEqual(segment.destination, endpoint("10.0.0.2:80"), "\(link)")
            XCTAssertEqual(segment.sequence, 1000, "\(link)")
            XCTAssertEqual(segment.acknowledgment, 2000, "\(link)")
            XCTAssertEqual(segment.flags, [.ack, .psh], "\(link)")
            XCTAssertEqual(segment.window, 512, "\(link)")
            XCTAssertEqual(segment.payload, payload, "\(link)")
            XCTAssertEqual(segment.payloadLength, payload.count, "\(link)")
            XCTAssertEqual(segment.ipLength, 20 + 20 + payload.count, "\(link)")
            XCTAssertEqual(segment.frameLength, bytes.count, "\(link)")
        }
    }

    func testEveryLinkTypeDecodesIPv6() throws {
        for link in PacketBuilder.Link.all(ipv6: true) {
            let bytes = PacketBuilder.tcp(
                from: "[2001:db8::1]:49152", to: "[2001:db8::2]:443", seq: 7, ack: 9,
                flags: [.ack], payload: payload, link: link)
            let segment = try decodeSegment(bytes, link: link)
            XCTAssertEqual(segment.source, endpoint("[2001:db8::1]:49152"), "\(link)")
            XCTAssertEqual(segment.destination, endpoint("[2001:db8::2]:443"), "\(link)")
            XCTAssertEqual(segment.sequence, 7, "\(link)")
            XCTAssertEqual(segment.acknowledgment, 9, "\(link)")
            XCTAssertEqual(segment.payload, payload, "\(link)")
            XCTAssertEqual(segment.ipLength, 40 + 20 + payload.count, "\(link)")
        }
    }

    func testFrameMetadataIsCopiedIntoTheSegment() throws {
        let bytes = PacketBuilder.tcp(from: "10.0.0.1:1", to: "10.0.0.2:2", payload: [1, 2, 3])
        let outcome = PacketDecoder().decode(bytes, number: 42, timestamp: 1_700_000_000_123_456_789)
        let segment = try XCTUnwrap(outcome.segment)
        XCTAssertEqual(segment.frameNumber, 42)
        XCTAssertEqual(segment.timestamp, 1_700_000_000_123_456_789)
        XCTAssertEqual(segment.frameLength, 14 + 20 + 20 + 3)
    }

    func testVLANAndQinQ() throws {
        let links: [PacketBuilder.Link] = [
            .vlan(42),
            .qinq(outer: 100, inner: 200),
            .ethernetTagged([.init(tpid: 0x9100, id: 1), .init(tpid: 0x88A8, id: 2), .init(tpid: 0x8100, id: 3)]),
        ]
        for link in links {
            let bytes = PacketBuilder.tcp(
                from: "192.168.1.10:5555", to: "192.168.1.20:8080", seq: 123,
                payload: [9, 8, 7], link: link)
            let segment = try decodeSegment(bytes, link: link)
            XCTAssertEqual(segment.source, endpoint("192.168.1.10:5555"))
            XCTAssertEqual(segment.destination.port, 8080)
            XCTAssertEqual(segment.sequence, 123)
            XCTAssertEqual(segment.payload, [9, 8, 7])
        }
        // IPv6 inside QinQ.
        let link = PacketBuilder.Link.qinq(outer: 1, inner: 2)
        let bytes = PacketBuilder.tcp(from: "[fe80::1]:1", to: "[fe80::2]:2", payload: [1], link: link)
        XCTAssertEqual(try decodeSegment(bytes, link: link).source, endpoint("[fe80::1]:1"))
    }

    func testLinuxCookedWithVLANTag() throws {
        // libpcap re-inserts VLAN tags into SLL headers: protocol 0x8100, then TCI and the real type.
        var bytes = PacketBuilder.tcp(from: "10.1.1.1:10", to: "10.1.1.2:20", payload: [5], link: .linuxSLL)
        bytes.replaceSubrange(14..<16, with: [0x81, 0x00, 0x00, 0x07, 0x08, 0x00])
        XCTAssertEqual(try decodeSegment(bytes, link: .linuxSLL).payload, [5])
    }

    func testNullFamilyValuesInBothByteOrders() throws {
        for family: UInt32 in [24, 28, 30] {
            for bigEndian in [false, true] {
                let link = PacketBuilder.Link.bsdNull(bigEndian: bigEndian, ipv6Family: family)
                let bytes = PacketBuilder.tcp(from: "[::1]:5000", to: "[::1]:6000", payload: [1, 2], link: link)
                XCTAssertEqual(try decodeSegment(bytes, link: link).destination, endpoint("[::1]:6000"))
            }
        }
        // AF_INET6 on Linux is 10: not one of the BSD values, so not IP.
        var bytes = PacketBuilder.tcp(from: "[::1]:5000", to: "[::1]:6000", link: .null)
        bytes.replaceSubrange(0..<4, with: PacketBuilder.le32(10))
        XCTAssertEqual(decodeOutcome(bytes, link: .null), .skipped(.notIP))
    }

    func testLoopIsNetworkOrderOnly() {
        var bytes = PacketBuilder.tcp(from: "127.0.0.1:1", to: "127.0.0.1:2", link: .loop)
        bytes.replaceSubrange(0..<4, with: PacketBuilder.le32(2))
        XCTAssertEqual(decodeOutcome(bytes, link: .loop), .skipped(.notIP))
    }

    func testRawLinkTypesChooseTheVersion() {
        let v4 = PacketBuilder.tcp(from: "10.0.0.1:1", to: "10.0.0.2:2", link: .raw)
        let v6 = PacketBuilder.tcp(from: "[::1]:1", to: "[::2]:2", link: .raw)
        // 228 is IPv4 only, 229 IPv6 only: the wrong version is a malformed header.
        XCTAssertEqual(decodeOutcome(v6, link: .rawLinkType(228)), .skipped(.malformedIPv4))
        XCTAssertEqual(decodeOutcome(v4, link: .rawLinkType(229)), .skipped(.malformedIPv6))
        // A raw packet of another version is not IP.
        var other = v4
        other[0] = 0x55
        XCTAssertEqual(decodeOutcome(other, link: .raw), .skipped(.notIP))
        XCTAssertEqual(decodeOutcome([], link: .raw), .skipped(.truncatedHeader))
    }

    func testNonIPEtherTypes() {
        // ARP.
        var arp = PacketBuilder.destinationMAC + PacketBuilder.sourceMAC + [0x08, 0x06]
        arp += [UInt8](repeating: 0, count: 28)
        XCTAssertEqual(decodeOutcome(arp), .skipped(.notIP))
        // ARP inside a VLAN tag.
        let tagged =
            PacketBuilder.destinationMAC + PacketBuilder.sourceMAC + [0x81, 0x00, 0x00, 0x05, 0x08, 0x06]
            + [UInt8](repeating: 0, count: 28)
        XCTAssertEqual(decodeOutcome(tagged), .skipped(.notIP))
        // SLL carrying ARP, SLL2 carrying LLDP.
        var sll = PacketBuilder.tcp(from: "10.0.0.1:1", to: "10.0.0.2:2", link: .linuxSLL)
        sll[14] = 0x08
        sll[15] = 0x06
        XCTAssertEqual(decodeOutcome(sll, link: .linuxSLL), .skipped(.notIP))
        var sll2 = PacketBuilder.tcp(from: "10.0.0.1:1", to: "10.0.0.2:2", link: .linuxSLL2)
        sll2[0] = 0x88
        sll2[1] = 0xCC
        XCTAssertEqual(decodeOutcome(sll2, link: .linuxSLL2), .skipped(.notIP))
    }

    func testUnsupportedLinkTypes() {
        let bytes = PacketBuilder.tcp(from: "10.0.0.1:1", to: "10.0.0.2:2")
        for linkType: Int32 in [105, 127, 147, 192, -1, 9999] {
            XCTAssertEqual(PacketDecoder().decode(bytes, linkType: linkType), .skipped(.unsupportedLinkType))
        }
    }

    func testTruncatedLinkHeaders() {
        let cases: [(PacketBuilder.Link, Int)] = [
            (.ethernet, 13), (.vlan(1), 17), (.qinq(outer: 1, inner: 2), 21),
            (.linuxSLL, 15), (.linuxSLL2, 19), (.null, 3), (.loop, 3),
        ]
        for (link, keep) in cases {
            let bytes = PacketBuilder.tcp(from: "10.0.0.1:1", to: "10.0.0.2:2", link: link)
            for length in 0...keep {
                XCTAssertEqual(
                    decodeOutcome(Array(bytes.prefix(length)), link: link, originalLength: bytes.count),
                    .skipped(.truncatedHeader), "\(link) cut to \(length)")
            }
            // The link header whole but no IP byte at all.
            let linkLength = keep + 1
            XCTAssertEqual(
                decodeOutcome(Array(bytes.prefix(linkLength)), link: link, originalLength: bytes.count),
                .skipped(.truncatedHeader), "\(link) without IP")
        }
    }
}
