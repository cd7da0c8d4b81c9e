@testable import TCPReassembly
import Flows
import PacketLayers
import TestSupport
import XCTest

/// Feeds `exchange` whole and returns what differs from an intact delivery: both streams
/// byte-identical, no gaps, both sides ended by FIN, packet accounting and retransmitted
/// bytes as the script implies. Empty when everything matches.
func intactDeliveryProblems(_ exchange: Exchange, checkOutOfOrder: Bool = true) -> [String] {
    let packets = exchange.packets()
    let harness = Harness()
    harness.feed(packets)
    harness.finish()
    var problems: [String] = harness.factory.problems
    guard harness.handlers.count == 1, let connection = harness.handlers.first else {
        return problems + ["\(harness.handlers.count) connections"]
    }
    problems += connection.problems
    if connection.stream(.up) != exchange.request { problems.append("request stream differs") }
    if connection.stream(.down) != exchange.response { problems.append("response stream differs") }
    if !connection.gaps[0].isEmpty || !connection.gaps[1].isEmpty { problems.append("gaps \(connection.gaps)") }
    if connection.ends != [.fin, .fin] { problems.append("ends \(connection.ends)") }
    guard let accounting = connection.accounting else { return problems + ["not closed"] }
    for (side, sends, source) in [
        (Direction.up, exchange.requestSends, exchange.flow.client),
        (.down, exchange.responseSends, exchange.flow.server),
    ] {
        let counted = accounting[side]
        let sent = packets.filter { $0.source == source }
        if counted.packets != sent.count { problems.append("\(side) packets \(counted.packets) != \(sent.count)") }
        let payload = sent.reduce(0) { $0 + $1.payloadLength }
        if counted.payloadBytes != payload { problems.append("\(side) payload \(counted.payloadBytes) != \(payload)") }
        let repeated = repeatedBytes(sends)
        if counted.retransmittedBytes != repeated {
            problems.append("\(side) retransmitted \(counted.retransmittedBytes) != \(repeated)")
        }
        if checkOutOfOrder, counted.outOfOrderSegments != aheadOfHole(sends) {
            problems.append("\(side) out of order \(counted.outOfOrderSegments) != \(aheadOfHole(sends))")
        }
        if counted.gaps != 0 || counted.gapBytes != 0 || counted.truncatedBytes != 0 {
            problems.append("\(side) gaps \(counted.gaps)/\(counted.gapBytes), truncated \(counted.truncatedBytes)")
        }
    }
    if harness.assembler.bufferedBytesTotal != 0 {
        problems.append("buffered \(harness.assembler.bufferedBytesTotal) after finish")
    }
    return problems
}

/// Reordered segments, with the peer's ACKs kept physically plausible: the receiver only
/// ever acknowledges what it has contiguously received.
final class ReorderingTests: XCTestCase {
    private let base = Exchange(
        request: sampleRequest, response: sampleResponse,
        requestSizes: requestSizes, responseSizes: responseSizes)

    func testEveryWindowPermutationOfRequestSegments() {
        runWindowPermutations(reorderingRequest: true)
    }

    func testEveryWindowPermutationOfResponseSegments() {
        runWindowPermutations(reorderingRequest: false)
    }

    /// The same permutations with no ACK at all between data segments.
    func testWindowPermutationsWithoutReceiverAcks() {
        runWindowPermutations(reorderingRequest: false, receiverAcks: false)
    }

    /// The server's FIN rides on the last response segment, which may arrive before
    /// the segments in front of it.
    func testWindowPermutationsWithFinOnLastSegment() {
        runWindowPermutations(reorderingRequest: false, finOnLastSegment: true)
    }

    private func runWindowPermutations(
        reorderingRequest: Bool, receiverAcks: Bool = true,
        finOnLastSegment: Bool = false
    ) {
        var base = self.base
        base.receiverAcks = receiverAcks
        base.finOnLastResponseSegment = finOnLastSegment
        let original = reorderingRequest ? base.requestSends : base.responseSends
        var runs = 0
        for k in 2...5 {
            for order in windowReorderings(count: original.count, window: k) {
                var exchange = base
                let sends = order.map { original[$0] }
                if reorderingRequest { exchange.requestSends = sends } else { exchange.responseSends = sends }
                let problems = intactDeliveryProblems(exchange)
                runs += 1
                if !problems.isEmpty {
                    return XCTFail("k=\(k) order=\(order): \(problems)")
                }
            }
        }
        XCTAssertGreaterThan(runs, 500)
    }

