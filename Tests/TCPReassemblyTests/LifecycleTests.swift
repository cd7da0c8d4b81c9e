@testable import TCPReassembly
import PacketLayers
import TestSupport
import XCTest

/// Port reuse, end of capture, idle flush and linger, sequence wrap-around.
final class LifecycleTests: XCTestCase {
    private let exchange = Exchange(
        request: sampleRequest, response: sampleResponse,
        requestSizes: requestSizes, responseSizes: responseSizes)

    private func closeIndex(_ harness: Harness, _ number: Int) -> Int? {
        harness.log.index { $0 == .close(number) }
    }

    // MARK: - Port reuse

    /// A new SYN with another ISN after a finished connection closes it and opens the next.
    func testNewSynAfterFinishedConnectionOpensANewOne() {
        var next = exchange
        next.flow.clientISN = 77_777
        next.flow.serverISN = 88_888
        next.request = Array("GET /again HTTP/1.1\r\n\r\n".utf8)
        next.requestSends = cuts(next.request.count, sizes: [10])
        let firstPackets = exchange.packets()
        let secondPackets = stamped(
            next.handshakePackets() + next.requestPackets() + next.responsePackets()
                + next.teardownPackets(), from: firstPackets.last!.time + second / 2)
        let harness = Harness()
        harness.feed(firstPackets)
        XCTAssertNil(harness.handlers[0].accounting, "lingers after both FINs")
        harness.feed(secondPackets)
        guard harness.handlers.count == 2 else { return XCTFail("\(harness.handlers.count) connections") }
        XCTAssertLessThan(
            closeIndex(harness, 0)!, harness.log.index { $0 == .open(1) }!,
            "the old connection closes before the new one opens")
        XCTAssertEqual(harness.log.packetIndex { $0 == .close(0) }, firstPackets.count, "closed by the new SYN")
        let old = harness.handlers[0]
        let new = harness.handlers[1]
        XCTAssertEqual(old.ends, [.fin, .fin])
        assertAccounting(old.accounting!.initiator, sentBy: clientEndpoint, in: firstPackets)
        XCTAssertEqual(new.info.number, 1)
        XCTAssertEqual(new.info.firstPacketTime, secondPackets[0].time)
        harness.finish()
        assertSameBytes(new.stream(.up), next.request)
        assertSameBytes(new.stream(.down), next.response)
        XCTAssertEqual(new.ends, [.fin, .fin])
        assertAccounting(new.accounting!.initiator, sentBy: clientEndpoint, in: secondPackets)
        harness.assertNoProblems()
    }

    /// The new SYN arrives while the server's side is still open: that side ends by port reuse.
    func testNewSynOnHalfClosedConnectionEndsOpenSideWithPortReuse() {
        let flow = exchange.flow
        var script = exchange.handshakePackets() + exchange.requestPackets()
        script.append(flow.data(.down, exchange.response, exchange.responseSends[0], ack: exchange.request.count))
        script.append(flow.fin(.up, offset: exchange.request.count, ack: exchange.responseSends[0].end))
        var next = flow
        next.clientISN = flow.clientISN &+ 1_000_000
        script.append(next.syn())
        let harness = Harness()
        harness.feed(stamped(script))
        guard harness.handlers.count == 2 else { return XCTFail("\(harness.handlers.count) connections") }
        let old = harness.handlers[0]
        XCTAssertEqual(old.ends, [.fin, .portReuse])
        XCTAssertNotNil(old.accounting)
        XCTAssertEqual(old.accounting?.responderEnd, .portReuse)
        XCTAssertLessThan(closeIndex(harness, 0)!, harness.log.index { $0 == .open(1) }!)
        assertSameBytes(old.stream(.down), Array(exchange.response[..<exchange.responseSends[0].end]))
        harness.finish()
        XCTAssertEqual(harness.handlers[1].ends, [.endOfCapture, .endOfCapture])
        harness.assertNoProblems()
    }

