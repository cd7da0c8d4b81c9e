import Analysis
import Flows
@testable import MeterAuditKit
import Records
import TCPReassembly
import XCTest

/// `DirectionLedger` and `ConnectionCostLedger` (docs/METERING.md §2c) fed packets built by
/// hand. Every packet has 40 B of IP and TCP headers and 14 B of link layer, so a packet of n
/// payload bytes is n at TCP, n + 40 at IP, n + 54 at the frame; the arithmetic is beside
/// each assertion.
final class DirectionLedgerTests: XCTestCase {
    private func packet(
        _ offset: Int64, _ length: Int, repeated: Int = 0, acknowledged: Int64? = nil
    ) -> PacketCost {
        PacketCost(
            time: 0, offset: offset, payloadLength: length, headerBytes: 40, linkBytes: 14, repeatedBytes: repeated,
            acknowledged: acknowledged)
    }

    /// A pure ACK (no payload) acknowledging the peer's stream up to `offset`.
    private func ack(_ offset: Int64) -> PacketCost { packet(0, 0, acknowledged: offset) }

    private func layers(tcp: Int, ip: Int, frame: Int, retransmitted: Int = 0, packets: Int) -> LowerLayers {
        LowerLayers(tcp: tcp, ip: ip, frame: frame, retransmitted: retransmitted, packets: packets)
    }

    /// Payload split byte-wise by owner; headers and link bytes to the owner of the first
    /// payload byte, even when most of the packet is the next message's.
    func testPayloadSplitsByOwnerAndHeadersGoToTheFirstBytesOwner() {
        let ledger = DirectionLedger(limits: Limits())
        let a = LayerSlot(ledger: ledger)
        let b = LayerSlot(ledger: ledger)
        ledger.claim(0..<100, by: .message(a))
        ledger.claim(100..<150, by: .message(b))
        ledger.add(packet(0, 60))  // all A: 60 / 100 / 114
        ledger.add(packet(60, 90))  // 40 of A (and the headers), 50 of B
        // A: tcp 60 + 40 = 100; ip 100 + 40 + 40 = 180; frame 114 + 40 + 54 = 208; 2 packets.
        XCTAssertEqual(a.layers, layers(tcp: 100, ip: 180, frame: 208, packets: 2))
        // B: its 50 payload bytes only, at every layer; it begins no packet.
        XCTAssertEqual(b.layers, layers(tcp: 50, ip: 50, frame: 50, packets: 0))
        // Total: tcp 150, ip 150 + 2 × 40 = 230, frame 230 + 2 × 14 = 258; no overhead.
        XCTAssertEqual(ledger.cost.total, LayerBytes(tcp: 150, ip: 230, frame: 258))
        XCTAssertEqual(ledger.cost.overhead, LayerBytes())
        XCTAssertEqual(a.claimed, 100)
        XCTAssertEqual(a.carried, 100)
        XCTAssertEqual(a.tcpEnd, 100)
        XCTAssertEqual(b.tcpEnd, 150)
    }

    /// A packet whose first byte nobody claimed: its headers are the connection's (`unclaimed`),
    /// the message after the hole gets its payload bytes only.
    func testPacketStartingInAHoleChargesItsHeadersToUnclaimed() {
        let ledger = DirectionLedger(limits: Limits())
        let a = LayerSlot(ledger: ledger)
        let b = LayerSlot(ledger: ledger)
        ledger.claim(0..<10, by: .message(a))
        ledger.claim(20..<30, by: .message(b))  // 10..<20 nobody's
        ledger.add(packet(0, 10))  // A: 10 / 50 / 64
        ledger.add(packet(10, 20))  // 10 nobody's (+ headers), 10 of B
        XCTAssertEqual(a.layers, layers(tcp: 10, ip: 50, frame: 64, packets: 1))
        XCTAssertEqual(b.layers, layers(tcp: 10, ip: 10, frame: 10, packets: 0))
        // unclaimed: tcp 10, ip 10 + 40 = 50, frame 10 + 54 = 64.
        XCTAssertEqual(ledger.cost.unclaimed, LayerBytes(tcp: 10, ip: 50, frame: 64))
    }

    /// Packets wait until their bytes are placed; an empty packet never waits.
    func testPacketsWaitForTheirOwner() {
        let ledger = DirectionLedger(limits: Limits())
        let a = LayerSlot(ledger: ledger)
        let b = LayerSlot(ledger: ledger)
        ledger.add(packet(0, 50))  // nothing placed: waits
        ledger.add(packet(0, 0))  // empty: 0 / 40 / 54 to empty_packets at once
        XCTAssertEqual(ledger.cost.emptyPackets, LayerBytes(tcp: 0, ip: 40, frame: 54))
        XCTAssertEqual(ledger.cost.emptyPacketCount, 1)
        // Totals count on arrival: tcp 50, ip 50 + 40 + 40 = 130, frame 130 + 28 = 158.
        XCTAssertEqual(ledger.cost.total, LayerBytes(tcp: 50, ip: 130, frame: 158))
        ledger.claim(0..<30, by: .message(a))
        XCTAssertTrue(ledger.hasPending(before: 30))  // 30..<50 not placed yet
        XCTAssertEqual(a.layers, layers(tcp: 0, ip: 0, frame: 0, packets: 0))
        ledger.claim(30..<50, by: .message(b))  // placed: charged now
        XCTAssertFalse(ledger.hasPending(before: .max))
        // A: 30 + headers (30 / 70 / 84); B: 20 at each layer.
        XCTAssertEqual(a.layers, layers(tcp: 30, ip: 70, frame: 84, packets: 1))
        XCTAssertEqual(b.layers, layers(tcp: 20, ip: 20, frame: 20, packets: 0))
        XCTAssertEqual(ledger.cost.forcedPackets, 0)
    }

