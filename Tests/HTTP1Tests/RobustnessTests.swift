import MessageModel

@testable import HTTP1
import TCPReassembly
import XCTest

// Roles decided by what each side sends, malformed request lines that were answered, and
// start lines cut short. Sizes counted by hand from the literals.

final class RobustnessTests: XCTestCase {
    // MARK: Roles

    func testRequestsFromTheSideThatAcceptedTheConnection() {
        // A SOCKS5 BIND: the client (TCP initiator) asks the proxy to accept a connection for
        // it; the remote peer's requests then come from the proxy, the side that accepted.
        let greeting: [UInt8] = [0x05, 0x01, 0x00] // 3
        let bind: [UInt8] = [0x05, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0] // 10
        let method: [UInt8] = [0x05, 0x00] // 2
        let bound: [UInt8] = [0x05, 0x00, 0x00, 0x01, 192, 168, 0, 1, 0x1F, 0x90] // 10
        let connected: [UInt8] = [0x05, 0x00, 0x00, 0x01, 192, 168, 0, 2, 0xC3, 0x50] // 10
        let outcome = verify([
            .clientBytes(greeting),
            .serverBytes(method),
            .clientBytes(bind),
            .serverBytes(bound),
            .serverBytes(connected),
            // "GET /reverse HTTP/1.1\r\n" 3+1+8+1+8+2 = 23; "Host: r\r\n" 9 + "\r\n" 2 = 11
            .server("GET /reverse HTTP/1.1\r\nHost: r\r\n\r\n"),
            // "HTTP/1.1 200 OK\r\n" 17; "Content-Length: 2\r\n" 19 + 2 = 21; "ok" 2
            .client("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        ])
        XCTAssertEqual(outcome.records.count, 2)
        let request = outcome.request(0)
        assertSizes(request, line: 23, headers: 11, body: 0)
        XCTAssertEqual(request?.streamOffset, 22) // 2 + 10 + 10 SOCKS bytes first
        XCTAssertEqual(request?.client, responderEndpoint)
        XCTAssertEqual(request?.server, initiatorEndpoint)
        XCTAssertEqual(request?.pair, 0)
        XCTAssertEqual(request?.anomalies, [.afterResync])
        let response = outcome.response(0)
        assertSizes(response, line: 17, headers: 21, body: 2)
        XCTAssertEqual(response?.streamOffset, 13) // 3 + 10
        XCTAssertEqual(response?.client, responderEndpoint)
        XCTAssertEqual(response?.pair, 0)
        XCTAssertEqual(response?.request?.method, "GET")
        XCTAssertEqual(outcome.body(of: response), ObservedBody(bytes: Array("ok".utf8)))
        // The client's tally is the side that sent requests: the proxy's 22 SOCKS bytes.
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 22)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 13)
    }

    func testOnceAMessageShowedTheRolesTheOtherKindIsNotTakenFromASide() {
        let outcome = verify([
            .client("GET / HTTP/1.1\r\n\r\n"), // 16; 2
            // A status line from the client after that is no message: 17 + 2 skipped.
            .client("HTTP/1.1 200 OK\r\n\r\n"),
            .server("HTTP/1.1 204 No Content\r\n\r\n"), // 8+1+3+1+10+2 = 25; 2
        ])
        XCTAssertEqual(outcome.requests.count, 1)
        XCTAssertEqual(outcome.responses.count, 1)
        assertSizes(outcome.response(0), line: 25, headers: 2, body: 0)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 19)
    }

    // MARK: Malformed request lines