    /// Both directions reordered at once, with wrapped sequence numbers.
    func testBothDirectionsReorderedAcrossSequenceWrap() {
        var exchange = base
        exchange.flow.clientISN = UInt32.max - 60
        exchange.flow.serverISN = UInt32.max - 300
        let requestOrder = windowReorderings(count: exchange.requestSends.count, window: 4)
        let responseOrder = windowReorderings(count: exchange.responseSends.count, window: 3)
        for index in 0..<min(requestOrder.count, responseOrder.count) {
            var run = exchange
            run.requestSends = requestOrder[index].map { exchange.requestSends[$0] }
            run.responseSends = responseOrder[index].map { exchange.responseSends[$0] }
            let problems = intactDeliveryProblems(run)
            if !problems.isEmpty { return XCTFail("run \(index): \(problems)") }
        }
    }
}

/// Retransmissions: exact duplicates, retransmissions spanning two segments, partial overlaps.
final class RetransmissionTests: XCTestCase {
    private let base = Exchange(
        request: sampleRequest, response: sampleResponse,
        requestSizes: requestSizes, responseSizes: responseSizes)

    func testExactDuplicateOfEachSegment() {
        for reorderingRequest in [true, false] {
            let original = reorderingRequest ? base.requestSends : base.responseSends
            for index in original.indices {
                for distance in [1, 3] {
                    var sends = original
                    sends.insert(original[index], at: min(sends.count, index + distance))
                    var exchange = base
                    if reorderingRequest { exchange.requestSends = sends } else { exchange.responseSends = sends }
                    XCTAssertEqual(repeatedBytes(sends), original[index].length)
                    let problems = intactDeliveryProblems(exchange)
                    if !problems.isEmpty { return XCTFail("duplicate of \(index) at +\(distance): \(problems)") }
                }
            }
        }
    }

    /// A retransmission covering the second half of one segment and the first half of the next.
    func testRetransmissionOverlappingTwoSegments() {
        let original = base.responseSends
        for index in 0..<(original.count - 1) {
            let first = original[index]
            let second = original[index + 1]
            let overlap = Cut(
                offset: first.offset + first.length / 2,
                length: second.offset + (second.length + 1) / 2 - (first.offset + first.length / 2))
            // After both originals, between them, and before either (the originals delayed).
            for position in [index + 2, index + 1, index] {
                var sends = original
                sends.insert(overlap, at: position)
                var exchange = base
                exchange.responseSends = sends
                let problems = intactDeliveryProblems(exchange, checkOutOfOrder: false)
                if !problems.isEmpty { return XCTFail("overlap \(overlap) at \(position): \(problems)") }
            }
        }
    }

    /// Retransmissions that repackage data: a partial overlap that extends into new bytes,
    /// and a segment split differently than the original.
    func testPartialOverlapsIntoNewData() {
        let original = base.responseSends
        for index in 1..<(original.count - 1) {
            let previous = original[index - 1]
            let current = original[index]
            // The tail of the previous segment plus all of the current one, in place of it.
            var sends = original
            sends[index] = Cut(
                offset: previous.offset + previous.length / 2,
                length: current.end - (previous.offset + previous.length / 2))
            var exchange = base
            exchange.responseSends = sends
            var problems = intactDeliveryProblems(exchange, checkOutOfOrder: false)
            if !problems.isEmpty { return XCTFail("extended \(index): \(problems)") }

            // The same, arriving before the previous segment (so it waits behind a hole).
            sends.swapAt(index - 1, index)
            exchange.responseSends = sends
            problems = intactDeliveryProblems(exchange, checkOutOfOrder: false)
            if !problems.isEmpty { return XCTFail("extended \(index), early: \(problems)") }
        }
    }