    /// Past maxPacketsAwaitingOwner the oldest waiting packet is charged as things stand: its
    /// unplaced bytes become nobody's, so the message claiming them later gets none of them.
    func testFullQueueChargesTheOldestPacketToOverhead() {
        var limits = Limits()
        limits.maxPacketsAwaitingOwner = 2
        let ledger = DirectionLedger(limits: limits)
        let a = LayerSlot(ledger: ledger)
        ledger.add(packet(0, 10))
        ledger.add(packet(10, 10))
        XCTAssertEqual(ledger.cost.forcedPackets, 0)
        ledger.add(packet(20, 10))  // 3 waiting > 2: 0..<10 goes to unclaimed, headers too
        XCTAssertEqual(ledger.cost.forcedPackets, 1)
        XCTAssertEqual(ledger.cost.unclaimed, LayerBytes(tcp: 10, ip: 50, frame: 64))
        ledger.claim(0..<30, by: .message(a))  // 0..<10 placed already: A gets 10..<30
        // A: 2 packets of 10: tcp 20, ip 20 + 80 = 100, frame 20 + 108 = 128.
        XCTAssertEqual(a.layers, layers(tcp: 20, ip: 100, frame: 128, packets: 2))
        XCTAssertEqual(a.claimed, 20)
        XCTAssertEqual(ledger.cost.unclaimed, LayerBytes(tcp: 10, ip: 50, frame: 64))
    }

    /// A copy sent before the peer's ACK is charged to its message again (retransmitted);
    /// one sent after the ACK covered the message goes to unclaimed and counts as a late copy.
    func testCopyBeforeTheAckIsTheMessagesAndAfterItIsLate() {
        let connection = ConnectionCostLedger(limits: Limits())
        let ledger = connection.initiator
        let a = LayerSlot(ledger: ledger)
        ledger.claim(0..<100, by: .message(a))
        connection.add(packet(0, 100), from: .up)  // 100 / 140 / 154
        connection.add(packet(0, 100, repeated: 100), from: .up)  // lost? sent again
        // A: tcp 200, ip 280, frame 308, retransmitted 100, 2 packets.
        XCTAssertEqual(a.layers, layers(tcp: 200, ip: 280, frame: 308, retransmitted: 100, packets: 2))
        XCTAssertFalse(a.isSettled)
        connection.add(ack(100), from: .down)  // the peer's ACK covers A's end
        XCTAssertTrue(a.isSettled)
        connection.add(packet(40, 60, repeated: 60), from: .up)  // a third copy, too late
        XCTAssertEqual(a.layers, layers(tcp: 200, ip: 280, frame: 308, retransmitted: 100, packets: 2))
        // unclaimed: 60 / 100 / 114.
        XCTAssertEqual(ledger.cost.unclaimed, LayerBytes(tcp: 60, ip: 100, frame: 114))
        XCTAssertEqual(ledger.cost.lateCopies, 1)
        XCTAssertEqual(ledger.cost.retransmittedSegments, 2)
        XCTAssertEqual(ledger.cost.retransmittedBytes, 160)
        // A copy for a message whose record took its figures (sealed) is late too, ACK or not.
        let b = LayerSlot(ledger: ledger)
        ledger.claim(100..<110, by: .message(b))
        connection.add(packet(100, 10), from: .up)
        XCTAssertEqual(b.seal(settled: false), layers(tcp: 10, ip: 50, frame: 64, packets: 1).lowerBounded)
        connection.add(packet(100, 10, repeated: 10), from: .up)
        // unclaimed: 60 + 10 = 70; ip 100 + 50 = 150; frame 114 + 64 = 178.
        XCTAssertEqual(ledger.cost.unclaimed, LayerBytes(tcp: 70, ip: 150, frame: 178))
        XCTAssertEqual(ledger.cost.lateCopies, 2)
    }

