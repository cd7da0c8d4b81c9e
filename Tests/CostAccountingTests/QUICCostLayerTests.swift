@testable import CostAccounting
import Flows
import XCTest

/// `QUICCostLayer` (docs/METERING.md §2d) fed datagrams, packets and STREAM frames built by
/// hand, with hand-counted expectations. Every datagram has 20 B of IP header and 8 B of UDP
/// header (`headerBytes` 28); the link layer is given per datagram.
final class QUICCostLayerTests: XCTestCase {
    // Kinds by index, not registered: the registry is the test process's, and a report test
    // reads every registered kind (`OverheadKind.all`). The layer charges only these and `unclaimed`.
    private let kinds = QUICCostLayer.Kinds(
        handshake: OverheadKind(index: 7), ack: OverheadKind(index: 8), control: OverheadKind(index: 9),
        padding: OverheadKind(index: 10))
    private let h3Control = OverheadKind(index: 11)

    private func datagram(_ payload: Int, link: Int) -> PacketCost {
        PacketCost(time: 0, offset: 0, payloadLength: payload, headerBytes: 28, linkBytes: link)
    }

    func testPacketsSplitOverTheOwnersOfTheirStreamBytes() throws {
        let layer = QUICCostLayer(costs: ConnectionCostLedger(), kinds: kinds, limits: CostLimits())

        // Datagram 1 (100 B payload, 14 B link): one 1-RTT packet of 100 B carrying stream 0's
        // bytes 0..<60 (a 64 B frame) and stream 4's bytes 0..<20 (a 23 B frame); 13 B of
        // header, packet number, tag and other frames. Its owners are claimed after it.
        layer.beginDatagram(from: .up, datagram(100, link: 14))
        layer.streamFrame(0, from: .up, offset: 0, dataBytes: 60, frameBytes: 64, repeated: 0)
        layer.streamFrame(4, from: .up, offset: 0, dataBytes: 20, frameBytes: 23, repeated: 0)
        layer.packet(from: .up, .stream, bytes: 100, firstInDatagram: true)
        layer.endDatagram(from: .up, padding: 0)
        layer.claim(0..<40, of: .up, stream: 0, by: .message(startingAt: 0))
        let first = try XCTUnwrap(layer.takeSlot(of: .up, stream: 0, startingAt: 0))
        // Waits for stream 4 (and stream 0's 40..<60).
        XCTAssertEqual(first.layers.tcp, 0)
        layer.claim(40..<60, of: .up, stream: 0, by: .message(startingAt: 40))
        layer.claim(0..<20, of: .up, stream: 4, by: .overhead(h3Control))
        let second = try XCTUnwrap(layer.takeSlot(of: .up, stream: 0, startingAt: 40))
        // First: 40 data + 4 frame header + 13 packet bytes = 57 QUIC; + 8 UDP = 65; + 20 IP = 85; + 14 = 99.
        XCTAssertEqual(first.layers.tcp, 57)
        XCTAssertEqual(first.layers.udp, 65)
        XCTAssertEqual(first.layers.ip, 85)
        XCTAssertEqual(first.layers.frame, 99)
        // Second: its 20 data bytes alone.
        XCTAssertEqual(second.layers.tcp, 20)
        XCTAssertEqual(second.layers.udp, 20)
        XCTAssertEqual(second.layers.frame, 20)
        XCTAssertFalse(first.isSettled, "settled when the connection closes")

        // Datagram 2 (50 B, 14 B link): an ACK-only packet of 30 B, then 15 zeros and 5 bytes
        // that are no packet.
        layer.beginDatagram(from: .up, datagram(50, link: 14))
        layer.packet(from: .up, .ackOnly, bytes: 30, firstInDatagram: true)
        layer.endDatagram(from: .up, padding: 15)

        // Datagram 3 (40 B, no link): stream 0's bytes 30..<50 sent again in a 24 B frame of a
        // 40 B packet: 10 bytes of each message, the rest (16 + 4 + 28 headers) to the first.
        layer.beginDatagram(from: .up, datagram(40, link: 0))
        layer.streamFrame(0, from: .up, offset: 30, dataBytes: 20, frameBytes: 24, repeated: 20)
        layer.packet(from: .up, .stream, bytes: 40, firstInDatagram: true)
        layer.endDatagram(from: .up, padding: 0)

        // An Initial packet from the server: 1200 B, its datagram's every byte quic_handshake.
        layer.beginDatagram(from: .down, datagram(1200, link: 14))
        layer.packet(from: .down, .handshake, bytes: 1200, firstInDatagram: true)
        layer.endDatagram(from: .down, padding: 0)

        layer.close()
        XCTAssertTrue(first.isSettled)
        let firstLayers = try XCTUnwrap(first.seal(settled: true))
        // 57 + (10 + 4 + 16) = 87 QUIC; 65 + 30 + 8 = 103 UDP; 85 + 30 + 28 = 143 IP; 99 + 58 = 157.
        XCTAssertEqual(firstLayers.tcp, 87)
        XCTAssertEqual(firstLayers.udp, 103)
        XCTAssertEqual(firstLayers.ip, 143)
        XCTAssertEqual(firstLayers.frame, 157)
        XCTAssertEqual(firstLayers.retransmitted, 10)
        XCTAssertFalse(firstLayers.lowerBound)
        let secondLayers = try XCTUnwrap(second.seal(settled: true))
        XCTAssertEqual(secondLayers.tcp, 30)
        XCTAssertEqual(secondLayers.udp, 30)
        XCTAssertEqual(secondLayers.ip, 30)
        XCTAssertEqual(secondLayers.frame, 30)
        XCTAssertEqual(secondLayers.retransmitted, 10)

        let up = layer.cost[Direction.up.rawValue]
        // 100 + 50 + 40 payload; + 3 × 28 headers = 274 IP; + 28 link = 302; UDP 190 + 24 = 214.
        XCTAssertEqual(up.total, LayerBytes(tcp: 190, ip: 274, frame: 302))
        XCTAssertEqual(up.udp, 214)
        XCTAssertEqual(up[h3Control], LayerBytes(tcp: 23, ip: 23, frame: 23))
        // The ACK-only packet took datagram 2's headers: 30 + 28 = 58 IP, 72 frame, 38 UDP.
        XCTAssertEqual(up[kinds.ack], LayerBytes(tcp: 30, ip: 58, frame: 72))
        XCTAssertEqual(up[kinds.padding], LayerBytes(tcp: 15, ip: 15, frame: 15))
        XCTAssertEqual(up[.unclaimed], LayerBytes(tcp: 5, ip: 5, frame: 5))
        XCTAssertEqual(up.overheadUDP, 23 + 38 + 15 + 5)
        XCTAssertEqual(up.retransmittedBytes, 20)
        XCTAssertEqual(up.retransmittedSegments, 1)
        // Every byte in one place: records + overhead = totals at each layer.
        XCTAssertEqual(firstLayers.tcp + secondLayers.tcp + up.overhead.tcp, 190)
        XCTAssertEqual(103 + 30 + up.overheadUDP, 214)
        XCTAssertEqual(firstLayers.ip + secondLayers.ip + up.overhead.ip, 274)
        XCTAssertEqual(firstLayers.frame + secondLayers.frame + up.overhead.frame, 302)

        let down = layer.cost[Direction.down.rawValue]
        XCTAssertEqual(down[kinds.handshake], LayerBytes(tcp: 1200, ip: 1228, frame: 1242))
        XCTAssertEqual(down.overhead, down.total)
    }

