@testable import TCPReassembly
import PacketLayers
import XCTest

/// In-order delivery, stream positions, mid-connection starts, stray packets, numbering.
final class InOrderDeliveryTests: XCTestCase {
    func testInOrderExchangeDeliversBothStreamsWithPositions() {
        let exchange = Exchange(
            request: sampleRequest, response: sampleResponse,
            requestSizes: requestSizes, responseSizes: responseSizes)
        let packets = exchange.packets()
        let harness = Harness()
        harness.feed(packets)

        XCTAssertEqual(harness.handlers.count, 1)
        XCTAssertEqual(harness.assembler.connectionCount, 1)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.info.number, 0)
        XCTAssertEqual(connection.info.initiator, clientEndpoint)
        XCTAssertEqual(connection.info.responder, serverEndpoint)
        XCTAssertTrue(connection.info.sawHandshake)
        XCTAssertEqual(connection.info.firstPacketTime, packets[0].time)

        assertSameBytes(connection.stream(.up), sampleRequest, "request")
        assertSameBytes(connection.stream(.down), sampleResponse, "response")
        XCTAssertEqual(connection.gaps(.up), [])
        XCTAssertEqual(connection.gaps(.down), [])

        // One delivery per data segment, at its offset, with its packet's time and ACK.
        let requestData = packets.filter { $0.source == clientEndpoint && $0.payloadLength > 0 }
        let responseData = packets.filter { $0.source == serverEndpoint && $0.payloadLength > 0 }
        XCTAssertEqual(connection.positions[0].map(\.offset), exchange.requestSends.map { Int64($0.offset) })
        XCTAssertEqual(connection.receivedCounts[0], exchange.requestSends.map(\.length))
        XCTAssertEqual(connection.positions[0].map(\.time), requestData.map(\.time))
        XCTAssertEqual(connection.positions[0].map(\.peerAcknowledged), requestData.map { _ in 0 })
        XCTAssertEqual(connection.positions[1].map(\.offset), exchange.responseSends.map { Int64($0.offset) })
        XCTAssertEqual(connection.receivedCounts[1], exchange.responseSends.map(\.length))
        XCTAssertEqual(connection.positions[1].map(\.time), responseData.map(\.time))
        XCTAssertEqual(
            connection.positions[1].map(\.peerAcknowledged),
            responseData.map { _ in Int64(sampleRequest.count) })

        // Each side ends at its FIN; the connection lingers until the capture ends.
        let serverFin = packets.first { $0.source == serverEndpoint && $0.flags.contains(.fin) }!
        let clientFin = packets.first { $0.source == clientEndpoint && $0.flags.contains(.fin) }!
        XCTAssertEqual(connection.ends, [.fin, .fin])
        XCTAssertEqual(connection.endTimes, [clientFin.time, serverFin.time])
        XCTAssertNil(connection.accounting)

