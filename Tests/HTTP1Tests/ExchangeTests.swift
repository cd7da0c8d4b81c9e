import MessageModel

@testable import HTTP1
import Flows
import TCPReassembly
import XCTest

// Every expected size below is counted by hand from the literals in the test.

final class ExchangeTests: XCTestCase {
    // MARK: 1. GET/200 with Content-Length, keep-alive, index and pair

    func testKeepAliveExchanges() {
        let outcome = verify([
            // "GET /a HTTP/1.1\r\n" = 3+1+2+1+8+2 = 17; "Host: example.com\r\n" = 5+1+11+2 = 19; "\r\n" = 2
            .client("GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n"),
            // "HTTP/1.1 200 OK\r\n" = 8+1+3+1+2+2 = 17; "Content-Length: 5\r\n" = 15+1+1+2 = 19; "\r\n" = 2; "hello" = 5
            .server("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
            // 17; 19 + 2
            .client("GET /b HTTP/1.1\r\nHost: example.com\r\n\r\n"),
            // "HTTP/1.1 404 Not Found\r\n" = 8+1+3+1+9+2 = 24; "Content-Length: 3\r\n" = 19;
            // "Content-Type: text/plain\r\n" = 13+1+10+2 = 26; "\r\n" = 2; "nop" = 3
            .server("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nnop"),
            // "POST /c HTTP/1.1\r\n" = 4+1+2+1+8+2 = 18; 19; "Content-Length: 11\r\n" = 15+1+2+2 = 20; 2; "hello world" = 11
            .client("POST /c HTTP/1.1\r\nHost: example.com\r\nContent-Length: 11\r\n\r\nhello world"),
            // "HTTP/1.1 201 Created\r\n" = 8+1+3+1+7+2 = 22; "Content-Length: 0\r\n" = 19; 2
            .server("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        XCTAssertEqual(outcome.requests.count, 3)
        XCTAssertEqual(outcome.responses.count, 3)
        XCTAssertEqual(outcome.summary.protocolKind, .http)
        XCTAssertEqual(outcome.tallies, [StreamTally(), StreamTally()])

        let get = outcome.request(0)
        assertSizes(get, line: 17, headers: 21, body: 0)
        XCTAssertEqual(get?.method, "GET")
        XCTAssertEqual(get?.target.text, "/a")
        XCTAssertEqual(get?.version, "HTTP/1.1")
        XCTAssertEqual(get?.fields, [HeaderField("Host", "example.com")])
        XCTAssertEqual(get?.requestHost, "example.com")
        XCTAssertEqual(get?.framing, BodyFraming.none)
        XCTAssertEqual(get?.pair, 0)
        XCTAssertEqual(get?.complete, true)
        XCTAssertEqual(get?.anomalies, [])
        XCTAssertEqual(get?.connection, 3)
        XCTAssertEqual(get?.client, initiatorEndpoint)
        XCTAssertEqual(get?.server, responderEndpoint)
        XCTAssertEqual(get?.time, stepTime(0))
        XCTAssertEqual(get?.streamOffset, 0)

        let ok = outcome.response(0)
        assertSizes(ok, line: 17, headers: 21, body: 5)
        XCTAssertEqual(ok?.status, 200)
        XCTAssertEqual(ok?.reason.text, "OK")
        XCTAssertEqual(ok?.framing, .length(5))
        XCTAssertEqual(ok?.pair, 0)
        XCTAssertEqual(ok?.request?.method, "GET")
        XCTAssertEqual(ok?.request?.target.text, "/a")
        XCTAssertEqual(ok?.request?.host, "example.com")
        XCTAssertEqual(ok?.complete, true)
        XCTAssertEqual(ok?.time, stepTime(1))
        XCTAssertEqual(outcome.body(of: ok), ObservedBody(bytes: Array("hello".utf8)))

        let second = outcome.request(1)
        assertSizes(second, line: 17, headers: 21, body: 0)
        XCTAssertEqual(second?.streamOffset, 38) // 17 + 21
        XCTAssertEqual(second?.pair, 1)
        let notFound = outcome.response(1)
        assertSizes(notFound, line: 24, headers: 47, body: 3) // 19 + 26 + 2 = 47
        XCTAssertEqual(notFound?.streamOffset, 43) // 17 + 21 + 5
        XCTAssertEqual(notFound?.reason.text, "Not Found")
        XCTAssertEqual(notFound?.pair, 1)

        let post = outcome.request(2)
        assertSizes(post, line: 18, headers: 41, body: 11) // 19 + 20 + 2 = 41
        XCTAssertEqual(post?.streamOffset, 76) // 38 + 38
        XCTAssertEqual(post?.framing, .length(11))
        XCTAssertEqual(post?.pair, 2)
        XCTAssertEqual(outcome.body(of: post), ObservedBody(bytes: Array("hello world".utf8)))
        let created = outcome.response(2)
        assertSizes(created, line: 22, headers: 21, body: 0)
        XCTAssertEqual(created?.streamOffset, 117) // 43 + 24 + 47 + 3
        XCTAssertEqual(created?.framing, BodyFraming.none) // Content-Length: 0
        XCTAssertEqual(created?.pair, 2)
        XCTAssertEqual(created?.request?.method, "POST")

        // A finished request is handed over once paired: when its response's head is parsed,
        // before that response's body.
        XCTAssertEqual(outcome.records.map(\.kind), [.request, .response, .request, .response, .request, .response])
        // 38 + 43 + 38 + 74 + 70 + 43
        XCTAssertEqual(outcome.fedBytes, 306)
    }

    // MARK: 3. Pipelining with a HEAD in the middle

    func testPipelinedRequestsWithHead() {
        let outcome = verify([
            // "GET /1 HTTP/1.1\r\n" = 17, "Host: h\r\n" = 9 + "\r\n" = 11 → 28
            // "HEAD /2 HTTP/1.1\r\n" = 4+1+2+1+8+2 = 18, 11 → 29
            // "GET /3 HTTP/1.1\r\n" = 17, 11 → 28
            .client(
                "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: h\r\n\r\nGET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
            ),
            // 17, "Content-Length: 3\r\n" 19 + 2 = 21, "abc" 3 → 41
            // 17, "Content-Length: 1000\r\n" = 15+1+4+2 = 22, + 2 = 24, no body → 41
            // 17, 21, "xy" 2 → 40
            .server(
                "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
                    + "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nxy"),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        XCTAssertEqual(outcome.requests.count, 3)
        XCTAssertEqual(outcome.responses.count, 3)
        assertSizes(outcome.request(0), line: 17, headers: 11, body: 0)
        assertSizes(outcome.request(1), line: 18, headers: 11, body: 0)
        assertSizes(outcome.request(2), line: 17, headers: 11, body: 0)
        XCTAssertEqual(outcome.requests.map(\.streamOffset), [0, 28, 57])
        XCTAssertEqual(outcome.request(1)?.method, "HEAD")

        assertSizes(outcome.response(0), line: 17, headers: 21, body: 3)
        let head = outcome.response(1)
        assertSizes(head, line: 17, headers: 24, body: 0)
        XCTAssertEqual(head?.framing, BodyFraming.none)
        XCTAssertEqual(head?.request?.method, "HEAD")
        XCTAssertEqual(head?.complete, true)
        XCTAssertEqual(head?.message.values(of: "content-length"), [Array("1000".utf8)])
        assertSizes(outcome.response(2), line: 17, headers: 21, body: 2)
        XCTAssertEqual(outcome.body(of: outcome.response(2)), ObservedBody(bytes: Array("xy".utf8)))
        XCTAssertEqual(outcome.responses.map(\.streamOffset), [0, 41, 82])
        for index in 0..<3 {
            XCTAssertEqual(outcome.request(index)?.pair, index)
            XCTAssertEqual(outcome.response(index)?.pair, index)
            XCTAssertEqual(outcome.response(index)?.request?.index, index)
            XCTAssertEqual(outcome.response(index)?.anomalies, [])
        }
        XCTAssertEqual(outcome.tallies, [StreamTally(), StreamTally()])
    }

    // MARK: 5. Bare LF and obs-fold

    func testBareLineFeedsAndObsFold() {
        let outcome = verify([
            // "GET /lf HTTP/1.1\n" = 3+1+3+1+8+1 = 17
            // "Host: h\n" = 5+1+1+1 = 8; "X-Long: first\r\n" = 7+1+5+2 = 15;
            // " \t second\r\n" = 1+1+1+6+2 = 11; "\n" = 1 → 35
            .client("GET /lf HTTP/1.1\nHost: h\nX-Long: first\r\n \t second\r\n\n"),
            // "HTTP/1.1 200 OK\n" = 16; "Content-Length: 2\n" = 15+1+1+1 = 18; "\n" = 1 → 19; "hi" = 2
            .server("HTTP/1.1 200 OK\nContent-Length: 2\n\nhi"),
            // "GET /c HTTP/1.1\n" = 16; "\n" = 1
            .client("GET /c HTTP/1.1\n\n"),
            // 16; "Transfer-Encoding: chunked\n" = 18+1+7+1 = 27; "\n" → 28
            // body "2\n" 2 + "ab" 2 + "\n" 1 + "0\n" 2 + "\n" 1 = 8, de-chunked 2
            .server("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nab\n0\n\n"),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        let request = outcome.request(0)
        assertSizes(request, line: 17, headers: 35, body: 0)
        XCTAssertEqual(request?.fields, [HeaderField("Host", "h"), HeaderField("X-Long", "first second")])
        XCTAssertEqual(request?.anomalies, [.bareLF, .obsFold])
        XCTAssertEqual(request?.version, "HTTP/1.1")

        let response = outcome.response(0)
        assertSizes(response, line: 16, headers: 19, body: 2)
        XCTAssertEqual(response?.anomalies, [.bareLF])
        XCTAssertEqual(response?.pair, 0)

        assertSizes(outcome.request(1), line: 16, headers: 1, body: 0)
        let chunked = outcome.response(1)
        assertSizes(chunked, line: 16, headers: 28, body: 8, bodyLength: 2)
        XCTAssertEqual(chunked?.complete, true)
        XCTAssertEqual(chunked?.anomalies, [.bareLF])
        XCTAssertEqual(outcome.body(of: chunked), ObservedBody(bytes: Array("ab".utf8)))
    }

    // MARK: 7. 204, 304 with Content-Length, 1xx, HEAD

    func testResponsesWithoutBody() {
        let outcome = verify([
            // "GET /x HTTP/1.1\r\n" = 17; "Host: h\r\n\r\n" = 11
            .client("GET /x HTTP/1.1\r\nHost: h\r\n\r\n"),
            // "HTTP/1.1 103 Early Hints\r\n" = 8+1+3+1+11+2 = 26;
            // "Link: </s.css>; rel=preload\r\n" = 5+1+(8+2+11)+2 = 29; "\r\n" → 31
            // "HTTP/1.1 304 Not Modified\r\n" = 8+1+3+1+12+2 = 27; "Content-Length: 50\r\n" = 15+1+2+2 = 20;
            // "ETag: \"v1\"\r\n" = 5+1+4+2 = 12; "\r\n" → 34
            .server(
                "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                    + "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\nETag: \"v1\"\r\n\r\n"),
            // "DELETE /x HTTP/1.1\r\n" = 6+1+2+1+8+2 = 20; 11
            .client("DELETE /x HTTP/1.1\r\nHost: h\r\n\r\n"),
            // "HTTP/1.1 204 No Content\r\n" = 8+1+3+1+10+2 = 25; "\r\n" = 2
            .server("HTTP/1.1 204 No Content\r\n\r\n"),
            // "HEAD /x HTTP/1.1\r\n" = 18; 11
            .client("HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; "Content-Length: 1234\r\n" = 15+1+4+2 = 22; "\r\n" → 24
            .server("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"),
            // 17; 11
            .client("GET /y HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; 19 + 2 = 21; "body" 4
            .server("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody"),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        XCTAssertEqual(outcome.responses.count, 5)
        XCTAssertEqual(outcome.requests.count, 4)

        let hints = outcome.response(0)
        assertSizes(hints, line: 26, headers: 31, body: 0)
        XCTAssertEqual(hints?.isInterim, true)
        XCTAssertEqual(hints?.pair, nil)
        XCTAssertEqual(hints?.request?.index, 0)
        XCTAssertEqual(hints?.anomalies, [])
        XCTAssertEqual(hints?.complete, true)

        let notModified = outcome.response(1)
        assertSizes(notModified, line: 27, headers: 34, body: 0)
        XCTAssertEqual(notModified?.framing, BodyFraming.none)
        XCTAssertEqual(notModified?.pair, 0)
        XCTAssertEqual(notModified?.streamOffset, 57) // 26 + 31

        let noContent = outcome.response(2)
        assertSizes(noContent, line: 25, headers: 2, body: 0)
        XCTAssertEqual(noContent?.pair, 1)
        XCTAssertEqual(noContent?.request?.method, "DELETE")

        let head = outcome.response(3)
        assertSizes(head, line: 17, headers: 24, body: 0)
        XCTAssertEqual(head?.framing, BodyFraming.none)
        XCTAssertEqual(head?.pair, 2)

        assertSizes(outcome.response(4), line: 17, headers: 21, body: 4)
        XCTAssertEqual(outcome.response(4)?.pair, 3)
        XCTAssertEqual(outcome.requests.map(\.pair), [1, 2, 3, 4])
        XCTAssertEqual(outcome.tallies, [StreamTally(), StreamTally()])
        // No observer for bodiless messages.
        XCTAssertEqual(outcome.observersAsked.count, 1)
    }

    // MARK: 11. Unpaired requests and responses, the acknowledgement rule

    func testResponseThatCannotAnswerTheFrontRequest() {
        let outcome = verify([
            // 17 + 11 = 28
            .client("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // Its packet acknowledges nothing of the client's stream: it answers a request the
            // capture does not hold. 17 + 21 = 38
            .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ack: .at(0)),
            // Acknowledges the whole request: answers it. "HTTP/1.1 202 Accepted\r\n" = 8+1+3+1+8+2 = 23; 21
            .server("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", ack: .at(28)),
            // Never answered.
            .client("GET /2 HTTP/1.1\r\nHost: h\r\n\r\n"),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        let stray = outcome.response(0)
        XCTAssertEqual(stray?.pair, nil)
        XCTAssertEqual(stray?.request, nil)
        XCTAssertEqual(stray?.anomalies, [.unpaired])
        assertSizes(stray, line: 17, headers: 21, body: 0)
        let accepted = outcome.response(1)
        XCTAssertEqual(accepted?.pair, 0)
        XCTAssertEqual(accepted?.anomalies, [])
        assertSizes(accepted, line: 23, headers: 21, body: 0)
        XCTAssertEqual(outcome.request(0)?.pair, 1)
        XCTAssertEqual(outcome.request(0)?.anomalies, [])
        let unanswered = outcome.request(1)
        XCTAssertEqual(unanswered?.pair, nil)
        XCTAssertEqual(unanswered?.anomalies, [.unpaired])
        XCTAssertEqual(unanswered?.complete, true)
        assertSizes(unanswered, line: 17, headers: 11, body: 0)
    }

    func testAcknowledgementEqualToTheRequestStartDoesNotPair() {
        // The rule is "starts at or after what the packet acknowledges".
        let outcome = verify([
            .client("GET /0 HTTP/1.1\r\nHost: h\r\n\r\n"), // 28, offset 0
            .client("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"), // 28, offset 28
            .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ack: .at(28)), // answers /0
            // Acknowledges up to the start of /1 only: answers nothing the capture holds.
            .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ack: .at(28)),
            .server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ack: .none), // unknown: FIFO
        ])
        XCTAssertEqual(outcome.responses.map(\.pair), [0, nil, 1])
        XCTAssertEqual(outcome.requests.map(\.pair), [0, 2])
    }

    func testOnlyRequestsOrOnlyResponses() {
        // A request reset before any answer.
        let requestOnly = verify([
            // "POST /x HTTP/1.1\r\n" = 18; 9 + "Content-Length: 3\r\n" 19 + 2 = 30; "abc"
            .client("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"),
            .end(.up, .reset),
            .end(.down, .reset),
        ])
        XCTAssertEqual(requestOnly.records.count, 1)
        assertSizes(requestOnly.request(0), line: 18, headers: 30, body: 3)
        XCTAssertEqual(requestOnly.request(0)?.anomalies, [.unpaired])
        XCTAssertEqual(requestOnly.request(0)?.complete, true)

        // A response whose request came before the capture (the handshake was seen, yet the
        // request bytes were not, e.g. a filter): unpaired.
        let responseOnly = verify([
            .server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") // 17, 21, 2
        ])
        XCTAssertEqual(responseOnly.records.count, 1)
        assertSizes(responseOnly.response(0), line: 17, headers: 21, body: 2)
        XCTAssertEqual(responseOnly.response(0)?.anomalies, [.unpaired])
        XCTAssertEqual(responseOnly.response(0)?.request, nil)
    }

    // MARK: 12. Content-Length and Transfer-Encoding rules

    func testContentLengthAndTransferEncodingRules() {
        let outcome = verify([
            .client("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; "Content-Length: 5, 5\r\n" = 15+1+4+2 = 22, + 2 = 24; "hello" 5
            .server("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello"),
            // "POST /c HTTP/1.1\r\n" = 18; "Host: h\r\n" 9, "Transfer-Encoding: chunked\r\n" = 18+1+7+2 = 28, 2 → 39
            // body "4\r\n" 3 + "Wiki\r\n" 6 + "0\r\n" 3 + "\r\n" 2 = 14, de-chunked 4
            .client("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n0\r\n\r\n"),
            // 17; two "Content-Length: 3\r\n" = 19 + 19, + 2 = 40; "abc"
            .server("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
            .client("GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; "Content-Length: 100\r\n" = 15+1+3+2 = 21, 28, 2 → 51
            // body "3\r\n" 3 + "abc\r\n" 5 + "0\r\n" 3 + "\r\n" 2 = 13, de-chunked 3
            .server(
                "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
            .end(.up, .fin),
            .end(.down, .fin),
        ])
        let same = outcome.response(0)
        assertSizes(same, line: 17, headers: 24, body: 5)
        XCTAssertEqual(same?.framing, .length(5))
        XCTAssertEqual(same?.anomalies, [])

        let chunkedRequest = outcome.request(1)
        assertSizes(chunkedRequest, line: 18, headers: 39, body: 14, bodyLength: 4)
        XCTAssertEqual(chunkedRequest?.framing, .chunked)
        XCTAssertEqual(chunkedRequest?.complete, true)
        XCTAssertEqual(outcome.body(of: chunkedRequest), ObservedBody(bytes: Array("Wiki".utf8)))

        let repeated = outcome.response(1)
        assertSizes(repeated, line: 17, headers: 40, body: 3)
        XCTAssertEqual(repeated?.anomalies, [])

        let both = outcome.response(2)
        assertSizes(both, line: 17, headers: 51, body: 13, bodyLength: 3)
        XCTAssertEqual(both?.framing, .chunked)
        XCTAssertEqual(both?.anomalies, [.lengthAndChunked])
        XCTAssertEqual(outcome.requests.map(\.pair), [0, 1, 2])
    }

    func testConflictingContentLengthInResponseReadsToClose() {
        let outcome = verify([
            .client("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; "Content-Length: 5, 6\r\n" = 22, + 2 = 24; then everything up to the FIN: "hello!" 6
            .server("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!"),
            .end(.down, .fin),
            .end(.up, .fin),
        ])
        let response = outcome.response(0)
        assertSizes(response, line: 17, headers: 24, body: 6)
        XCTAssertEqual(response?.framing, .untilClose)
        XCTAssertEqual(response?.complete, true)
        XCTAssertEqual(response?.anomalies, [.invalidContentLength])
    }

    func testConflictingContentLengthInRequestHasNoBody() {
        // A server rejects such a request (RFC 9112 §6.3); its would-be body is no message.
        let outcome = verify([
            // "POST /x HTTP/1.1\r\n" = 18; "Content-Length: 5, 6\r\n" = 22 + 2 = 24
            .client("POST /x HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\nhello"),
            // "HTTP/1.1 400 Bad Request\r\n" = 8+1+3+1+11+2 = 26; "Connection: close\r\n" = 11+1+5+2 = 19; 2
            .server("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"),
            .end(.down, .fin),
            .end(.up, .fin),
        ])
        let request = outcome.request(0)
        assertSizes(request, line: 18, headers: 24, body: 0)
        XCTAssertEqual(request?.anomalies, [.invalidContentLength])
        XCTAssertEqual(request?.pair, 0)
        // "hello" has no line break: skipped at the end.
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 5)
        // The 400 has no length: it runs to the FIN, with an empty body.
        assertSizes(outcome.response(0), line: 26, headers: 21, body: 0)
        XCTAssertEqual(outcome.response(0)?.framing, .untilClose)
        XCTAssertEqual(outcome.response(0)?.complete, true)
    }

    // MARK: 6. Close-delimited responses

    func testCloseDelimitedResponse() {
        func script(_ reason: StreamEndReason) -> [Step] {
            [
                // "GET /old HTTP/1.0\r\n" = 3+1+4+1+8+2 = 19; "\r\n" = 2
                .client("GET /old HTTP/1.0\r\n\r\n"),
                // "HTTP/1.0 200 OK\r\n" = 17; "Content-Type: text/plain\r\n" = 26; "\r\n" → 28
                .server("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nsome text"), // 9
                .server("\nmore"), // 5
                .end(.down, reason),
                .end(.up, reason),
            ]
        }
        for (reason, complete) in [
            (StreamEndReason.fin, true), (.reset, false), (.endOfCapture, false), (.idle, false),
        ] {
            let outcome = verify(script(reason))
            let response = outcome.response(0)
            assertSizes(response, line: 17, headers: 28, body: 14)
            XCTAssertEqual(response?.framing, .untilClose)
            XCTAssertEqual(response?.complete, complete, "\(reason)")
            XCTAssertEqual(response?.version, "HTTP/1.0")
            XCTAssertEqual(outcome.body(of: response), ObservedBody(bytes: Array("some text\nmore".utf8)))
            assertSizes(outcome.request(0), line: 19, headers: 2, body: 0)
            XCTAssertEqual(outcome.request(0)?.version, "HTTP/1.0")
        }
    }

    // MARK: Head limits and close without end

    func testHeadLargerThanTheLimitIsCutAtTheLimit() {
        let limits = HTTPLimits(maxHeadBytes: 40, maxLineBytes: 16 << 10)
        let outcome = verify(
            [
                // "GET /big HTTP/1.1\r\n" = 19; "X-Pad: " + 30 × "a" + "\r\n" = 39: the head reaches 40
                // bytes 21 bytes into the field line, and stops there.
                .client("GET /big HTTP/1.1\r\nX-Pad: " + String(repeating: "a", count: 30) + "\r\n\r\n"),
                // That is "X-Pad: " (7) and 14 × "a". The rest, 16 × "a" + "\r\n" (18) then "\r\n" (2),
                // is skipped while resynchronizing;
                // "GET /s HTTP/1.1\r\n" 17 + "\r\n" 2 is the next request.
                .client("GET /s HTTP/1.1\r\n\r\n"),
            ], limits: limits)
        let big = outcome.request(0)
        assertSizes(big, line: 19, headers: 21, body: 0)
        XCTAssertEqual(big?.complete, false)
        XCTAssertEqual(big?.anomalies, [.headTooLarge, .unpaired])
        let next = outcome.request(1)
        assertSizes(next, line: 17, headers: 2, body: 0)
        XCTAssertEqual(next?.anomalies, [.afterResync, .unpaired])
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 20)
    }

    func testCloseWithoutEndFinishesWhatIsOpen() {
        let outcome = verify(
            [
                // 17; 19 + 2 = 21 announced 10, 4 sent
                .client("GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
                .server("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabcd"),
            ], endSides: false)
        // "Content-Length: 10\r\n" = 20 + 2
        assertSizes(outcome.response(0), line: 17, headers: 22, body: 4)
        XCTAssertEqual(outcome.response(0)?.complete, false)
        XCTAssertEqual(outcome.request(0)?.pair, 0)
    }

    func testGarbageConnectionIsOther() {
        let outcome = verify([
            .clientBytes([0x00, 0x01, 0x02, 0x0A, 0xFF]),
            .serverBytes([0x10, 0x20]),
        ])
        XCTAssertEqual(outcome.records.count, 0)
        XCTAssertEqual(outcome.summary.protocolKind, .other)
        XCTAssertEqual(outcome.summary.clientTally.skippedBytes, 5)
        XCTAssertEqual(outcome.summary.serverTally.skippedBytes, 2)
    }
}