    /// A retransmitted SYN (same ISN) is part of the same connection.
    func testRetransmittedSynDoesNotOpenANewConnection() {
        let flow = exchange.flow
        let script =
            [flow.syn(), flow.syn(), flow.synAck(), flow.syn(), flow.synAck()]
            + Array(exchange.packets().dropFirst(2))
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        XCTAssertEqual(harness.handlers.count, 1)
        XCTAssertEqual(harness.assembler.connectionCount, 1)
        let connection = harness.handlers[0]
        assertSameBytes(connection.stream(.up), exchange.request)
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.ends, [.fin, .fin])
        assertAccounting(connection.accounting!.initiator, sentBy: clientEndpoint, in: packets)
        assertAccounting(connection.accounting!.responder, sentBy: serverEndpoint, in: packets)
        harness.assertNoProblems()
    }

    /// Port reuse whose SYN the capture missed: the SYN-ACK (another ISN) after a finished
    /// connection starts the next one.
    func testSynAckAfterFinishedConnectionOpensANewOne() {
        var next = exchange
        next.flow.clientISN = 123_456
        next.flow.serverISN = 654_321
        let firstPackets = exchange.packets()
        let secondPackets = stamped(Array(next.packets().dropFirst()), from: firstPackets.last!.time + second / 2)
        let harness = Harness()
        harness.feed(firstPackets + secondPackets)
        harness.finish()
        guard harness.handlers.count == 2 else { return XCTFail("\(harness.handlers.count) connections") }
        let new = harness.handlers[1]
        XCTAssertEqual(new.info.initiator, clientEndpoint)
        XCTAssertTrue(new.info.sawHandshake)
        assertSameBytes(new.stream(.up), next.request)
        assertSameBytes(new.stream(.down), next.response)
        XCTAssertEqual(new.ends, [.fin, .fin])
        XCTAssertEqual(
            harness.handlers[0].accounting?.initiator.packets, firstPackets.filter { $0.source == clientEndpoint }.count
        )
        harness.assertNoProblems()
    }

    /// A retransmitted SYN-ACK after the handshake completed belongs to the same connection.
    func testRetransmittedSynAckDoesNotOpenANewConnection() {
        let flow = exchange.flow
        var packets = exchange.packets()
        packets.insert(flow.synAck(), at: 3)
        packets.insert(flow.synAck(), at: 5)
        let harness = Harness()
        harness.feed(stamped(packets))
        harness.finish()
        XCTAssertEqual(harness.handlers.count, 1)
        assertSameBytes(harness.handlers[0].stream(.up), exchange.request)
        assertSameBytes(harness.handlers[0].stream(.down), exchange.response)
        harness.assertNoProblems()
    }

    /// The capture put the SYN-ACK before its SYN (two interfaces merged): still one connection.
    func testSynAfterItsSynAckIsTheSameConnection() {
        var packets = exchange.packets()
        packets.swapAt(0, 1)
        let harness = Harness()
        harness.feed(stamped(packets))
        harness.finish()
        guard harness.handlers.count == 1 else { return XCTFail("\(harness.handlers.count) connections") }
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.info.initiator, clientEndpoint)
        XCTAssertTrue(connection.info.sawHandshake)
        assertSameBytes(connection.stream(.up), exchange.request)
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.ends, [.fin, .fin])
        harness.assertNoProblems()
    }

    // MARK: - End of capture

    /// finish() ends open sides with endOfCapture and closes every connection in number order.
    func testFinishClosesConnectionsInNumberOrder() {
        let count = 24
        var scripts: [[Packet]] = []
        for number in 0..<count {
            var flow = Flow(
                client: endpoint(0x0A00_0001 + UInt32(number % 3), 30_000 + UInt16(number)),
                clientISN: UInt32(number) * 10_000)
            flow.serverISN = UInt32(number) * 7_000
            let request = patternBytes(50 + number, seed: number)
            var script =
                flow.handshake() + [flow.data(.up, request, Cut(offset: 0, length: request.count), ack: 0)]
            if number % 5 == 2 { // some finish properly
                script.append(flow.fin(.up, offset: request.count, ack: 0))
                script.append(flow.fin(.down, offset: 0, ack: request.count + 1))
            }
            scripts.append(script)
        }
        var interleaved: [Packet] = []
        for index in 0..<scripts.map(\.count).max()! {
            for script in scripts where index < script.count { interleaved.append(script[index]) }
        }
        let packets = stamped(interleaved)
        let harness = Harness()
        harness.feed(packets)
        XCTAssertTrue(harness.log.events.allSatisfy { if case .close = $0 { return false } else { return true } })
        harness.finish()
        let closes = harness.log.events.compactMap { event -> Int? in
            if case .close(let n) = event { return n } else { return nil }
        }
        XCTAssertEqual(closes, Array(0..<count))
        for (number, connection) in harness.handlers.enumerated() {
            let lastTime = packets.last {
                FlowKey($0.source, $0.destination) == FlowKey(connection.info.initiator, connection.info.responder)
            }!.time
            if number % 5 == 2 {
                XCTAssertEqual(connection.ends, [.fin, .fin], "connection \(number)")
            } else {
                XCTAssertEqual(connection.ends, [.endOfCapture, .endOfCapture], "connection \(number)")
                XCTAssertEqual(connection.endTimes, [lastTime, lastTime], "connection \(number)")
            }
            XCTAssertEqual(connection.accounting?.lastPacketTime, lastTime)
            XCTAssertEqual(connection.stream(.up), patternBytes(50 + number, seed: number))
        }
        harness.assertNoProblems()
    }

    // MARK: - Idle flush and linger

    func testIdleConnectionIsFlushedWhenLaterPacketsArrive() {
        let limits = ReassemblyLimits(idleTimeoutSeconds: 10, closedLingerSeconds: 2)
        let idle = exchange.flow
        let other = Flow(client: endpoint(0x0A00_0009, 40_000))
        let request = exchange.request
        let sends = exchange.requestSends
        // The idle connection leaves a hole: segment 1 never comes.
        let idlePackets = stamped(
            idle.handshake() + [
                idle.data(.up, request, sends[0], ack: 0),
                idle.data(.up, request, sends[2], ack: 0),
            ])
        let lastIdleTime = idlePackets.last!.time
        let harness = Harness(limits: limits)
        harness.feed(idlePackets)
        var otherPackets = stamped(other.handshake(), from: lastIdleTime + 9 * second, step: 100 * millisecond)
        harness.feed(otherPackets) // 9.0 - 9.2 s of silence: not yet
        XCTAssertNil(harness.handlers[0].accounting)
        XCTAssertEqual(harness.handlers[0].ends, [nil, nil])
        otherPackets = stamped(
            [other.packet(.up, offset: 0, [1, 2, 3], ack: 0, flags: .psh)],
            from: lastIdleTime + 10 * second + 500 * millisecond)
        harness.feed(otherPackets)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.ends, [.idle, .idle])
        XCTAssertNotNil(connection.accounting)
        XCTAssertEqual(harness.log.packetIndex { $0 == .close(0) }, idlePackets.count + 3)
        XCTAssertEqual(connection.gaps(.up), [SeenGap(offset: Int64(sends[1].offset), length: sends[1].length)])
        assertSameBytes(connection.stream(.up), withGaps(Array(request[..<sends[2].end]), [sends[1]]))
        XCTAssertEqual(connection.accounting?.lastPacketTime, lastIdleTime)
        XCTAssertNil(harness.handlers[1].accounting, "the other connection is active")
        XCTAssertEqual(harness.assembler.bufferedBytesTotal, 0)
        harness.finish()
        XCTAssertEqual(harness.handlers[1].ends, [.endOfCapture, .endOfCapture])
        harness.assertNoProblems()
    }

    func testFinishedConnectionIsEvictedAfterLinger() {
        let limits = ReassemblyLimits(idleTimeoutSeconds: 60, closedLingerSeconds: 2)
        let other = Flow(client: endpoint(0x0A00_0009, 40_000))
        let packets = exchange.packets()
        let end = packets.last!.time
        let harness = Harness(limits: limits)
        harness.feed(packets)
        harness.feed(stamped(other.handshake(), from: end + 1 * second, step: 400 * millisecond)) // up to +1.8 s
        XCTAssertNil(harness.handlers[0].accounting, "still lingering")
        harness.feed(stamped([other.packet(.up, offset: 0, ack: 0)], from: end + 2_500 * millisecond))
        XCTAssertNotNil(harness.handlers[0].accounting, "evicted after the linger")
        XCTAssertEqual(harness.handlers[0].ends, [.fin, .fin])
        XCTAssertEqual(harness.handlers.count, 2)
        XCTAssertNil(harness.handlers[1].accounting)
        harness.finish()
        harness.assertNoProblems()
    }

    // MARK: - Sequence wrap-around

    func testSequenceNumbersWrappingPast2To32() {
        var wrapped = Exchange(
            request: patternBytes(3_000, seed: 11), response: patternBytes(9_000, seed: 12),
            requestSizes: [1_460, 536, 1, 700], responseSizes: [1_460, 1_460, 97, 1])
        for (clientISN, serverISN) in [
            (UInt32.max - 99, UInt32.max - 99), (UInt32.max, UInt32.max - 1),
            (UInt32.max - 1_500, UInt32.max - 8_000),
        ] {
            wrapped.flow.clientISN = clientISN
            wrapped.flow.serverISN = serverISN
            let packets = wrapped.packets()
            let harness = Harness()
            harness.feed(packets)
            harness.finish()
            let connection = harness.handlers[0]
            assertSameBytes(connection.stream(.up), wrapped.request, "ISN \(clientISN)")
            assertSameBytes(connection.stream(.down), wrapped.response, "ISN \(serverISN)")
            XCTAssertEqual(connection.gaps[0] + connection.gaps[1], [])
            XCTAssertEqual(connection.ends, [.fin, .fin])
            XCTAssertEqual(
                connection.positions[1].map(\.peerAcknowledged),
                wrapped.responseSends.map { _ in Int64(wrapped.request.count) })
            XCTAssertEqual(connection.positions[1].map(\.offset), wrapped.responseSends.map { Int64($0.offset) })
            harness.assertNoProblems()

            // Reordered and duplicated around the wrap.
            var generator = SplitMix64(seed: UInt64(clientISN))
            var scrambledExchange = wrapped
            scrambledExchange.responseSends = scrambled(
                wrapped.responseSends, length: wrapped.response.count, using: &generator)
            scrambledExchange.requestSends = scrambled(
                wrapped.requestSends, length: wrapped.request.count, using: &generator)
            XCTAssertEqual(intactDeliveryProblems(scrambledExchange, checkOutOfOrder: false), [], "ISN \(clientISN)")
        }
    }

    func testLostSegmentAcrossTheWrap() {
        var wrapped = Exchange(
            request: patternBytes(100, seed: 1), response: patternBytes(5_000, seed: 2),
            requestSizes: [100], responseSizes: [1_000])
        wrapped.flow.serverISN = UInt32.max - 2_500 // the wrap falls inside segment 2
        let lost = 2
        var script = wrapped.handshakePackets() + wrapped.requestPackets()
        for (index, cut) in wrapped.responseSends.enumerated() where index != lost {
            script.append(wrapped.flow.data(.down, wrapped.response, cut, ack: wrapped.request.count))
        }
        script += wrapped.teardownPackets()
        let harness = Harness()
        harness.feed(stamped(script))
        harness.finish()
        let connection = harness.handlers[0]
        let hole = wrapped.responseSends[lost]
        XCTAssertEqual(connection.gaps(.down), [SeenGap(offset: Int64(hole.offset), length: hole.length)])
        assertSameBytes(connection.stream(.down), withGaps(wrapped.response, [hole]))
        XCTAssertEqual(connection.ends, [.fin, .fin])
        harness.assertNoProblems()
    }
}