    /// Stream bytes no claim placed, and a slot no record took, belong to no message.
    func testUnclaimedStreamBytesAndUntakenSlots() throws {
        let layer = QUICCostLayer(costs: ConnectionCostLedger(), kinds: kinds, limits: CostLimits())
        layer.beginDatagram(from: .down, datagram(60, link: 0))
        layer.streamFrame(0, from: .down, offset: 0, dataBytes: 30, frameBytes: 33, repeated: 0)
        layer.streamFrame(8, from: .down, offset: 0, dataBytes: 10, frameBytes: 12, repeated: 0)
        layer.packet(from: .down, .stream, bytes: 60, firstInDatagram: true)
        layer.endDatagram(from: .down, padding: 0)
        // Stream 0's response is claimed but its record never comes; stream 8 is never claimed.
        layer.claim(0..<30, of: .down, stream: 0, by: .message(startingAt: 0))
        layer.close()
        let down = layer.cost[Direction.down.rawValue]
        // 60 + 28 IP: everything unclaimed (the slot's 33 + 15 + 28 headers, stream 8's 12).
        XCTAssertEqual(down[.unclaimed], LayerBytes(tcp: 60, ip: 88, frame: 88))
        XCTAssertEqual(down.overheadUDP, 68)
        XCTAssertEqual(down.overhead, down.total)
    }
}
