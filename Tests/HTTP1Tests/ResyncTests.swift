import MessageModel

@testable import HTTP1
import TCPReassembly
import XCTest

// Gaps, mid-connection starts and resynchronization. Sizes counted by hand from the literals.

final class ResyncTests: XCTestCase {
    // MARK: 9. Gaps

    func testGapInsideContentLengthBody() {
        let outcome = verify([
            .client("GET /g HTTP/1.1\r\nHost: h\r\n\r\n"), // 17; 11
            // 17; "Content-Length: 10\r\n" 20 + 2 = 22; "abc" 3
            .server("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
            .gap(.down, 4),
            .server("hij"), // 3: 3 + 4 + 3 = 10
            .client("GET /h HTTP/1.1\r\nHost: h\r\n\r\n"),
            .server("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nZ"), // 17; 21; 1
        ])
        let cut = outcome.response(0)
        assertSizes(cut, line: 17, headers: 22, body: 10)
        XCTAssertEqual(cut?.missingBytes, 4)
        XCTAssertEqual(cut?.complete, true)
        XCTAssertEqual(cut?.anomalies, [.bytesMissing])
        XCTAssertEqual(outcome.body(of: cut), ObservedBody(bytes: Array("abchij".utf8), gaps: 1, gapBytes: 4))
        let next = outcome.response(1)
        assertSizes(next, line: 17, headers: 21, body: 1)
        XCTAssertEqual(next?.anomalies, [])
        XCTAssertEqual(next?.streamOffset, 49) // 17 + 22 + 10
        XCTAssertEqual(next?.pair, 1)
        XCTAssertEqual(outcome.tallies, [StreamTally(), StreamTally()])
    }

    func testGapBeyondTheBodyResynchronizes() {
        let outcome = verify([
            .client(
                "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\nGET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
            ),
            .server("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), // 17; 22; 3
            // 7 body bytes, then the first 13 bytes of the next response, "HTTP/1.1 200 " (8+1+3+1).
            .gap(.down, 20),
            // The rest of that response: "OK\r\n" 4, "Content-Length: 2\r\n" 19, "\r\n" 2, "ok" 2 = 27, skipped.
            .server("OK\r\nContent-Length: 2\r\n\r\nok"),
            // A response glued to "ok" (no line break between): found inside the line.
            .server("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz"), // 17; 21; 3
        ])
        let first = outcome.response(0)
        assertSizes(first, line: 17, headers: 22, body: 10)
        XCTAssertEqual(first?.missingBytes, 7)
        XCTAssertEqual(first?.complete, true)
        XCTAssertEqual(first?.anomalies, [.bytesMissing])
        XCTAssertEqual(outcome.body(of: first), ObservedBody(bytes: Array("abc".utf8), gaps: 1, gapBytes: 7))

        let found = outcome.response(1)
        assertSizes(found, line: 17, headers: 21, body: 3)
        XCTAssertEqual(found?.anomalies, [.afterResync])
        XCTAssertEqual(found?.complete, true)
        XCTAssertEqual(found?.streamOffset, 89) // 39 + 3 + 20 + 27
        XCTAssertEqual(found?.time, stepTime(4)) // the packet with its first byte, not the line's
        // The lost response cannot be told from the FIFO: the one found pairs with /2.
        XCTAssertEqual(found?.pair, 1)
        XCTAssertEqual(outcome.request(2)?.anomalies, [.unpaired])

        XCTAssertEqual(outcome.summary.serverTally.lostBytes, 13)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 27)
        XCTAssertEqual(outcome.summary.clientTally, StreamTally())
    }

    func testGapInChunkFramingEndsTheMessage() {
        let outcome = verify([
            .client("GET /c HTTP/1.1\r\nHost: h\r\n\r\nGET /d HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; 30; "5\r\n" 3 + "hello\r\n" 7 + "4" 1 (a chunk-size line cut by the gap) = 11
            .server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n4"),
            .gap(.down, 6),
            // "\r\n" 2, "0\r\n" 3, "\r\n" 2 skipped; then 17; 21
            .server("\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
        ])
        let cut = outcome.response(0)
        assertSizes(cut, line: 17, headers: 30, body: 11, bodyLength: 5)
        XCTAssertEqual(cut?.complete, false)
        XCTAssertEqual(cut?.missingBytes, 0)
        XCTAssertEqual(cut?.anomalies, [.bytesMissing])
        XCTAssertEqual(outcome.body(of: cut), ObservedBody(bytes: Array("hello".utf8)))
        let next = outcome.response(1)
        assertSizes(next, line: 17, headers: 21, body: 0)
        XCTAssertEqual(next?.anomalies, [.afterResync])
        XCTAssertEqual(next?.pair, 1)
        XCTAssertEqual(outcome.summary.serverTally.lostBytes, 6)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 7)
    }

    func testGapInsideChunkData() {
        let outcome = verify([
            .client("GET / HTTP/1.1\r\n\r\n"),
            // 17; 30; "a\r\n" 3 + "01234" 5
            .server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n01234"),
            .gap(.down, 3), // "567"
            .server("89\r\n0\r\n\r\n"), // 2 + 2 + 3 + 2 = 9
        ])
        let response = outcome.response(0)
        assertSizes(response, line: 17, headers: 30, body: 20, bodyLength: 10) // 3 + 5 + 3 + 9
        XCTAssertEqual(response?.missingBytes, 3)
        XCTAssertEqual(response?.complete, true)
        XCTAssertEqual(response?.anomalies, [.bytesMissing])
        XCTAssertEqual(outcome.body(of: response), ObservedBody(bytes: Array("0123489".utf8), gaps: 1, gapBytes: 3))
    }

    func testGapEndingExactlyAtTheChunkEnd() {
        let outcome = verify([
            .client("GET / HTTP/1.1\r\n\r\n"),
            .server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n01234"), // 17; 30; 3 + 5
            .gap(.down, 5),
            .server("\r\n0\r\n\r\n"), // 2 + 3 + 2 = 7
        ])
        let response = outcome.response(0)
        assertSizes(response, line: 17, headers: 30, body: 20, bodyLength: 10) // 3 + 5 + 5 + 7
        XCTAssertEqual(response?.complete, true)
        XCTAssertEqual(response?.missingBytes, 5)
    }

    func testGapPastTheChunkEnd() {
        let outcome = verify([
            .client("GET / HTTP/1.1\r\n\r\n"),
            .server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n01234"), // 17; 30; 3 + 5
            // 5 chunk bytes, the CRLF and "0\r" of the last chunk: the framing is lost.
            .gap(.down, 9),
            .server("\n\r\n"), // "\n" 1 and "\r\n" 2, skipped
        ])
        let response = outcome.response(0)
        assertSizes(response, line: 17, headers: 30, body: 13, bodyLength: 10) // 3 + 5 + 5
        XCTAssertEqual(response?.complete, false)
        XCTAssertEqual(response?.missingBytes, 5)
        XCTAssertEqual(outcome.summary.serverTally.lostBytes, 4)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 3)
    }

    func testGapInsideHead() {
        let outcome = verify([
            // "GET /cut HTTP/1.1\r\n" = 3+1+4+1+8+2 = 19; "Host: h\r\n" 9; "User-Ag" 7 (cut)
            .client("GET /cut HTTP/1.1\r\nHost: h\r\nUser-Ag"),
            .gap(.up, 12),
            // "\n" 1 skipped; "GET /next HTTP/1.1\r\n" = 3+1+5+1+8+2 = 20; 11
            .client("\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n"),
            .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
        ])
        let cut = outcome.request(0)
        assertSizes(cut, line: 19, headers: 16, body: 0)
        XCTAssertEqual(cut?.complete, false)
        XCTAssertEqual(cut?.method, "GET")
        XCTAssertEqual(cut?.target.text, "/cut")
        XCTAssertEqual(cut?.fields, [HeaderField("Host", "h")])
        XCTAssertEqual(cut?.anomalies, [.bytesMissing])
        XCTAssertEqual(cut?.missingBytes, 0) // how much of the hole was head is unknown
        XCTAssertEqual(cut?.pair, 0)
        let next = outcome.request(1)
        assertSizes(next, line: 20, headers: 11, body: 0)
        XCTAssertEqual(next?.anomalies, [.afterResync])
        XCTAssertEqual(next?.streamOffset, 48) // 35 + 12 + 1
        XCTAssertEqual(next?.pair, 1)
        XCTAssertEqual(outcome.summary.clientTally.lostBytes, 12)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 1)
    }

