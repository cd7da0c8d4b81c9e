import CaptureIO
import MessageModel
@testable import HARMessages
import Records
import XCTest

/// The rules of docs/HAR.md on small entries, with every size counted by hand.
final class HARMessageBuilderTests: XCTestCase {
    private func entry(
        url: String = "http://127.0.0.1:8080/a/b?x=1#frag", requestHeaders: [HARHeader] = [],
        headersSize: Int? = nil, bodySize: Int? = nil, postData: HARPostData? = nil,
        response: HARResponse? = nil, server: String? = "127.0.0.1"
    ) -> HAREntry {
        HAREntry(
            index: 3, startedDateTime: "2024-03-01T10:00:00.123456Z", connection: "42", serverIPAddress: server,
            request: HARRequest(
                method: "POST", url: url, httpVersion: "HTTP/1.1", headers: requestHeaders,
                cookieCount: 0, headersSize: headersSize, bodySize: bodySize, postData: postData),
            response: response, responseStatus: response?.status, responseError: nil, fromCache: false,
            webSocketMessageCount: 0)
    }

    private func response(
        status: Int = 200, headers: [HARHeader], headersSize: Int? = nil, bodySize: Int? = nil,
        text: String? = nil, transferSize: Int? = nil, error: String? = nil
    ) -> HARResponse {
        HARResponse(
            status: status, statusText: "OK", httpVersion: "HTTP/1.1", headers: headers, cookieCount: 0,
            headersSize: headersSize, bodySize: bodySize, content: HARContent(text: text.map { Array($0.utf8) }),
            transferSize: transferSize, error: error)
    }

    func testReportedSizesSplitTheHeadAtTheSerializedStartLine() {
        // "POST /a/b?x=1 HTTP/1.1\r\n" = 4+1+8+1+8+2 = 24; headersSize 100 → headers 76; body 5.
        let built = HARMessageBuilder(rule: .reportedSizes).messages(
            for: entry(
                headersSize: 100, bodySize: 5,
                postData: HARPostData(
                    mimeType: "text/plain", text: Array("hello".utf8),
                    encoding: nil, params: [])))
        XCTAssertEqual(built.request.wire, WireSize(line: 24, headers: 76, body: 5, total: 105, source: .har))
        XCTAssertEqual(built.request.body, Array("hello".utf8))
        XCTAssertEqual(
            built.request.message.target, Array("http://127.0.0.1:8080/a/b?x=1".utf8), "the fragment is never sent")
        XCTAssertNil(built.response)
        XCTAssertTrue(built.request.message.anomalies.contains(.unpaired))
        // 2024-03-01T10:00:00Z is 1709287200 s after the epoch.
        XCTAssertEqual(
            built.request.source,
            HAREntrySource(
                entry: 3, rule: .reportedSizes, connection: "42",
                time: 1_709_287_200_123_456_000, server: "127.0.0.1:8080"))
    }

    func testTransferSizeStandsInWhenHeadersSizeIsUnknown() {
        let built = HARMessageBuilder(rule: .reportedSizes).messages(
            for: entry(
                requestHeaders: [
                    HARHeader(name: ":authority", value: "127.0.0.1"), HARHeader(name: "accept", value: "*/*"),
                ],
                response: response(headers: [HARHeader(name: ":status", value: "200")], text: "hi", transferSize: 120)))
        XCTAssertEqual(built.request.wire.source, .unknown)
        XCTAssertNil(built.request.wire.total)
        XCTAssertEqual(built.request.body, [], "no postData and no length field: empty")
        XCTAssertEqual(built.request.message.fields, [HeaderField("accept", "*/*")], "pseudo-headers are no fields")
        let response = try! XCTUnwrap(built.response)
        XCTAssertEqual(
            response.wire, WireSize(line: nil, headers: nil, body: nil, total: 120, source: .harTransferSize))
        XCTAssertEqual(response.message.fields, [])
        XCTAssertEqual(response.message.pair, 3)
        XCTAssertEqual(response.message.startLine, Array("HTTP/1.1 200 OK".utf8))
    }

    func testMitmproxyHeadsAreReconstructedWithOneChunkOfFraming() {
        XCTAssertEqual(ExporterRule(creatorName: "mitmproxy har_dump"), .reconstructedHead)
        XCTAssertEqual(ExporterRule(creatorName: "WebInspector"), .reportedSizes)
        let built = HARMessageBuilder(rule: .reconstructedHead).messages(
            for: entry(
                headersSize: 999, bodySize: 0,
                response: response(
                    headers: [HARHeader(name: "Transfer-Encoding", value: "chunked")],
                    headersSize: 999, bodySize: 1073, text: "x")))
        // Request: line 24; no fields → headers 2; body 0.
        XCTAssertEqual(built.request.wire, WireSize(line: 24, headers: 2, body: 0, total: 26, source: .reconstructed))
        // Response: "HTTP/1.1 200 OK\r\n" 17; "Transfer-Encoding: chunked\r\n" 17+2+7+2 = 28, + 2 = 30;
        // body 1073 = 0x431: "431\r\n" 5 + data + "\r\n" 2 + "0\r\n\r\n" 5 → 1085.
        XCTAssertEqual(
            built.response?.wire, WireSize(line: 17, headers: 30, body: 1085, total: 1132, source: .reconstructed))
        XCTAssertEqual(built.response?.message.framing, .chunked)
    }

