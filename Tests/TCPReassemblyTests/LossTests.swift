@testable import TCPReassembly
import Flows
import PacketLayers
import TestSupport
import XCTest

/// Segments the capture lost, snaplen truncation, RST, and the buffer limits.
final class LossTests: XCTestCase {
    private let exchange = Exchange(
        request: sampleRequest, response: sampleResponse,
        requestSizes: requestSizes, responseSizes: responseSizes)

    private func gapEvent(_ side: Direction, connection: Int = 0) -> (Event) -> Bool {
        { if case .gap(connection, side, _, _) = $0 { return true } else { return false } }
    }

    private func endEvent(_ event: Event) -> Bool {
        if case .end = event { return true } else { return false }
    }

    /// The capture lost a response segment the client got: the client's ACK past the hole
    /// gives it up as one gap, right there, and everything after it is delivered.
    func testLostSegmentIsReportedWhenThePeerAcknowledgesPastIt() {
        let flow = exchange.flow
        for lost in exchange.responseSends.indices {
            var script = exchange.handshakePackets() + exchange.requestPackets()
            var ackAfterLoss = -1
            for (index, cut) in exchange.responseSends.enumerated() {
                if index != lost {
                    script.append(flow.data(.down, exchange.response, cut, ack: exchange.request.count))
                }
                // The real client received everything, so it acknowledges every segment.
                if index == lost { ackAfterLoss = script.count }
                script.append(flow.packet(.up, offset: exchange.request.count, ack: cut.end))
            }
            script += exchange.teardownPackets()
            let packets = stamped(script)
            let harness = Harness()
            harness.feed(packets)
            harness.finish()
            let connection = harness.handlers[0]
            let hole = exchange.responseSends[lost]
            XCTAssertEqual(
                connection.gaps(.down), [SeenGap(offset: Int64(hole.offset), length: hole.length)],
                "lost \(lost)")
            XCTAssertEqual(connection.gapTimes[1], [packets[ackAfterLoss].time], "lost \(lost)")
            XCTAssertEqual(harness.log.packetIndex(of: gapEvent(.down)), ackAfterLoss, "lost \(lost)")
            XCTAssertLessThan(harness.log.index(of: gapEvent(.down))!, harness.log.index(of: endEvent)!)
            assertSameBytes(connection.stream(.down), withGaps(exchange.response, [hole]), "lost \(lost)")
            assertSameBytes(connection.stream(.up), exchange.request)
            XCTAssertEqual(connection.ends, [.fin, .fin])
            let accounting = connection.accounting!
            XCTAssertEqual(accounting.responder.gaps, 1)
            XCTAssertEqual(accounting.responder.gapBytes, hole.length)
            XCTAssertEqual(accounting.responder.retransmittedBytes, 0)
            XCTAssertEqual(accounting.initiator.gaps, 0)
            harness.assertNoProblems()
        }
    }

