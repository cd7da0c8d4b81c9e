import CaptureIO
import PacketLayers
import TestSupport
import XCTest

final class IPv6Tests: XCTestCase {
    private let a = endpoint("[2001:db8::10]:50000")
    private let b = endpoint("[2001:db8:1::20]:443")
    private let data = Array("hello, world".utf8)

    private func frame(_ extensions: [PacketBuilder.IPv6Extension], payload: [UInt8]? = nil) -> [UInt8] {
        PacketBuilder.tcp(
            from: a, to: b, seq: 77, ack: 88, flags: [.ack, .psh], payload: payload ?? data,
            ipv6Extensions: extensions)
    }

    func testHopByHopAndDestinationOptions() throws {
        let bytes = frame([.hopByHop(), .destinationOptions(units: 2)])
        XCTAssertEqual(bytes[14 + 6], 0) // next header: hop-by-hop
        let segment = try decodeSegment(bytes)
        XCTAssertEqual(segment.source, a)
        XCTAssertEqual(segment.destination, b)
        XCTAssertEqual(segment.sequence, 77)
        XCTAssertEqual(segment.acknowledgment, 88)
        XCTAssertEqual(segment.payload, data)
        XCTAssertEqual(segment.payloadLength, data.count)
        XCTAssertEqual(segment.ipLength, 40 + 8 + 16 + 20 + data.count)
    }

    func testRoutingAuthenticationAndAtomicFragment() throws {
        let bytes = frame([
            .hopByHop(units: 3), .routing(addresses: 2), .fragment(), .authentication(icvWords: 5),
            .destinationOptions(),
        ])
        let segment = try decodeSegment(bytes)
        XCTAssertEqual(segment.payload, data)
        XCTAssertEqual(segment.ipLength, 40 + 24 + 40 + 8 + 32 + 8 + 20 + data.count)
    }

    func testRealFragmentsAreHeldForReassembly() {
        XCTAssertEqual(decodeOutcome(frame([.fragment(offset: 0, more: true)])), .held)
        XCTAssertEqual(decodeOutcome(frame([.fragment(offset: 1448, more: false)])), .held)
        XCTAssertEqual(decodeOutcome(frame([.hopByHop(), .fragment(offset: 8, more: true)])), .held)
    }

    func testNotTCP() {
        let esp = PacketBuilder.ipv6(
            source: a.address, destination: b.address, nextHeader: 50,
            payload: [UInt8](repeating: 0x11, count: 40))
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(esp)), .skipped(.notTCP))
        let none = PacketBuilder.ipv6(source: a.address, destination: b.address, nextHeader: 59, payload: [0, 0])
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(none)), .skipped(.notTCP))
        let empty = PacketBuilder.ipv6(source: a.address, destination: b.address, nextHeader: 59, payload: [])
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(empty)), .skipped(.notTCP))
        // A UDP header whose length field (0 here) is not the jumbogram case: 8 bytes, so an empty datagram.
        let udp = PacketBuilder.ipv6(
            source: a.address, destination: b.address, nextHeader: 17,
            payload: [0, 1, 0, 2, 0, 8, 0, 0], extensions: [.hopByHop()])
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(udp)).datagram?.payloadLength, 0)
        let icmp = PacketBuilder.ipv6(
            source: a.address, destination: b.address, nextHeader: 58,
            payload: [128, 0, 0, 0, 0, 1, 0, 1])
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(icmp)), .skipped(.notTCP))
    }

    func testMalformed() {
        let tcp = PacketBuilder.tcpSegment(from: a, to: b, seq: 1, ack: 1, flags: [.ack], payload: data)
        // Version 4 under the IPv6 EtherType.
        var wrongVersion = frame([])
        wrongVersion[14] = 0x45
        XCTAssertEqual(decodeOutcome(wrongVersion), .skipped(.malformedIPv6))
        // Jumbogram: payload length 0 with a hop-by-hop header.
        let jumbo = PacketBuilder.ipv6(
            source: a.address, destination: b.address, payload: tcp,
            extensions: [.hopByHop()], payloadLength: 0)
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(jumbo)), .skipped(.malformedIPv6))
        // Payload length beyond a frame that was not truncated.
        let long = PacketBuilder.ipv6(source: a.address, destination: b.address, payload: tcp, payloadLength: 1000)
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(long)), .skipped(.malformedIPv6))
        // An extension header running past the payload length.
        var overrun = frame([.destinationOptions()], payload: [])
        overrun[14 + 40 + 1] = 9 // 80 bytes announced, 28 in the payload
        XCTAssertEqual(decodeOutcome(overrun), .skipped(.malformedIPv6))
        // Payload length too short for the extension header.
        let short = PacketBuilder.ipv6(
            source: a.address, destination: b.address, payload: tcp,
            extensions: [.hopByHop()], payloadLength: 4)
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(short)), .skipped(.malformedIPv6))
        // Payload length too short for the TCP header.
        let shortTCP = PacketBuilder.ipv6(source: a.address, destination: b.address, payload: tcp, payloadLength: 12)
        XCTAssertEqual(decodeOutcome(PacketBuilder.frame(shortTCP)), .skipped(.malformedTCP))
    }

    func testPaddingAndTrailersAreTrimmed() throws {
        let bytes = frame([.hopByHop()]) + [0, 0, 0, 0, 0, 0]
        let segment = try decodeSegment(bytes)
        XCTAssertEqual(segment.payload, data)
        XCTAssertEqual(segment.payloadLength, data.count)
    }

    func testSnaplenTruncation() throws {
        let payload = [UInt8](repeating: 0x77, count: 1200)
        let full = frame([.hopByHop()], payload: payload)
        let segment = try decodeSegment(Array(full.prefix(128)), originalLength: full.count)
        XCTAssertEqual(segment.payloadLength, 1200)
        XCTAssertEqual(segment.payload.count, 128 - (14 + 40 + 8 + 20))
        XCTAssertEqual(segment.ipLength, 40 + 8 + 20 + 1200)
        // Cut in the fixed header, in the extension header, in the TCP header.
        for keep in [14, 30, 53, 54, 55, 61, 62, 70, 81] {
            XCTAssertEqual(
                decodeOutcome(Array(full.prefix(keep)), originalLength: full.count),
                .skipped(.truncatedHeader), "cut at \(keep)")
        }
    }
}
