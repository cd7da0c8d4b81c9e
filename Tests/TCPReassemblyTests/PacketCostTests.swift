@testable import TCPReassembly
import Flows
import PacketLayers
import TestSupport
import XCTest

/// The cost of every packet, told after the packet was placed (docs/METERING.md §2c). The
/// script's packets are Ethernet + IPv4 + TCP without options: 40 B of headers, 14 B of link.
final class PacketCostTests: XCTestCase {
    private func packet(
        _ from: TransportEndpoint, _ to: TransportEndpoint, seq: UInt32, ack: UInt32, flags: TCPFlags = [.ack],
        _ text: String = ""
    ) -> Packet {
        Packet(
            source: from, destination: to, sequence: seq, acknowledgment: ack, flags: flags,
            payload: Array(text.utf8), payloadLength: text.utf8.count)
    }

    func testEveryPacketIsToldWithOffsetRepeatsAndAcknowledgment() {
        let c = clientEndpoint
        let s = serverEndpoint
        let packets = stamped([
            packet(c, s, seq: 100, ack: 0, flags: [.syn]),
            packet(s, c, seq: 900, ack: 101, flags: [.syn, .ack]),
            packet(c, s, seq: 101, ack: 901),
            packet(c, s, seq: 106, ack: 901, "world"), // ahead of a hole: offset 5
            packet(c, s, seq: 101, ack: 901, "hello"), // fills it: offset 0, nothing repeated
            packet(c, s, seq: 101, ack: 901, "hello"), // a copy: 5 B repeated
            packet(c, s, seq: 104, ack: 901, "loworld!"), // 7 B repeated, 1 new ("!")
            packet(s, c, seq: 901, ack: 112), // acknowledges the client's 11 B
            packet(c, s, seq: 112, ack: 901, flags: [.fin, .ack]),
            packet(s, c, seq: 901, ack: 113, flags: [.fin, .ack]),
            packet(c, s, seq: 113, ack: 902),
        ])
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        harness.assertNoProblems()
        guard let connection = harness.handlers.first else { return XCTFail("no connection") }
        let client = connection.costs[Direction.up.rawValue]
        let server = connection.costs[Direction.down.rawValue]
        // Client: SYN, ACK, four with payload, FIN, ACK; server: SYN/ACK, ACK, FIN.
        XCTAssertEqual(client.count, 8)
        XCTAssertEqual(server.count, 3)
        XCTAssertEqual(client.map(\.payloadLength), [0, 0, 5, 5, 5, 8, 0, 0])
        XCTAssertEqual(client.map(\.offset)[2...5], [5, 0, 0, 3])
        XCTAssertEqual(client.map(\.repeatedBytes), [0, 0, 0, 0, 5, 7, 0, 0])
        XCTAssertEqual(client.map(\.headerBytes), Array(repeating: 40, count: 8))
        XCTAssertEqual(client.map(\.linkBytes), Array(repeating: 14, count: 8))
        // Client offsets acknowledged: SYN/ACK 101 → 0, ACK 112 → 11, FIN's ACK of the FIN 113 → 12.
        XCTAssertEqual(server.map(\.acknowledged), [0, 11, 12])
    }

    /// A SYN or FIN without payload sent again is a retransmission (the kernel counts it as
    /// one); the first of each, a pure ACK, and a FIN at a new offset are not.
    func testRepeatedSYNAndFINAreTold() {
        let c = clientEndpoint
        let s = serverEndpoint
        let packets = stamped([
            packet(c, s, seq: 100, ack: 0, flags: [.syn]),
            packet(c, s, seq: 100, ack: 0, flags: [.syn]), // SYN again
            packet(s, c, seq: 900, ack: 101, flags: [.syn, .ack]),
            packet(c, s, seq: 101, ack: 901, "hi"),
            packet(c, s, seq: 103, ack: 901, flags: [.fin, .ack]),
            packet(c, s, seq: 103, ack: 901, flags: [.fin, .ack]), // FIN again, same offset 2
            packet(s, c, seq: 901, ack: 104, flags: [.fin, .ack]),
            packet(c, s, seq: 104, ack: 902),
        ])
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        guard let connection = harness.handlers.first else { return XCTFail("no connection") }
        let client = connection.costs[Direction.up.rawValue]
        let server = connection.costs[Direction.down.rawValue]
        XCTAssertEqual(client.map(\.repeatsControl), [false, true, false, false, true, false])
        XCTAssertEqual(server.map(\.repeatsControl), [false, false])
    }
}