    /// Lost request segment, acknowledged by the server's data.
    func testLostRequestSegmentIsReportedAtTheServersAck() {
        let lost = 3
        var script = exchange.handshakePackets()
        for (index, cut) in exchange.requestSends.enumerated() where index != lost {
            script.append(exchange.flow.data(.up, exchange.request, cut, ack: 0))
        }
        let firstResponse = script.count
        script += exchange.responsePackets() + exchange.teardownPackets()
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        let connection = harness.handlers[0]
        let hole = exchange.requestSends[lost]
        XCTAssertEqual(connection.gaps(.up), [SeenGap(offset: Int64(hole.offset), length: hole.length)])
        XCTAssertEqual(harness.log.packetIndex(of: gapEvent(.up)), firstResponse)
        assertSameBytes(connection.stream(.up), withGaps(exchange.request, [hole]))
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.ends, [.fin, .fin])
        harness.assertNoProblems()
    }

    /// Nothing acknowledges the hole: it is given up when the capture ends, and the FIN
    /// waiting behind it still ends the side.
    func testUnacknowledgedLostSegmentIsReportedAtEndOfCapture() {
        let flow = exchange.flow
        for lost in exchange.responseSends.indices {
            var script = exchange.handshakePackets() + exchange.requestPackets()
            for (index, cut) in exchange.responseSends.enumerated() where index != lost {
                script.append(flow.data(.down, exchange.response, cut, ack: exchange.request.count))
            }
            script.append(flow.fin(.down, offset: exchange.response.count, ack: exchange.request.count))
            let harness = Harness()
            harness.feed(stamped(script))
            let connection = harness.handlers[0]
            XCTAssertEqual(connection.gaps(.down), [], "nothing gives the hole up before the end")
            harness.finish()
            let hole = exchange.responseSends[lost]
            XCTAssertEqual(connection.gaps(.down), [SeenGap(offset: Int64(hole.offset), length: hole.length)])
            XCTAssertEqual(harness.log.packetIndex(of: gapEvent(.down)), -1)
            assertSameBytes(connection.stream(.down), withGaps(exchange.response, [hole]), "lost \(lost)")
            XCTAssertEqual(connection.ends, [.endOfCapture, .fin])
            XCTAssertEqual(connection.accounting?.responder.gapBytes, hole.length)
            harness.assertNoProblems()
        }
    }

    /// Nothing acknowledges the hole until the client's RST: given up when the RST takes
    /// effect (here at the end of the capture, the client having sent nothing more), at the
    /// RST's time.
    func testUnacknowledgedLostSegmentIsReportedAtReset() {
        let flow = exchange.flow
        let lost = 2
        var script = exchange.handshakePackets() + exchange.requestPackets()
        for (index, cut) in exchange.responseSends.enumerated() where index != lost {
            script.append(flow.data(.down, exchange.response, cut, ack: exchange.request.count))
        }
        let reset = script.count
        script.append(flow.rst(.up, offset: exchange.request.count))
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        let connection = harness.handlers[0]
        // Pending until the client is seen to go quiet.
        XCTAssertEqual(connection.ends, [nil, nil])
        harness.finish()
        let hole = exchange.responseSends[lost]
        XCTAssertEqual(connection.gaps(.down), [SeenGap(offset: Int64(hole.offset), length: hole.length)])
        XCTAssertEqual(harness.log.packetIndex(of: gapEvent(.down)), -1)
        assertSameBytes(connection.stream(.down), withGaps(exchange.response, [hole]))
        assertSameBytes(connection.stream(.up), exchange.request)
        XCTAssertEqual(connection.ends, [.reset, .reset])
        XCTAssertEqual(connection.endTimes, [packets[reset].time, packets[reset].time])
        let accounting = connection.accounting!
        XCTAssertEqual(accounting.initiatorEnd, .reset)
        XCTAssertEqual(accounting.responderEnd, .reset)
        XCTAssertEqual(accounting.ignoredResets, 0)
        XCTAssertEqual(harness.assembler.ignoredResets, 0)
        assertAccounting(accounting.responder, sentBy: serverEndpoint, in: packets)
        harness.assertNoProblems()
    }

    /// The server's retransmission of the lost segment arrives after the client's RST (it was
    /// in flight): the capture holds the bytes, so they fill the hole; the RST still stands,
    /// because its sender, the client, sent nothing new after it.
    func testPeerDataAfterResetIsDeliveredAndTheResetStands() {
        let flow = exchange.flow
        let lost = 2
        var script = exchange.handshakePackets() + exchange.requestPackets()
        for (index, cut) in exchange.responseSends.enumerated() where index != lost {
            script.append(flow.data(.down, exchange.response, cut, ack: exchange.request.count))
        }
        let reset = script.count
        script.append(flow.rst(.up, offset: exchange.request.count))
        script.append(
            flow.data(.down, exchange.response, exchange.responseSends[lost], ack: exchange.request.count))
        // A repeated ACK from the client (offset 0, as with its request) does not revive it either.
        script.append(flow.packet(.up, offset: exchange.request.count, ack: 0))
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.gaps(.down), [])
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.ends, [.reset, .reset])
        XCTAssertEqual(connection.endTimes, [packets[reset].time, packets[reset].time])
        XCTAssertEqual(connection.accounting?.ignoredResets, 0)
        harness.assertNoProblems()
    }

    /// The FIN waits behind the hole and the client acknowledges the FIN: one gap for the
    /// hole, none for the FIN's sequence number.
    func testAckOfBufferedFinGivesUpOnlyTheHole() {
        let flow = exchange.flow
        for lost in exchange.responseSends.indices {
            var script = exchange.handshakePackets() + exchange.requestPackets()
            for (index, cut) in exchange.responseSends.enumerated() where index != lost {
                script.append(flow.data(.down, exchange.response, cut, ack: exchange.request.count))
            }
            script.append(flow.fin(.down, offset: exchange.response.count, ack: exchange.request.count))
            script.append(flow.fin(.up, offset: exchange.request.count, ack: exchange.response.count + 1))
            let harness = Harness()
            harness.feed(stamped(script))
            let connection = harness.handlers[0]
            let hole = exchange.responseSends[lost]
            XCTAssertEqual(
                connection.gaps(.down), [SeenGap(offset: Int64(hole.offset), length: hole.length)],
                "lost \(lost)")
            XCTAssertEqual(harness.log.packetIndex(of: gapEvent(.down)), script.count - 1)
            XCTAssertEqual(connection.ends, [.fin, .fin])
            harness.finish()
            XCTAssertEqual(connection.accounting?.responder.gapBytes, hole.length)
            assertSameBytes(connection.stream(.down), withGaps(exchange.response, [hole]))
            harness.assertNoProblems()
        }
    }

    /// Bytes a broken sender put after its FIN are not part of the stream, even when they
    /// wait in the buffer behind the FIN.
    func testBytesAfterFinAreNotDelivered() {
        let flow = exchange.flow
        let sends = exchange.responseSends
        let last = sends.count - 1
        var script = exchange.handshakePackets() + exchange.requestPackets()
        for cut in sends.dropFirst() {
            script.append(
                flow.data(
                    .down, exchange.response, cut, ack: exchange.request.count,
                    flags: cut.end == exchange.response.count ? [.psh, .fin] : .psh))
        }
        script.append(
            flow.packet(
                .down, offset: exchange.response.count, Array("junk".utf8), ack: exchange.request.count,
                flags: .psh))
        // A copy of a segment before the FIN, sorted behind it in the buffer.
        script.append(
            flow.data(
                .down, exchange.response, Cut(offset: sends[last].offset + 1, length: 2),
                ack: exchange.request.count))
        script.append(flow.data(.down, exchange.response, sends[0], ack: exchange.request.count))
        let harness = Harness()
        harness.feed(stamped(script))
        harness.finish()
        let connection = harness.handlers[0]
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.ends, [.endOfCapture, .fin])
        XCTAssertEqual(connection.accounting?.responder.retransmittedBytes, 2)
        XCTAssertEqual(harness.assembler.bufferedBytesTotal, 0)
        harness.assertNoProblems()
    }

    func testTwoLostSegmentsAreTwoGaps() {
        let flow = exchange.flow
        let lost: Set<Int> = [1, 6]
        var script = exchange.handshakePackets() + exchange.requestPackets()
        for (index, cut) in exchange.responseSends.enumerated() {
            if !lost.contains(index) {
                script.append(flow.data(.down, exchange.response, cut, ack: exchange.request.count))
            }
            if index % 4 == 3 { script.append(flow.packet(.up, offset: exchange.request.count, ack: cut.end)) }
        }
        script += exchange.teardownPackets()
        let harness = Harness()
        harness.feed(stamped(script))
        harness.finish()
        let connection = harness.handlers[0]
        let holes = lost.sorted().map { exchange.responseSends[$0] }
        XCTAssertEqual(connection.gaps(.down), holes.map { SeenGap(offset: Int64($0.offset), length: $0.length) })
        assertSameBytes(connection.stream(.down), withGaps(exchange.response, holes))
        XCTAssertEqual(connection.accounting?.responder.gaps, 2)
        XCTAssertEqual(connection.accounting?.responder.gapBytes, holes.reduce(0) { $0 + $1.length })
        harness.assertNoProblems()
    }

    // MARK: - Snaplen truncation

    /// A cut packet: its captured bytes, then a gap for the rest; the stream goes on at the
    /// right offset.
    func testTruncatedSegmentDeliversBytesThenGap() {
        let flow = exchange.flow
        for (index, missing) in [(0, 10), (3, 200), (5, 1), (8, 250), (11, 45)] {
            // In order; arriving ahead of its predecessor (buffered); after its successor.
            for swap in [0, -1, 1] where index + swap >= 0 && index + swap < exchange.responseSends.count {
                let truncated = exchange.responseSends[index]
                var sends = exchange.responseSends.map { ($0, 0) }
                sends[index].1 = missing
                sends.swapAt(index, index + swap)
                var script = exchange.handshakePackets() + exchange.requestPackets()
                for (cut, cutOff) in sends {
                    var packet = flow.data(.down, exchange.response, cut, ack: exchange.request.count)
                    packet.payload.removeLast(cutOff)
                    script.append(packet)
                }
                script += exchange.teardownPackets()
                let packets = stamped(script)
                let harness = Harness()
                harness.feed(packets)
                harness.finish()
                let connection = harness.handlers[0]
                let tail = Cut(offset: truncated.end - missing, length: missing)
                let context = "segment \(index) missing \(missing) swap \(swap)"
                XCTAssertEqual(
                    connection.gaps(.down), [SeenGap(offset: Int64(tail.offset), length: missing)], context)
                assertSameBytes(connection.stream(.down), withGaps(exchange.response, [tail]), context)
                XCTAssertEqual(connection.ends, [.fin, .fin], context)
                let accounting = connection.accounting!
                XCTAssertEqual(accounting.responder.truncatedBytes, missing, context)
                XCTAssertEqual(accounting.responder.gaps, 0, "truncation is counted apart from lost segments")
                XCTAssertEqual(accounting.responder.retransmittedBytes, 0, context)
                assertAccounting(accounting.responder, sentBy: serverEndpoint, in: packets)
                harness.assertNoProblems()
            }
        }
    }

    /// Snaplen below the TCP payload: no byte captured, the whole payload is a gap.
    func testFullyTruncatedSegment() {
        let flow = exchange.flow
        let index = 4
        var script = exchange.handshakePackets() + exchange.requestPackets()
        for (position, cut) in exchange.responseSends.enumerated() {
            var packet = flow.data(.down, exchange.response, cut, ack: exchange.request.count)
            if position == index { packet.payload = [] }
            script.append(packet)
        }
        script += exchange.teardownPackets()
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        let connection = harness.handlers[0]
        let cut = exchange.responseSends[index]
        XCTAssertEqual(connection.gaps(.down), [SeenGap(offset: Int64(cut.offset), length: cut.length)])
        assertSameBytes(connection.stream(.down), withGaps(exchange.response, [cut]))
        XCTAssertEqual(connection.accounting?.responder.truncatedBytes, cut.length)
        assertAccounting(connection.accounting!.responder, sentBy: serverEndpoint, in: packets)
        harness.assertNoProblems()
    }

    /// A truncated copy of a segment already delivered whole changes nothing but counts.
    func testTruncatedRetransmissionOfDeliveredData() {
        let flow = exchange.flow
        var script = exchange.handshakePackets() + exchange.requestPackets()
        for cut in exchange.responseSends {
            script.append(flow.data(.down, exchange.response, cut, ack: exchange.request.count))
        }
        var copy = flow.data(.down, exchange.response, exchange.responseSends[3], ack: exchange.request.count)
        copy.payload.removeLast(50)
        script.append(copy)
        script += exchange.teardownPackets()
        let harness = Harness()
        harness.feed(stamped(script))
        harness.finish()
        let connection = harness.handlers[0]
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.gaps(.down), [])
        XCTAssertEqual(connection.accounting?.responder.retransmittedBytes, exchange.responseSends[3].length)
        XCTAssertEqual(connection.accounting?.responder.truncatedBytes, 0, "no byte of the stream is missing")
        harness.assertNoProblems()
    }

    /// Captured bytes past the TCP payload length (padding a decoder failed to trim) are not
    /// stream data: the stream keeps to the sequence space.
    func testCapturedBytesBeyondPayloadLengthAreIgnored() {
        let flow = exchange.flow
        var script = exchange.handshakePackets() + exchange.requestPackets()
        for cut in exchange.responseSends {
            var packet = flow.data(.down, exchange.response, cut, ack: exchange.request.count)
            packet.payload += [0, 0, 0, 0, 0, 0]
            script.append(packet)
        }
        script += exchange.teardownPackets()
        let harness = Harness()
        harness.feed(stamped(script))
        harness.finish()
        let connection = harness.handlers[0]
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.gaps(.down), [])
        XCTAssertEqual(connection.ends, [.fin, .fin])
        harness.assertNoProblems()
    }

    // MARK: - RST

    /// A RST ends both sides; what waits behind holes is delivered, holes become gaps.
    func testResetDeliversBufferedDataWithGaps() {
        let flow = exchange.flow
        // Request: segment 2 missing, 3... buffered. Response: segments 4 and 7 missing.
        var script = exchange.handshakePackets()
        for (index, cut) in exchange.requestSends.enumerated() where index != 2 {
            script.append(flow.data(.up, exchange.request, cut, ack: 0))
        }
        for (index, cut) in exchange.responseSends.enumerated() where index != 4 && index != 7 {
            script.append(flow.data(.down, exchange.response, cut, ack: exchange.requestSends[2].offset))
        }
        let reset = script.count
        script.append(flow.rst(.down, offset: exchange.response.count))
        // The RST takes effect once its sender has been quiet for `closedLinger` (5 s): the
        // sweep at the next packet, 6 s later (a stray ACK once the connection is gone).
        var packets = stamped(script)
        let late = packets.count
        packets += stamped(
            [flow.packet(.up, offset: exchange.requestSends[2].offset, ack: exchange.response.count)],
            from: packets[reset].time + 6 * second)
        let harness = Harness()
        harness.feed(packets)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.ends, [.reset, .reset])
        XCTAssertEqual(connection.endTimes, [packets[reset].time, packets[reset].time])
        XCTAssertEqual(harness.log.packetIndex(of: gapEvent(.up)), late)
        XCTAssertEqual(harness.log.packetIndex(of: gapEvent(.down)), late)
        XCTAssertEqual(harness.assembler.strayControlPackets, 1)
        let requestHole = exchange.requestSends[2]
        let responseHoles = [exchange.responseSends[4], exchange.responseSends[7]]
        XCTAssertEqual(
            connection.gaps(.up), [SeenGap(offset: Int64(requestHole.offset), length: requestHole.length)])
        XCTAssertEqual(
            connection.gaps(.down), responseHoles.map { SeenGap(offset: Int64($0.offset), length: $0.length) })
        assertSameBytes(connection.stream(.up), withGaps(exchange.request, [requestHole]))
        assertSameBytes(connection.stream(.down), withGaps(exchange.response, responseHoles))
        XCTAssertEqual(harness.assembler.bufferedBytesTotal, 0)
        harness.finish()
        XCTAssertEqual(connection.accounting?.initiatorEnd, .reset)
        XCTAssertEqual(connection.accounting?.responderEnd, .reset)
        harness.assertNoProblems()
    }

    // MARK: - Limits

    /// Over the per-side limit, the hole is given up (a reported gap) instead of buffering
    /// more; memory stays under the limit; the data behind the hole is delivered.
    func testPerSideLimitGivesUpTheHole() {
        let response = patternBytes(20_000, seed: 3)
        var exchange = Exchange(
            request: sampleRequest, response: response, requestSizes: requestSizes, responseSizes: [100])
        exchange.receiverAcks = false
        let limit = 1_000
        let flow = exchange.flow
        for (lost, arrivesLate) in [(0, false), (5, false), (5, true), (150, false)] {
            var script = exchange.handshakePackets() + exchange.requestPackets()
            for (index, cut) in exchange.responseSends.enumerated() where index != lost {
                script.append(flow.data(.down, response, cut, ack: exchange.request.count))
                if arrivesLate, index == lost + 30 {
                    script.append(
                        flow.data(.down, response, exchange.responseSends[lost], ack: exchange.request.count))
                }
            }
            let harness = Harness(
                limits: ReassemblyLimits(maxBufferedBytesPerSide: limit, maxBufferedBytesTotal: 1 << 20))
            var peak = 0
            harness.afterEachPacket = { peak = max(peak, $0.bufferedBytesTotal) }
            harness.feed(stamped(script))
            let connection = harness.handlers[0]
            let hole = exchange.responseSends[lost]
            let context = "lost \(lost) late \(arrivesLate)"
            XCTAssertLessThanOrEqual(peak, limit, context)
            XCTAssertEqual(
                connection.gaps(.down), [SeenGap(offset: Int64(hole.offset), length: hole.length)], context)
            assertSameBytes(connection.stream(.down), withGaps(response, [hole]), context)
            XCTAssertNil(connection.end(.down), "given up while the connection is open")
            harness.finish()
            let accounting = connection.accounting!
            XCTAssertEqual(accounting.responder.gaps, 1, context)
            XCTAssertEqual(accounting.responder.retransmittedBytes, arrivesLate ? hole.length : 0, context)
            harness.assertNoProblems()
        }
    }

    /// Over the total limit (several connections), holes are given up and the total stays bounded.
    func testTotalLimitBoundsMemoryOverConnections() {
        let total = 3_000
        let harness = Harness(limits: ReassemblyLimits(maxBufferedBytesPerSide: 2_500, maxBufferedBytesTotal: total))
        var peak = 0
        harness.afterEachPacket = { peak = max(peak, $0.bufferedBytesTotal) }
        var generator = SplitMix64(seed: 77)
        var expected: [(response: [UInt8], holes: [Cut])] = []
        var scripts: [[Packet]] = []
        for number in 0..<5 {
            let flow = Flow(client: endpoint(0x0A00_0001, 41_000 + UInt16(number)), clientISN: UInt32(number * 1_000))
            let response = patternBytes(6_000, seed: number)
            let sends = cuts(response.count, sizes: [200])
            let lost = [Int.random(in: 0..<10, using: &generator), Int.random(in: 12..<20, using: &generator)]
            var script = flow.handshake()
            for (index, cut) in sends.enumerated() where !lost.contains(index) {
                script.append(flow.data(.down, response, cut, ack: 0))
            }
            scripts.append(script)
            expected.append((response, lost.map { sends[$0] }))
        }
        // Interleave the connections packet by packet.
        var interleaved: [Packet] = []
        for index in 0..<scripts.map(\.count).max()! {
            for script in scripts where index < script.count { interleaved.append(script[index]) }
        }
        harness.feed(stamped(interleaved))
        XCTAssertLessThanOrEqual(peak, total)
        XCTAssertGreaterThan(harness.handlers.flatMap { $0.gaps[1] }.count, 0, "some hole given up before the end")
        harness.finish()
        XCTAssertEqual(harness.assembler.bufferedBytesTotal, 0)
        for (number, connection) in harness.handlers.enumerated() {
            let (response, holes) = expected[number]
            XCTAssertEqual(
                connection.gaps(.down), holes.map { SeenGap(offset: Int64($0.offset), length: $0.length) },
                "connection \(number)")
            assertSameBytes(connection.stream(.down), withGaps(response, holes), "connection \(number)")
        }
        harness.assertNoProblems()
    }
}
