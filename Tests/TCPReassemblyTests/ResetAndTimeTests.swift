@testable import TCPReassembly
import PacketLayers
import XCTest

/// A RST ends a connection only if its sender goes quiet, and no timestamp from the input can
/// make the assembler's time arithmetic trap.
final class ResetAndTimeTests: XCTestCase {
    private let flow = Flow()
    // 39 bytes: "GET /a HTTP/1.1\r\n" 17 + "Host: example.test\r\n" 20 + "\r\n" 2.
    private let request = Array("GET /a HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8)
    // 43 bytes: "HTTP/1.1 200 OK\r\n" 17 + "Content-Length: 5\r\n" 19 + "\r\n" 2 + "hello" 5.
    private let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8)

    /// Request, then a forged RST "from the server" in the window, then the server's real
    /// response, the client's ACK and both FINs: the RST's sender went on, so it is ignored.
    func testForgedServerResetIsIgnoredWhenTheServerGoesOn() {
        let packets = stamped(
            flow.handshake() + [
                flow.packet(.up, offset: 0, request, ack: 0, flags: .psh),
                flow.packet(.down, offset: 0, ack: request.count, flags: .ack),
                flow.packet(.down, offset: 10, ack: nil, flags: .rst), // in the window, 10 bytes ahead
                flow.packet(.down, offset: 0, response, ack: request.count, flags: .psh),
                flow.packet(.up, offset: request.count, ack: response.count),
                flow.fin(.up, offset: request.count, ack: response.count),
                flow.fin(.down, offset: response.count, ack: request.count + 1),
                flow.packet(.up, offset: request.count + 1, ack: response.count + 1),
            ])
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        let connection = harness.handlers[0]
        assertSameBytes(connection.stream(.up), request)
        assertSameBytes(connection.stream(.down), response)
        XCTAssertEqual(connection.ends, [.fin, .fin])
        XCTAssertEqual(connection.accounting?.ignoredResets, 1)
        XCTAssertEqual(harness.assembler.ignoredResets, 1)
        harness.assertNoProblems()
    }

    /// The forged RST claims to come from the client; the server answers anyway (that alone
    /// proves nothing: it may have been in flight), and then the client acknowledges the
    /// response, which a side that had reset would never do.
    func testForgedClientResetIsIgnoredWhenTheClientAcknowledgesMore() {
        let packets = stamped(
            flow.handshake() + [
                flow.packet(.up, offset: 0, request, ack: 0, flags: .psh),
                flow.packet(.up, offset: request.count, ack: 0, flags: .rst),
                flow.packet(.down, offset: 0, response, ack: request.count, flags: .psh),
                flow.packet(.up, offset: request.count, ack: response.count),
            ])
        let harness = Harness()
        harness.feed(packets)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.accounting?.ignoredResets, nil, "accounting comes with close")
        XCTAssertEqual(harness.assembler.ignoredResets, 1)
        harness.finish()
        assertSameBytes(connection.stream(.down), response)
        XCTAssertEqual(connection.ends, [.endOfCapture, .endOfCapture])
        XCTAssertEqual(connection.accounting?.ignoredResets, 1)
        harness.assertNoProblems()
    }

    /// Two RSTs in a row wait for the same sign; the connection then ends by RST at the
    /// first one's time, after `closedLinger` (5 s) of quiet.
    func testRepeatedResetEndsAtTheFirstOnesTime() {
        var packets = stamped(
            flow.handshake() + [
                flow.packet(.up, offset: 0, request, ack: 0, flags: .psh),
                flow.packet(.down, offset: 0, ack: nil, flags: .rst),
                flow.packet(.down, offset: 0, ack: nil, flags: .rst),
            ])
        let firstReset = packets[4].time
        // Another connection's packet 6 s later runs the sweep.
        var other = Flow()
        other.client = endpoint(0x0A00_0009, 40_000)
        packets += stamped(
            [other.packet(.up, offset: 0, request, ack: nil, flags: .psh)],
            from: firstReset + 6 * second)
        let harness = Harness()
        harness.feed(packets)
        let connection = harness.handlers[0]
        XCTAssertEqual(connection.ends, [.reset, .reset])
        XCTAssertEqual(connection.endTimes, [firstReset, firstReset])
        XCTAssertEqual(harness.assembler.ignoredResets, 0)
        harness.finish()
        harness.assertNoProblems()
    }

    /// A new SYN on the 4-tuple after a RST opens a new connection; the old one ends by RST.
    func testSynAfterResetEndsTheOldConnectionByReset() {
        var second = Flow()
        second.clientISN = 90_000
        second.serverISN = 700_000
        let packets = stamped(
            flow.handshake() + [
                flow.packet(.up, offset: 0, request, ack: 0, flags: .psh),
                flow.packet(.down, offset: 0, ack: nil, flags: .rst),
            ] + second.handshake())
        let harness = Harness()
        harness.feed(packets)
        harness.finish()
        XCTAssertEqual(harness.handlers.count, 2)
        XCTAssertEqual(harness.handlers[0].ends, [.reset, .reset])
        XCTAssertEqual(harness.handlers[0].endTimes, [packets[4].time, packets[4].time])
        harness.assertNoProblems()
    }

    /// Timestamps at both ends of Int64: the idle sweep's subtraction saturates. A jump from
    /// Int64.min to Int64.max is "idle for ever" (the first connection is flushed as idle);
    /// a jump back from Int64.max to Int64.min is no idle time at all.
    func testExtremeTimestampsDoNotTrap() {
        var other = Flow()
        other.client = endpoint(0x0A00_0009, 40_000)
        var first = flow.packet(.up, offset: 0, request, ack: nil, flags: .psh)
        first.time = .min
        var second = other.packet(.up, offset: 0, request, ack: nil, flags: .psh)
        second.time = .max
        var third = flow.packet(.up, offset: 0, request, ack: nil, flags: .psh)
        third.time = .min
        let harness = Harness()
        harness.feed([first, second])
        XCTAssertEqual(harness.handlers[0].ends, [.idle, .idle])
        XCTAssertEqual(harness.handlers[0].endTimes, [.max, .max])
        harness.feed(third)
        XCTAssertEqual(harness.handlers.count, 3)
        XCTAssertEqual(harness.handlers[1].ends, [nil, nil])
        harness.finish()
        harness.assertNoProblems()
    }

    func testSaturatingArithmetic() {
        XCTAssertEqual(TCPAssembler.saturatingDifference(.max, .min), .max)
        XCTAssertEqual(TCPAssembler.saturatingDifference(.min, .max), .min)
        XCTAssertEqual(TCPAssembler.saturatingDifference(0, .min), .max)
        XCTAssertEqual(TCPAssembler.saturatingDifference(-1, .max), .min)
        XCTAssertEqual(TCPAssembler.saturatingDifference(-1, .min), .max) // -1 + 2^63 = Int64.max exactly
        XCTAssertEqual(TCPAssembler.saturatingDifference(10, 3), 7)
        // The sweep's `saturatingSum` (CaptureIO) is tested with CaptureIO.
    }
}