    /// A duplicate of a segment that is itself waiting behind a hole.
    func testDuplicateOfBufferedSegment() {
        var sends = base.responseSends
        sends.swapAt(2, 4) // 4 arrives ahead of 2 and 3
        sends.insert(sends[2], at: 3) // and again before the hole fills
        var exchange = base
        exchange.responseSends = sends
        XCTAssertEqual(intactDeliveryProblems(exchange, checkOutOfOrder: false), [])
    }

    /// Retransmissions after the side's FIN, and after the connection finished, still
    /// repeat bytes already seen and count as such.
    func testRetransmissionsAfterEndAreCounted() {
        let exchange = base
        let flow = exchange.flow
        let last = exchange.responseSends.last!
        let firstRequest = exchange.requestSends[0]
        var script = exchange.handshakePackets() + exchange.requestPackets() + exchange.responsePackets()
        script.append(flow.fin(.down, offset: exchange.response.count, ack: exchange.request.count))
        // The server's side has ended: a late copy of its last segment.
        script.append(flow.data(.down, exchange.response, last, ack: exchange.request.count))
        script.append(flow.fin(.up, offset: exchange.request.count, ack: exchange.response.count + 1))
        script.append(flow.packet(.down, offset: exchange.response.count + 1, ack: exchange.request.count + 1))
        // Both sides have ended: late copies from each side while the connection lingers.
        script.append(flow.data(.down, exchange.response, last, ack: exchange.request.count + 1))
        script.append(flow.data(.up, exchange.request, firstRequest, ack: exchange.response.count + 1))
        let packets = stamped(script)
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        let connection = harness.handlers[0]
        assertSameBytes(connection.stream(.up), exchange.request)
        assertSameBytes(connection.stream(.down), exchange.response)
        XCTAssertEqual(connection.ends, [.fin, .fin])
        let accounting = connection.accounting!
        XCTAssertEqual(accounting.responder.retransmittedBytes, 2 * last.length)
        XCTAssertEqual(accounting.initiator.retransmittedBytes, firstRequest.length)
        assertAccounting(accounting.initiator, sentBy: clientEndpoint, in: packets)
        assertAccounting(accounting.responder, sentBy: serverEndpoint, in: packets)
        harness.assertNoProblems()
    }

    /// Random duplicates, overlaps and reorderings, seeded.
    func testRandomRetransmissionsCountExactly() {
        var generator = SplitMix64(seed: 0xD0C)
        for iteration in 0..<100 {
            var exchange = base
            exchange.responseSends = scrambled(base.responseSends, length: base.response.count, using: &generator)
            exchange.requestSends = scrambled(base.requestSends, length: base.request.count, using: &generator)
            let problems = intactDeliveryProblems(exchange, checkOutOfOrder: false)
            if !problems.isEmpty {
                return XCTFail(
                    "iteration \(iteration): \(problems) request \(exchange.requestSends) response \(exchange.responseSends)"
                )
            }
        }
    }
}

/// `sends` with random window shuffles, exact duplicates and overlapping retransmissions.
func scrambled(_ sends: [Cut], length: Int, using generator: inout SplitMix64) -> [Cut] {
    var result = sends
    // Shuffle within random windows.
    let window = Int.random(in: 1...5, using: &generator)
    if window > 1 {
        var start = 0
        while start < result.count {
            let end = min(result.count, start + window)
            if Bool.random(using: &generator) { result[start..<end].shuffle(using: &generator) }
            start = end
        }
    }
    // Duplicates: exact copies, and copies of a random stretch crossing segment boundaries.
    let extra = Int.random(in: 0...min(40, max(1, sends.count / 2)), using: &generator)
    for _ in 0..<extra {
        let copy: Cut
        if Bool.random(using: &generator) {
            copy = sends.randomElement(using: &generator)!
        } else {
            let start = Int.random(in: 0..<length, using: &generator)
            copy = Cut(offset: start, length: Int.random(in: 1...min(length - start, 1_500), using: &generator))
        }
        result.insert(copy, at: Int.random(in: 0...result.count, using: &generator))
    }
    return result
}