    /// A slot settles when the peer's ACK covers its end and no waiting packet starts inside
    /// it; or when the connection is over.
    func testLayerSlotSettlesByThePeersAck() {
        let connection = ConnectionCostLedger(limits: Limits())
        let a = LayerSlot(ledger: connection.responder)
        connection.responder.claim(0..<50, by: .message(a))
        connection.add(packet(0, 40), from: .down)
        connection.add(packet(40, 20), from: .down)  // 40..<60: 50..<60 not placed, waits
        connection.add(ack(30), from: .up)
        XCTAssertEqual(connection.responder.acknowledged, 30)
        XCTAssertFalse(a.isSettled)  // ACK short of 50
        connection.add(ack(60), from: .up)
        XCTAssertEqual(connection.initiator.acknowledged, .min)  // the ACK was for the responder's stream
        XCTAssertFalse(a.isSettled)  // the waiting packet 40..<60 starts inside A
        connection.settle(.down, upTo: 60)  // 50..<60 nobody's: the packet is charged
        XCTAssertTrue(a.isSettled)
        // A: 40 / 80 / 94, then 10 of the second packet and its headers: 50 / 130 / 158.
        XCTAssertEqual(a.layers, layers(tcp: 50, ip: 130, frame: 158, packets: 2))
        XCTAssertEqual(connection.responder.cost.unclaimed, LayerBytes(tcp: 10, ip: 10, frame: 10))
        // An unacknowledged slot settles when the connection closes.
        let b = LayerSlot(ledger: connection.initiator)
        connection.initiator.claim(0..<5, by: .message(b))
        XCTAssertFalse(b.isSettled)
        connection.close()
        XCTAssertTrue(b.isSettled)
    }

    /// A slot no record took (bytes the parser dropped) gives every layer, TLS included, to
    /// unclaimed; a packet after the close is not shared out any more.
    func testReleasedSlotGoesToUnclaimed() {
        let ledger = DirectionLedger(limits: Limits())
        let a = LayerSlot(ledger: ledger)
        ledger.claim(0..<20, by: .message(a))
        ledger.addTLS(20, to: .message(a))
        ledger.add(packet(0, 20))
        ledger.release(a)
        XCTAssertEqual(ledger.cost.unclaimed, LayerBytes(tls: 20, tcp: 20, ip: 60, frame: 74))
        ledger.release(a)  // once only
        XCTAssertEqual(ledger.cost.unclaimed, LayerBytes(tls: 20, tcp: 20, ip: 60, frame: 74))
    }

    /// The connection's row: every overhead kind per direction, the client's cost in the
    /// client's columns (here the client is the responder side).
    func testFillPutsEachOverheadKindInTheConnectionsRow() {
        let connection = ConnectionCostLedger(limits: Limits())
        let client = connection.responder
        client.claim(0..<20, by: .tlsControl)
        client.addTLS(20, to: .tlsControl)
        client.addTLSTotal(20)
        client.claim(20..<29, by: .http2Control)
        client.settle(upTo: 50)  // 29..<50 nobody's
        connection.add(packet(0, 0), from: .down)  // SYN: empty, 0 / 40 / 54
        connection.add(packet(0, 20), from: .down)  // tls_control 20 / 60 / 74
        connection.add(packet(20, 9), from: .down)  // h2_control 9 / 49 / 63
        connection.add(packet(29, 21), from: .down)  // unclaimed 21 / 61 / 75
        connection.add(packet(0, 20, repeated: 20), from: .down)  // tls_control again
        let server = connection.initiator
        let a = LayerSlot(ledger: server)
        server.claim(0..<10, by: .message(a))
        connection.add(packet(0, 10), from: .up)  // A: 10 / 50 / 64
        var row = ConnectionRow(input: "t", connection: 0, client: "c", server: "s", protocolKind: .h2)
        connection.fill(&row, clientSide: .down)

        let up = row.clientCost
        XCTAssertEqual(up.emptyPackets, LayerBytes(tcp: 0, ip: 40, frame: 54))
        XCTAssertEqual(up.emptyPacketCount, 1)
        // Two copies of 20: tls 20 (TLS bytes counted once, by the relay), tcp 40, ip 120, frame 148.
        XCTAssertEqual(up.tlsControl, LayerBytes(tls: 20, tcp: 40, ip: 120, frame: 148))
        XCTAssertEqual(up.http2Control, LayerBytes(tcp: 9, ip: 49, frame: 63))
        XCTAssertEqual(up.unclaimed, LayerBytes(tcp: 21, ip: 61, frame: 75))
        // Total: tcp 20 + 9 + 21 + 20 = 70; ip 70 + 5 × 40 = 270; frame 270 + 5 × 14 = 340.
        XCTAssertEqual(up.total, LayerBytes(tls: 20, tcp: 70, ip: 270, frame: 340))
        XCTAssertEqual(up.overhead, up.total)  // no message: all of it is overhead
        XCTAssertEqual(up.retransmittedSegments, 1)
        XCTAssertEqual(up.retransmittedBytes, 20)
        XCTAssertEqual(up.lateCopies, 0)

        let down = row.serverCost
        XCTAssertEqual(down.total, LayerBytes(tcp: 10, ip: 50, frame: 64))
        XCTAssertEqual(down.overhead, LayerBytes())
        XCTAssertEqual(a.layers, layers(tcp: 10, ip: 50, frame: 64, packets: 1))
    }
}

extension LowerLayers {
    /// The same figures flagged as lower bounds (a slot sealed before it settled).
    fileprivate var lowerBounded: LowerLayers {
        var result = self
        result.lowerBound = true
        return result
    }
}