    func testRequestBodies() {
        let builder = HARMessageBuilder(rule: .reportedSizes)
        let form = HARPostData(
            mimeType: "application/x-www-form-urlencoded; charset=UTF-8", text: nil, encoding: nil,
            params: [HARHeader(name: "q", value: "a b"), HARHeader(name: "n", value: "é&")])
        let fromParams = builder.messages(for: entry(postData: form)).request
        XCTAssertEqual(String(decoding: fromParams.body ?? [], as: UTF8.self), "q=a+b&n=%C3%A9%26")
        XCTAssertEqual(fromParams.notes, [.bodyFromParams])

        let multipart = HARPostData(
            mimeType: "multipart/form-data; boundary=x", text: nil, encoding: nil,
            params: [HARHeader(name: "f", value: "v")])
        XCTAssertNil(builder.messages(for: entry(postData: multipart)).request.body)
        XCTAssertEqual(builder.messages(for: entry(postData: multipart)).request.notes, [.bodyUnknown])

        let announced = entry(requestHeaders: [HARHeader(name: "Content-Length", value: "12")])
        XCTAssertNil(builder.messages(for: announced).request.body, "Content-Length 12 without postData: unknown")
        let zero = entry(requestHeaders: [HARHeader(name: "Content-Length", value: "0")])
        XCTAssertEqual(builder.messages(for: zero).request.body, [])

        let gzipped = entry(
            requestHeaders: [HARHeader(name: "Content-Encoding", value: "gzip, br")],
            postData: HARPostData(mimeType: nil, text: [1, 2], encoding: "base64", params: []))
        XCTAssertEqual(builder.messages(for: gzipped).request.bodyCodings, ["gzip", "br"])
    }

    func testResponseBodies() {
        let builder = HARMessageBuilder(rule: .reportedSizes)
        let noText = builder.messages(for: entry(response: response(headers: [], bodySize: 10))).response
        XCTAssertNil(noText?.body)
        XCTAssertEqual(noText?.notes, [.bodyUnknown])
        XCTAssertEqual(builder.messages(for: entry(response: response(status: 304, headers: []))).response?.body, [])
        XCTAssertEqual(builder.messages(for: entry(response: response(headers: [], bodySize: 0))).response?.body, [])
        let cut = builder.messages(for: entry(response: response(headers: [], text: "ab", error: "net::ERR_ABORTED")))
            .response
        XCTAssertEqual(cut?.message.complete, false)
    }

    func testSizesBeyondATebibyteAreUnknownNotATrap() {
        let huge = Int.max // 2^63 - 1: headersSize + bodySize used to overflow
        let reported = HARMessageBuilder(rule: .reportedSizes).messages(
            for: entry(
                headersSize: huge, bodySize: huge,
                response: response(headers: [], headersSize: nil, bodySize: 2, text: "ok", transferSize: huge)))
        XCTAssertEqual(
            reported.request.wire, WireSize(line: nil, headers: nil, body: nil, total: nil, source: .unknown))
        // No postData while bodySize > 0: the body is unknown as well.
        XCTAssertEqual(reported.request.notes, [.bodyUnknown, .sizeOutOfRange])
        XCTAssertEqual(
            reported.response?.wire, WireSize(line: nil, headers: nil, body: 2, total: nil, source: .unknown))
        XCTAssertEqual(reported.response?.notes, [.sizeOutOfRange])

        // 2^40 itself is still a size: "POST /a/b?x=1 HTTP/1.1\r\n" 24, headers 100 - 24 = 76.
        let largest = HARMessageBuilder(rule: .reportedSizes).messages(for: entry(headersSize: 100, bodySize: 1 << 40))
        XCTAssertEqual(
            largest.request.wire, WireSize(line: 24, headers: 76, body: 1 << 40, total: 100 + (1 << 40), source: .har))

        // mitmproxy: the chunk framing and the head are added to bodySize (docs/HAR.md).
        let reconstructed = HARMessageBuilder(rule: .reconstructedHead).messages(
            for: entry(
                bodySize: 0,
                response: response(headers: [HARHeader(name: "Transfer-Encoding", value: "chunked")], bodySize: huge)))
        // Request: line 24, no fields → 2, body 0.
        XCTAssertEqual(
            reconstructed.request.wire, WireSize(line: 24, headers: 2, body: 0, total: 26, source: .reconstructed))
        // Response: "HTTP/1.1 200 OK\r\n" 17; "Transfer-Encoding: chunked\r\n" 28 + 2 = 30; body unknown.
        XCTAssertEqual(
            reconstructed.response?.wire, WireSize(line: 17, headers: 30, body: nil, total: nil, source: .unknown))
        XCTAssertEqual(reconstructed.response?.notes, [.bodyUnknown, .sizeOutOfRange])
    }