    func testMalformedRequestLinesThatWereAnsweredAreRecords() {
        let outcome = verify([
            // "GET / HTTP/1.\r\n" 3+1+1+1+7+2 = 15; "Host: h\r\n" 9 + 2 = 11
            .client("GET / HTTP/1.\r\nHost: h\r\n\r\n"),
            // "HTTP/1.1 400 Bad Request\r\n" 8+1+3+1+11+2 = 26; "Content-Length: 0\r\n" 19 + 2 = 21
            .server("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
            // "GËT" is 4 bytes in UTF-8: 4+1+1+1+8+2 = 17; 2
            .clientBytes(Array("G\u{CB}T / HTTP/1.1\r\n\r\n".utf8)),
            .server("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
            // "GET / HTTP/1.0.8\r\n" 3+1+1+1+10+2 = 18; 2
            .client("GET / HTTP/1.0.8\r\n\r\n"),
            .server("HTTP/1.1 505 Version Not Supported\r\nContent-Length: 0\r\n\r\n"), // 8+1+3+1+21+2 = 36; 21
        ])
        XCTAssertEqual(outcome.records.count, 6)
        let badVersion = outcome.request(0)
        assertSizes(badVersion, line: 15, headers: 11, body: 0)
        XCTAssertEqual(badVersion?.anomalies, [.malformedStartLine])
        XCTAssertEqual(badVersion?.method, "GET")
        XCTAssertEqual(badVersion?.version, "HTTP/1.")
        XCTAssertEqual(badVersion?.fields, [HeaderField("Host", "h")])
        XCTAssertEqual(badVersion?.pair, 0)
        XCTAssertEqual(badVersion?.complete, true)
        let nonASCII = outcome.request(1)
        assertSizes(nonASCII, line: 17, headers: 2, body: 0)
        XCTAssertEqual(nonASCII?.method, "G\u{CB}T")
        XCTAssertEqual(nonASCII?.anomalies, [.malformedStartLine])
        XCTAssertEqual(nonASCII?.pair, 1)
        XCTAssertEqual(nonASCII?.streamOffset, 26) // 15 + 11
        let longVersion = outcome.request(2)
        assertSizes(longVersion, line: 18, headers: 2, body: 0)
        XCTAssertEqual(longVersion?.version, "HTTP/1.0.8")
        XCTAssertEqual(longVersion?.pair, 2)
        assertSizes(outcome.response(0), line: 26, headers: 21, body: 0)
        XCTAssertEqual(outcome.response(0)?.anomalies, [])
        XCTAssertEqual(outcome.response(1)?.pair, 1)
        assertSizes(outcome.response(2), line: 36, headers: 21, body: 0)
        XCTAssertEqual(outcome.response(2)?.pair, 2)
        XCTAssertEqual(outcome.tallies, [StreamTally(), StreamTally()])
    }

    func testHTTP09RequestHasNoFields() {
        let outcome = verify([
            .client("GET /\r\n"), // 3+1+1+2 = 7, the whole request
            // "HTTP/1.0 200 OK\r\n" 17; "\r\n" 2; body "hi" 2 until the server's FIN
            .server("HTTP/1.0 200 OK\r\n\r\nhi"),
            .end(.down, .fin),
        ])
        let request = outcome.request(0)
        assertSizes(request, line: 7, headers: 0, body: 0)
        XCTAssertEqual(request?.version, "")
        XCTAssertEqual(request?.target.text, "/")
        XCTAssertEqual(request?.anomalies, [.malformedStartLine])
        XCTAssertEqual(request?.pair, 0)
        let response = outcome.response(0)
        assertSizes(response, line: 17, headers: 2, body: 2)
        XCTAssertEqual(response?.framing, .untilClose)
        XCTAssertEqual(response?.complete, true)
    }

    func testAMalformedRequestLineNobodyAnsweredIsSkipped() {
        let outcome = verify([
            .client("GET / HTTP/1.\r\n\r\n"), // 15 + 2 = 17
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        XCTAssertEqual(outcome.records, [])
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 17)
    }

    func testAWellFormedRequestLineEndsAMalformedHead() {
        let outcome = verify([
            // "hello /world HTTP/x\r\n" 5+1+6+1+6+2 = 21, skipped once a request line follows;
            // "GET /real HTTP/1.1\r\n" 3+1+5+1+8+2 = 20; 2
            .client("hello /world HTTP/x\r\nGET /real HTTP/1.1\r\n\r\n"),
            .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), // 17; 21
        ])
        XCTAssertEqual(outcome.requests.count, 1)
        let request = outcome.request(0)
        assertSizes(request, line: 20, headers: 2, body: 0)
        XCTAssertEqual(request?.target.text, "/real")
        XCTAssertEqual(request?.anomalies, [.afterResync])
        XCTAssertEqual(request?.streamOffset, 21)
        XCTAssertEqual(request?.pair, 0)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 21)
    }

    func testTextThatIsNoRequestLineIsNotTakenForOne() {
        XCTAssertNil(StartLine.parseMalformedRequest(Array("hello world".utf8)[...]), "HTTP/0.9 needs a /path")
        XCTAssertNil(StartLine.parseMalformedRequest(Array("<p> / HTTP/1.1".utf8)[...]), "'<' is no method byte")
        XCTAssertNil(StartLine.parseMalformedRequest(Array("GET / FTP/1.0".utf8)[...]))
        XCTAssertNil(StartLine.parseMalformedRequest(Array("GET /a b HTTP/1.1".utf8)[...]))
        XCTAssertNil(StartLine.parseMalformedRequest(Array("HTTP/1.1 200 OK".utf8)[...]))
        XCTAssertNil(StartLine.parseMalformedRequest([0x47, 0x09, 0x2F, 0x20, 0x48, 0x54, 0x54, 0x50, 0x2F][...]))
    }

    // MARK: Start lines cut short

    func testStartLinesCutBySnaplenAreIncompleteRecordsOnBothSides() {
        let outcome = verify([
            // 64-byte snaplen: "GET /a/very/long/pa" 4 + 15 = 19 bytes kept, 30 cut.
            .client("GET /a/very/long/pa"),
            .gap(.up, 30),
            // "HTTP/1.1 200 O" 14 bytes kept, 25 cut.
            .server("HTTP/1.1 200 O"),
            .gap(.down, 25),
        ])
        XCTAssertEqual(outcome.records.count, 2)
        let request = outcome.request(0)
        assertSizes(request, line: 19, headers: 0, body: 0)
        XCTAssertEqual(request?.method, "GET")
        XCTAssertEqual(request?.target.text, "/a/very/long/pa")
        XCTAssertEqual(request?.startLine.text, "GET /a/very/long/pa")
        XCTAssertEqual(request?.complete, false)
        XCTAssertEqual(request?.anomalies, [.bytesMissing])
        XCTAssertEqual(request?.pair, 0)
        let response = outcome.response(0)
        assertSizes(response, line: 14, headers: 0, body: 0)
        XCTAssertEqual(response?.status, 200)
        XCTAssertEqual(response?.complete, false)
        XCTAssertEqual(response?.anomalies, [.bytesMissing])
        XCTAssertEqual(response?.pair, 0)
        XCTAssertEqual(outcome.summary.clientTally.lostBytes, 30)
        XCTAssertEqual(outcome.summary.serverTally.lostBytes, 25)
    }

    func testAStartLineCutBeforeItShowsItsKindIsSkipped() {
        let outcome = verify([
            .client("GE"), // no method yet: 2 skipped
            .gap(.up, 40),
            .server("HTTP/1.1 20"), // no status yet: 11 skipped
            .gap(.down, 40),
        ])
        XCTAssertEqual(outcome.records, [])
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 2)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 11)
    }
}