        harness.finish()
        guard let accounting = connection.accounting else { return XCTFail("not closed") }
        assertAccounting(accounting.initiator, sentBy: clientEndpoint, in: packets)
        assertAccounting(accounting.responder, sentBy: serverEndpoint, in: packets)
        for side in [accounting.initiator, accounting.responder] {
            XCTAssertEqual(side.retransmittedBytes, 0)
            XCTAssertEqual(side.outOfOrderSegments, 0)
            XCTAssertEqual(side.gaps, 0)
            XCTAssertEqual(side.gapBytes, 0)
            XCTAssertEqual(side.truncatedBytes, 0)
        }
        XCTAssertEqual(accounting.initiatorEnd, .fin)
        XCTAssertEqual(accounting.responderEnd, .fin)
        XCTAssertEqual(accounting.lastPacketTime, packets.last!.time)
        XCTAssertEqual(harness.assembler.bufferedBytesTotal, 0)
        harness.assertNoProblems()
    }

    /// peerAcknowledged follows the sender's ACK field, as an offset in the peer's stream.
    func testPeerAcknowledgedFollowsTheSendersAck() {
        let flow = Flow()
        let first = Array("GET /a HTTP/1.1\r\n\r\n".utf8)
        let second = Array("GET /b HTTP/1.1\r\n\r\n".utf8)
        let response = patternBytes(600)
        let packets = stamped(
            flow.handshake() + [
                flow.data(.up, first, Cut(offset: 0, length: first.count), ack: 0),
                flow.data(.down, response, Cut(offset: 0, length: 300), ack: first.count),
                // Pipelined: the second request is sent having seen 300 bytes of the response.
                flow.packet(.up, offset: first.count, second, ack: 300, flags: .psh),
                flow.data(.down, response, Cut(offset: 300, length: 300), ack: first.count + second.count),
                // A segment without the ACK flag carries no acknowledgment.
                flow.packet(.up, offset: first.count + second.count, [0x41], ack: nil, flags: .psh),
            ])
        let harness = Harness()
        harness.feed(packets)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.positions[0].map(\.peerAcknowledged), [0, 300, nil])
        XCTAssertEqual(
            connection.positions[0].map(\.offset), [0, Int64(first.count), Int64(first.count + second.count)])
        XCTAssertEqual(
            connection.positions[1].map(\.peerAcknowledged),
            [Int64(first.count), Int64(first.count + second.count)])
        assertSameBytes(connection.stream(.up), first + second + [0x41])
        assertSameBytes(connection.stream(.down), response)
        harness.finish()
        XCTAssertEqual(connection.ends, [.endOfCapture, .endOfCapture])
        harness.assertNoProblems()
    }

    /// No SYN captured: the sender of the first packet is the guessed initiator and each
    /// side's first captured byte is offset 0.
    func testMidConnectionStartFromServerData() {
        let flow = Flow()
        let response = patternBytes(2_000, seed: 5)
        let request2 = Array("GET /next HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let clientBase = 700 // client stream offset where the capture joins
        let responseCuts = cuts(response.count, sizes: [500, 300, 200])
        var script: [Packet] = []
        for cut in responseCuts where cut.offset >= 1_000 {
            script.append(flow.data(.down, response, cut, ack: clientBase))
            script.append(flow.packet(.up, offset: clientBase, ack: cut.end))
        }
        script.append(flow.packet(.up, offset: clientBase, request2, ack: response.count, flags: .psh))
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        harness.finish()

        XCTAssertEqual(harness.handlers.count, 1)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.info.initiator, serverEndpoint, "first packet's sender")
        XCTAssertEqual(connection.info.responder, clientEndpoint)
        XCTAssertFalse(connection.info.sawHandshake)
        // Here the "initiator" side is the server.
        assertSameBytes(connection.stream(.up), Array(response[1_000...]))
        assertSameBytes(connection.stream(.down), request2)
        XCTAssertEqual(connection.positions[0].first?.offset, 0)
        XCTAssertEqual(connection.positions[1].first?.offset, 0)
        XCTAssertEqual(connection.positions[0].first?.peerAcknowledged, nil, "the client's stream was not started")
        XCTAssertEqual(connection.positions[1].first?.peerAcknowledged, Int64(response.count - 1_000))
        XCTAssertEqual(connection.gaps(.up), [])
        XCTAssertEqual(connection.gaps(.down), [])
        XCTAssertEqual(connection.ends, [.endOfCapture, .endOfCapture])
        harness.assertNoProblems()
    }

    func testMidConnectionStartFromClientData() {
        let flow = Flow()
        let request = patternBytes(300, seed: 9)
        let response = patternBytes(400, seed: 10)
        let packets = stamped([
            flow.packet(.up, offset: 5_000, request, ack: 9_000, flags: .psh),
            flow.packet(.down, offset: 9_000, response, ack: 5_300, flags: .psh),
        ])
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.info.initiator, clientEndpoint)
        XCTAssertFalse(connection.info.sawHandshake)
        assertSameBytes(connection.stream(.up), request)
        assertSameBytes(connection.stream(.down), response)
        XCTAssertEqual(connection.positions[1].first?.peerAcknowledged, 300)
        harness.assertNoProblems()
    }

    /// A SYN-ACK without its SYN: its destination is the initiator.
    func testSynAckWithoutSynMakesItsDestinationTheInitiator() {
        let exchange = Exchange(
            request: sampleRequest, response: sampleResponse,
            requestSizes: requestSizes, responseSizes: responseSizes)
        let packets = Array(exchange.packets().dropFirst())
        XCTAssertTrue(packets[0].flags.contains([.syn, .ack]))
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        XCTAssertEqual(harness.handlers.count, 1)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.info.initiator, clientEndpoint)
        XCTAssertEqual(connection.info.responder, serverEndpoint)
        XCTAssertTrue(connection.info.sawHandshake)
        assertSameBytes(connection.stream(.up), sampleRequest)
        assertSameBytes(connection.stream(.down), sampleResponse)
        XCTAssertEqual(connection.ends, [.fin, .fin])
        harness.assertNoProblems()
    }

    /// ACKs, RSTs and FINs without payload for unknown connections are counted, not opened.
    func testPayloadlessStrayPacketsDoNotOpenConnections() {
        let flow = Flow()
        let packets = stamped([
            flow.packet(.up, offset: 10, ack: 20),
            flow.packet(.down, offset: 20, ack: nil, flags: .rst),
            flow.packet(.down, offset: 20, ack: 10, flags: .rst),
            flow.packet(.up, offset: 10, ack: 20, flags: .fin),
            // A RST carrying bytes (some stacks put a reason there) opens nothing either.
            flow.packet(.down, offset: 20, Array("reset".utf8), ack: 10, flags: .rst),
        ])
        let harness = Harness()
        harness.feed(packets)
        XCTAssertEqual(harness.assembler.strayControlPackets, 5)
        XCTAssertEqual(harness.assembler.connectionCount, 0)
        XCTAssertEqual(harness.handlers.count, 0)

        let data = Array("hello".utf8)
        harness.feed(
            stamped(
                [flow.packet(.up, offset: 10, data, ack: 20, flags: .psh)],
                from: baseTime + second))
        XCTAssertEqual(harness.assembler.connectionCount, 1)
        XCTAssertEqual(harness.assembler.strayControlPackets, 5)
        harness.finish()
        assertSameBytes(harness.handlers[0].stream(.up), data)
        XCTAssertEqual(harness.handlers[0].info.firstPacketTime, baseTime + second)
        harness.assertNoProblems()
    }

    /// Numbers count from 0 in the order of each connection's first packet.
    func testConnectionsAreNumberedInOrderOfFirstPacket() {
        let flows = (0..<4).map {
            Flow(client: endpoint(0x0A00_0001, 40_000 + UInt16($0)), clientISN: UInt32(100 * $0))
        }
        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        // Connection order by first packet: flows[2] (SYN), flows[0] (mid-stream data),
        // flows[3] (SYN-ACK only), flows[1] (SYN).
        var script: [Packet] = [flows[2].syn()]
        script.append(flows[0].packet(.up, offset: 50, request, ack: 0, flags: .psh))
        script.append(flows[2].synAck())
        script.append(flows[3].synAck())
        script.append(flows[1].syn())
        script.append(flows[2].packet(.up, offset: 0, request, ack: 0, flags: .psh))
        script.append(flows[1].synAck())
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        harness.finish()

        XCTAssertEqual(harness.assembler.connectionCount, 4)
        XCTAssertEqual(harness.handlers.map(\.info.number), [0, 1, 2, 3])
        XCTAssertEqual(
            harness.handlers.map(\.info.initiator),
            [flows[2].client, flows[0].client, flows[3].client, flows[1].client])
        XCTAssertEqual(
            harness.handlers.map(\.info.firstPacketTime),
            [packets[0].time, packets[1].time, packets[3].time, packets[4].time])
        XCTAssertEqual(harness.handlers.map(\.info.sawHandshake), [true, false, true, true])
        harness.assertNoProblems()
    }
}