    func testTimesOutsideTheNanosecondRangeAreClamped() {
        // Int64.max ns = 9223372036 s + 854775807 ns; 9223372036 s = 106751 days + 85636 s
        // (23:47:16), and day 106751 after 1970-01-01 is 2262-04-11.
        XCTAssertEqual(ISO8601Time.parse("2262-04-11T23:47:16.854775807Z")?.nanoseconds, Int64.max)
        XCTAssertEqual(ISO8601Time.parse("2262-04-11T23:47:16.854775807Z")?.clamped, false)
        XCTAssertEqual(ISO8601Time.parse("2262-04-11T23:47:16.854775808Z")?.clamped, true)
        XCTAssertEqual(ISO8601Time.parse("9999-12-31T23:59:59Z")?.nanoseconds, Int64.max)
        XCTAssertEqual(ISO8601Time.parse("9999-12-31T23:59:59Z")?.clamped, true)
        XCTAssertEqual(ISO8601Time.parse("0000-01-01T00:00:00Z")?.nanoseconds, 0)
        XCTAssertEqual(ISO8601Time.parse("1969-12-31T23:59:59Z")?.clamped, true)
        XCTAssertEqual(ISO8601Time.parse("1970-01-01T00:00:00Z")?.clamped, false)

        var late = entry()
        late.startedDateTime = "9999-12-31T23:59:59Z"
        let built = HARMessageBuilder(rule: .reportedSizes).messages(for: late)
        XCTAssertEqual(built.request.source.time, Int64.max)
        XCTAssertTrue(built.request.notes.contains(.timeClamped))
    }

    func testRequestAndResponseNotesFromTheReaderReachTheirOwnRecords() {
        var noted = entry(response: response(headers: []))
        noted.request.unexpectedTypes = ["request.postData.params.value"]
        noted.response?.unexpectedTypes = ["response.content.mimeType"]
        let built = HARMessageBuilder(rule: .reportedSizes).messages(for: noted)
        XCTAssertEqual(built.request.notes, [.unexpectedType("request.postData.params.value")])
        XCTAssertEqual(built.response?.notes, [.unexpectedType("response.content.mimeType"), .bodyUnknown])
        XCTAssertEqual(built.request.notes.map(\.description), ["unexpected-type:request.postData.params.value"])
    }

    func testServerAddressGetsTheURLPortOrTheSchemeDefault() {
        XCTAssertEqual(HARURL("https://example.com/x").server(address: "::1"), "[::1]:443")
        XCTAssertEqual(HARURL("http://[::1]:8080/x").server(address: "[::1]"), "[::1]:8080")
        XCTAssertEqual(HARURL("http://user@127.0.0.1/x").server(address: "127.0.0.1"), "127.0.0.1:80")
        XCTAssertEqual(HARURL("wss://h:9443/").server(address: "10.0.0.1"), "10.0.0.1:9443")
        XCTAssertEqual(HARURL("http://h/").server(address: nil), "")
        XCTAssertEqual(HARURL("http://h").originForm, "/")
        XCTAssertEqual(HARURL("http://h/p?").originForm, "/p?")
    }

    /// The status line's digits are written in place: written out by hand for one digit, several,
    /// zero, a negative status and the smallest Int.
    func testStatusLinesSpellTheStatusAsItsDecimal() {
        let cases: [(Int, String)] = [
            (7, "HTTP/2 7 OK"), (200, "HTTP/2 200 OK"), (0, "HTTP/2 0 OK"), (-1, "HTTP/2 -1 OK"),
            (-404, "HTTP/2 -404 OK"), (Int.min, "HTTP/2 -9223372036854775808 OK"),
        ]
        for (status, expected) in cases {
            XCTAssertEqual(HARMessageBuilder.statusLine("HTTP/2", status, "OK"), Array(expected.utf8))
        }
    }

    func testISO8601Times() {
        // 1970-01-02T00:00:00Z = 86400 s; +01:00 means an hour earlier in UTC.
        XCTAssertEqual(ISO8601Time.nanoseconds("1970-01-02T00:00:00Z"), 86_400_000_000_000)
        XCTAssertEqual(ISO8601Time.nanoseconds("1970-01-02T01:00:00.5+01:00"), 86_400_500_000_000)
        XCTAssertEqual(ISO8601Time.nanoseconds("1970-01-02T00:00:00.123456789-0130"), 91_800_123_456_789)
        // 2000-03-01 is day 11017 (leap year 2000: Feb has 29 days).
        XCTAssertEqual(ISO8601Time.nanoseconds("2000-03-01T00:00:00Z"), 11_017 * 86_400 * 1_000_000_000)
        XCTAssertNil(ISO8601Time.nanoseconds("yesterday"))
        XCTAssertNil(ISO8601Time.nanoseconds("2024-13-01T00:00:00Z"))
        XCTAssertNil(ISO8601Time.nanoseconds("2024-01-01T00:00:00Zjunk"))
    }
}