    func testGapInCloseDelimitedBody() {
        let outcome = verify([
            .client("GET / HTTP/1.0\r\n\r\n"),
            .server("HTTP/1.0 200 OK\r\n\r\nab"), // 17; 2; 2
            .gap(.down, 3),
            .server("cd"),
            .end(.down, .fin),
        ])
        let response = outcome.response(0)
        assertSizes(response, line: 17, headers: 2, body: 7)
        XCTAssertEqual(response?.missingBytes, 3)
        XCTAssertEqual(response?.complete, true)
    }

    func testGapWhileSeekingCountsThePartialLine() {
        let outcome = verify(
            [
                .server("tail"), // 4, no line break yet
                .gap(.down, 5),
                .server("HTTP/1.1 204 No Content\r\n\r\n"), // 25; 2
            ], handshake: false)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 4)
        XCTAssertEqual(outcome.summary.serverTally.lostBytes, 5)
        let response = outcome.response(0)
        assertSizes(response, line: 25, headers: 2, body: 0)
        XCTAssertEqual(response?.anomalies, [.afterResync, .unpaired])
        XCTAssertEqual(response?.streamOffset, 9)
    }

    func testGapBetweenMessages() {
        let outcome = verify([
            .client("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"),
            .gap(.up, 28), // a whole request lost
            .client("GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"),
        ])
        XCTAssertEqual(outcome.requests.count, 2)
        XCTAssertEqual(outcome.request(1)?.target.text, "/3")
        XCTAssertEqual(outcome.request(1)?.anomalies, [.afterResync, .unpaired])
        XCTAssertEqual(outcome.summary.clientTally.lostBytes, 28)
    }

    // MARK: 10. Mid-connection start

    func testMidConnectionStartFindsRolesFromContent() {
        // The first packet comes from the server, so the assembler's guess of the initiator is
        // the server: the roles come from what each side sends.
        let outcome = verify(
            [
                // "rld\r\n" 5 (the end of a body), then 17; 21; 2
                .send(.up, Array("rld\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), ack: .auto),
                // "t: h\r\n" 6 and "\r\n" 2 (the end of a request head), then 17; 11
                .send(.down, Array("t: h\r\n\r\nGET /n HTTP/1.1\r\nHost: h\r\n\r\n".utf8), ack: .auto),
                .send(.up, Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nZ".utf8), ack: .auto), // 17; 21; 1
            ], handshake: false)
        XCTAssertEqual(outcome.summary.protocolKind, .http)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 5)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 8)

        let orphan = outcome.response(0)
        assertSizes(orphan, line: 17, headers: 21, body: 2)
        XCTAssertEqual(orphan?.anomalies, [.afterResync, .unpaired])
        XCTAssertEqual(orphan?.streamOffset, 5)
        XCTAssertEqual(orphan?.client, responderEndpoint)
        XCTAssertEqual(orphan?.server, initiatorEndpoint)

        let request = outcome.request(0)
        assertSizes(request, line: 17, headers: 11, body: 0)
        XCTAssertEqual(request?.anomalies, [.afterResync])
        XCTAssertEqual(request?.streamOffset, 8)
        XCTAssertEqual(request?.pair, 1)
        XCTAssertEqual(request?.client, responderEndpoint)

        let answer = outcome.response(1)
        assertSizes(answer, line: 17, headers: 21, body: 1)
        XCTAssertEqual(answer?.anomalies, [])
        XCTAssertEqual(answer?.pair, 0)
    }

    func testMidConnectionStartAtAMessageBoundary() {
        let outcome = verify(
            [
                .client("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
                .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            ], handshake: false)
        XCTAssertEqual(outcome.request(0)?.anomalies, [])
        XCTAssertEqual(outcome.response(0)?.anomalies, [])
        XCTAssertEqual(outcome.response(0)?.pair, 0)
        XCTAssertEqual(outcome.tallies, [StreamTally(), StreamTally()])
    }

    func testStartLinesGluedToBodies() {
        let outcome = verify(
            [
                // "a=1&b=2" 7 (the end of a form body) glued to "POST /f HTTP/1.1\r\n" 18; 9 + 19 + 2 = 30
                .client("a=1&b=2POST /f HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"),
                // "\"v\"}" 4 (the end of a JSON body) glued to "HTTP/1.1 204 No Content\r\n" 25; 2
                .server("\"v\"}HTTP/1.1 204 No Content\r\n\r\n"),
            ], handshake: false)
        let request = outcome.request(0)
        assertSizes(request, line: 18, headers: 30, body: 0)
        XCTAssertEqual(request?.method, "POST")
        XCTAssertEqual(request?.streamOffset, 7)
        XCTAssertEqual(request?.anomalies, [.afterResync])
        let response = outcome.response(0)
        assertSizes(response, line: 25, headers: 2, body: 0)
        XCTAssertEqual(response?.streamOffset, 4)
        XCTAssertEqual(response?.anomalies, [.afterResync])
        // The request was sent before the response's packet: they pair.
        XCTAssertEqual(response?.pair, 0)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 7)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 4)
    }

    func testMidConnectionClientSkipsItsPartialRequestBody() {
        let outcome = verify(
            [
                // The end of a request body with a line break in it, then a request: "e\r\n" 3 + "tail" 4
                // are skipped ("tail" is glued to nothing it can start: no known method follows).
                .client("e\r\ntail"),
                .client("\r\nGET / HTTP/1.1\r\n\r\n"), // "\r\n" ends the skipped line "tail\r\n"; 16; 2
                .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            ], handshake: false)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 9) // 3 + 6
        assertSizes(outcome.request(0), line: 16, headers: 2, body: 0)
        XCTAssertEqual(outcome.request(0)?.streamOffset, 9)
        XCTAssertEqual(outcome.request(0)?.pair, 0)
    }

    /// Found by FuzzHTTP1 (Tests/Fixtures/fuzz-crashers/FuzzHTTP1/both-sides-send-requests):
    /// without the handshake both sides sent a request line and both heads were cut by the
    /// end; the two requests share index 0 and the first one's bytes went missing.
    func testRequestsFromBothSidesAreAllKept() {
        let outcome = verify(
            [
                .client("\nT / HTTP/1.1\nT\n"),
                .server("T / HTTP/1.1\n"),
                .end(.up, .fin), .end(.down, .fin),
            ], handshake: false)
        XCTAssertEqual(outcome.requests.count, 2)
        // Client: "\n" skipped while seeking a start line (1), then "T / HTTP/1.1\n" (13) and
        // "T\n" (2) as a cut head. Server: "T / HTTP/1.1\n" (13), a cut head with no fields.
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes + outcome.summary.serverTally.skippedBytes, 1)
        XCTAssertEqual(outcome.requests.map { $0.wireLine + $0.wireHeaders }.sorted(), [13, 15])
    }
}
